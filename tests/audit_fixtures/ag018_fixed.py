import torch

encoder = torch.nn.Linear(3, 3)
for p in encoder.parameters():
    p.requires_grad = False
print(all(p.requires_grad for p in encoder.parameters()))
