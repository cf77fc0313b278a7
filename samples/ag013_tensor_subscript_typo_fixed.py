"""AG013 fixed: call the factory, `torch.tensor([[...]])`.
Observed in torch 2.13: runs clean; g.grad is all 2s."""
import torch

g = torch.tensor([1, 2, 3, 4, 5, 6], dtype=torch.float, requires_grad=True)
print(g, type(g), g.size(0), g.grad_fn, g.requires_grad)
h = g.view(3, 2)
h = h * 2
print(h, h.size(0), h.grad_fn, h.requires_grad)
h.backward(torch.tensor([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]))
print(g.grad)
