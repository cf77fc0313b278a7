import torch

counts = torch.arange(5)
counts.requires_grad_()  # audit-expect: AG004
print(counts.sum())
