"""AG004 fixed: `.float()` before scaling, so the tensor is float32 and may require grad.
Observed in torch 2.13: runs clean; e.grad == 2 * e."""
import torch

e = torch.arange(1, 5).view(2, 2).float()
print(e, e.grad_fn, e.requires_grad)

e = e * 3
print(e, e.grad_fn, e.requires_grad)

e.requires_grad_(True)
out = (e * e).sum()
out.backward()
print(e.grad)
