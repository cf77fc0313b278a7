"""AG014 fixed: the backbone is unfrozen at the top of the epoch, before the forward builds the graph.
Observed in torch 2.13: runs clean; the backbone gets gradients in the epoch it is unfrozen."""
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
    if epoch == unfreeze_epoch:
        for p in backbone.parameters():
            p.requires_grad_(True)
    optimizer.zero_grad()
    loss = F.cross_entropy(head(torch.relu(backbone(x))), labels)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item(), backbone.weight.grad is not None)
