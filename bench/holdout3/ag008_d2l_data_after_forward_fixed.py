# source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/issues/55
# symptom: gradient matches the forward's x: False
# Clean twin: the value is changed before the forward, without .data (torch.no_grad()), so backward sees the
# values the forward used.
import torch

x = torch.ones(1, requires_grad=True)
print(x.data)
print(x.data.requires_grad)
with torch.no_grad():
    x *= 100
y = 2 * x * x
x_used = x.detach().clone()
y.backward()
print(x)
print(x.grad)
print("gradient matches the forward's x:", bool(torch.allclose(x.grad, 4 * x_used)))
