import torch

scores = torch.empty(4)
scores[:2] = 1.0
scores[2:] = 0.0
print("total", scores.sum().item())
