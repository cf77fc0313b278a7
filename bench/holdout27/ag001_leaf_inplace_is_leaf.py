# source: https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297 (pattern: forum post tries in-place updates (+=, add_, c[:] +=) directly on a randn leaf created with requires_grad=True)
# symptom: a (view of a )?leaf Variable that requires grad is being used in an in-place operation
"""Poster's experiment: which in-place updates of a requires_grad leaf does autograd accept?"""
import torch

torch.manual_seed(0)

c = torch.randn(10, 3, 2, 32, requires_grad=True)
print("is_leaf before:", c.is_leaf)

# operation 1: augmented assignment on the leaf
try:
    c += 1  # expect: AG001
except RuntimeError as err:
    print("op1:", err)

# operation 3: the explicit in-place method
try:
    c.add_(1)  # expect: AG001
except RuntimeError as err:
    print("op3:", err)

# operation 6: in-place through an indexed view of the leaf
try:
    c[:] += 1  # expect: AG001
except RuntimeError as err:
    print("op6:", err)

print("is_leaf after:", c.is_leaf)
