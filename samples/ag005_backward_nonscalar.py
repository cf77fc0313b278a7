"""AG005: calling .backward() on a vector to get a derivative at every grid point.
Observed in torch 2.13: RuntimeError: grad can be implicitly created only for scalar outputs."""
import torch

x = torch.linspace(-2.0, 2.0, steps=9, requires_grad=True)
y = torch.sin(x) * x
y.backward()  # expect: AG005
dydx = x.grad
expected = torch.cos(x) * x + torch.sin(x)
print(dydx, torch.allclose(dydx, expected))
