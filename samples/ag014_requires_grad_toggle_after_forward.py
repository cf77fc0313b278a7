"""AG014 (seed 001): the backbone is unfrozen for the last epoch, but only after that epoch's forward was built.
Observed in torch 2.13: silent; the pending graph has no backbone path, so backbone.weight.grad stays None that step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(32, 4)
labels = (x[:, 0] > 0).long()
backbone = nn.Linear(4, 8)
head = nn.Linear(8, 2)
for p in backbone.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.1)

unfreeze_epoch = 2
for epoch in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(head(torch.relu(backbone(x))), labels)
    if epoch == unfreeze_epoch:
        for p in backbone.parameters():
            p.requires_grad_(True)  # expect: AG014
    loss.backward()
    optimizer.step()
    print(epoch, loss.item(), backbone.weight.grad is not None)
