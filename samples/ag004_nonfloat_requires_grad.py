"""AG004 (seed 003): arange with int arguments gives an int64 tensor, which cannot require grad.
Observed in torch 2.13: RuntimeError: only Tensors of floating point dtype can require gradients."""
import torch

e = torch.arange(1, 5).view(2, 2)
print(e, e.grad_fn, e.requires_grad)

e = e * 3
print(e, e.grad_fn, e.requires_grad)

e.requires_grad_(True)  # expect: AG004
out = (e * e).sum()
out.backward()
print(e.grad)
