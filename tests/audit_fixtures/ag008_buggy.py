import torch

x = torch.randn(5, requires_grad=True)
y = torch.sigmoid(x)
y.data.mul_(2.0)  # audit-expect: AG008
y.sum().backward()
print(x.grad)
