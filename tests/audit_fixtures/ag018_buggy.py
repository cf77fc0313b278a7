import torch

encoder = torch.nn.Linear(3, 3)
for p in encoder.parameters():
    p.require_grad = False  # audit-expect: AG018
print(all(p.requires_grad for p in encoder.parameters()))
