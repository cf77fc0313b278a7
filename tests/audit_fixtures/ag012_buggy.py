import torch

scores = torch.empty(4)  # audit-expect: AG012
scores[:2] = 1.0
print("total", scores.sum().item())
