# source: holdout11 short program (no report)
# symptom: backbone grad is None: True
"""Staged fine-tuning: the frozen backbone is unfrozen at a given epoch, but the switch happens after the first batch's forward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

backbone = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
head = nn.Linear(32, 4)
for p in backbone.parameters():
    p.requires_grad = False
optimizer = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.05)
UNFREEZE_AT = 2

X, y = torch.randn(128, 12), torch.randint(0, 4, (128,))
for epoch in range(4):
    for i in range(0, 128, 32):
        optimizer.zero_grad()
        logits = head(backbone(X[i:i + 32]))
        loss = F.cross_entropy(logits, y[i:i + 32])
        if epoch == UNFREEZE_AT and i == 0:
            for p in backbone.parameters():
                p.requires_grad = True  # expect: AG014
        loss.backward()
        if epoch == UNFREEZE_AT and i == 0:
            print("backbone grad is None:", backbone[0].weight.grad is None)
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
