# source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/issues/55
# symptom: gradient matches the forward's x: False
# Dive-into-DL-PyTorch 2.3 says changing tensor.data "is not recorded in the graph, so it does not affect
# backpropagation"; the reader changes x.data *= 100 after y = 2 * x * x was built and before y.backward(), and
# x.grad changes: the multiplications saved x, so backward reads the new value (202 instead of 4, no error).
import torch

x = torch.ones(1, requires_grad=True)
print(x.data)
print(x.data.requires_grad)
y = 2 * x * x
x_used = x.detach().clone()
x.data *= 100  # expect: AG008
y.backward()
print(x)
print(x.grad)
print("gradient matches the forward's x:", bool(torch.allclose(x.grad, 4 * x_used)))
