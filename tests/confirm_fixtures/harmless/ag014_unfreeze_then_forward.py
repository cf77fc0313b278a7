"""Unfreezing a layer after a forward, then running a new forward before backward(): the layer gets its gradient."""
import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Linear(4, 4)
head = nn.Linear(4, 1)
backbone.weight.requires_grad_(False)
x = torch.randn(8, 4)
warmup = head(backbone(x)).mean()
backbone.weight.requires_grad_(True)  # harmless: AG014
loss = head(backbone(x)).mean()
loss.backward()
print(backbone.weight.grad.abs().sum().item(), warmup.item())
