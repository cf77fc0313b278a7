# source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/issues/126 (pattern: notebook builds y = x ** 2, then scales x.data *= 100 before y.backward(); PowBackward uses the edited x and the gradient comes out 100x too large)
# symptom: wrong gradient: True
"""Dive-into-DL 2.3.3: change x's value without autograd recording it.

Fixed: the value change is made under torch.no_grad() after the backward of the graph that used x,
so the gradient is computed from the x the forward saw.
"""
import torch

x = torch.ones(1, requires_grad=True)

y = x ** 2
y.backward()

with torch.no_grad():
    x *= 100

print(x)
print(x.grad)

expected = 2.0 * 1.0
print("wrong gradient:", abs(x.grad.item() - expected) > 1e-6)
