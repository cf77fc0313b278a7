import torch

x = torch.randn(4, requires_grad=True)
y = torch.exp(x)
y[0] = 0.0  # audit-expect: AG006
y.sum().backward()
