import torch
import torch.nn as nn

backbone, head = nn.Linear(3, 3), nn.Linear(3, 1)
for p in backbone.parameters():
    p.requires_grad = False
for p in backbone.parameters():
    p.requires_grad = True
x = torch.randn(4, 3)
out = head(backbone(x))
out.sum().backward()
print(backbone.weight.grad)
