import torch

bias = torch.zeros(3, requires_grad=True)
bias += 0.5  # audit-expect: AG001
print(bias)
