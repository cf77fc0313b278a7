# source: https://github.com/pytorch/pytorch/issues/40264
# symptom: [Oo]nly Tensors of floating point( and complex)? dtype can require gradients
# The report: x.long().requires_grad_() raises, while x.requires_grad_().long() silently does not.
# Re-created where it bites: a helper that quantises weights to integer levels and asks for their gradient.
import torch
import torch.nn as nn


def quantize_levels(w, scale=0.05):
    """Integer quantisation levels of a weight tensor."""
    return torch.round(w / scale).long()


torch.manual_seed(0)
layer = nn.Linear(3, 3)
x = torch.rand(3, 3)
levels = quantize_levels(layer.weight.detach())
q = levels.requires_grad_()  # expect: AG004
out = (x @ (q.float() * 0.05)).sum()
out.backward()
print(q.grad)
