"""AG013 (seed 003): `torch.tensor[[...]]` subscripts the factory function instead of calling it.
Observed in torch 2.13: TypeError: 'builtin_function_or_method' object is not subscriptable."""
import torch

g = torch.tensor([1, 2, 3, 4, 5, 6], dtype=torch.float, requires_grad=True)
print(g, type(g), g.size(0), g.grad_fn, g.requires_grad)
h = g.view(3, 2)
h = h * 2
print(h, h.size(0), h.grad_fn, h.requires_grad)
h.backward(torch.tensor[[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])  # expect: AG013
print(g.grad)
