import torch

positions = torch.arange(0, 5)
print(positions)
