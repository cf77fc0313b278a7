import torch

counts = torch.arange(5, dtype=torch.float32)
counts.requires_grad_()
print(counts.sum())
