"""AG005 fixed: sum first (each y[i] depends only on x[i]), so the backward starts from a scalar.
Observed in torch 2.13: runs clean; x.grad == cos(x) * x + sin(x)."""
import torch

x = torch.linspace(-2.0, 2.0, steps=9, requires_grad=True)
y = torch.sin(x) * x
y.sum().backward()
dydx = x.grad
expected = torch.cos(x) * x + torch.sin(x)
print(dydx, torch.allclose(dydx, expected))
