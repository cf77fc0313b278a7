# source: https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297 (pattern: forum post tries in-place updates (+=, add_, c[:] +=) directly on a randn leaf created with requires_grad=True)
# symptom: a (view of a )?leaf Variable that requires grad is being used in an in-place operation
"""Poster's experiment: which in-place updates of a requires_grad leaf does autograd accept?

Fixed: the value shifts are not meant to be differentiated, so they run under torch.no_grad().
"""
import torch

torch.manual_seed(0)

c = torch.randn(10, 3, 2, 32, requires_grad=True)
print("is_leaf before:", c.is_leaf)

with torch.no_grad():
    c += 1
    c.add_(1)
    c[:] += 1

print("is_leaf after:", c.is_leaf, "mean:", round(c.detach().mean().item(), 3))
