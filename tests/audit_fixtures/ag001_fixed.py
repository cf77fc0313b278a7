import torch

bias = torch.zeros(3, requires_grad=True)
with torch.no_grad():
    bias += 0.5
print(bias)
