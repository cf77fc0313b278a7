# source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/issues/126 (pattern: notebook builds y = x ** 2, then scales x.data *= 100 before y.backward(); PowBackward uses the edited x and the gradient comes out 100x too large)
# symptom: wrong gradient: True
"""Dive-into-DL 2.3.3: "changing x.data is not recorded, so it does not affect backprop"?"""
import torch

x = torch.ones(1, requires_grad=True)

print(x.data)                # still a tensor
print(x.data.requires_grad)  # but outside the graph

y = x ** 2
x.data *= 100  # expect: AG008

y.backward()
print(x)       # the value change shows in x
print(x.grad)  # the gradient of x ** 2 at the x the forward used (1.0) is 2.0

expected = 2.0 * 1.0
print("wrong gradient:", abs(x.grad.item() - expected) > 1e-6)
