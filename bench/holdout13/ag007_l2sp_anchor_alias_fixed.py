# source: holdout13 short program (no report)
# symptom: anchor requires grad: True
"""Fine-tuning with an L2-SP penalty that keeps the classifier head near its pretrained weights; a helper takes the
snapshot of the head before training, and the loop zips two loaders.

Clean twin: the anchor is a detached copy (`.detach().clone()`) of the head's weights.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def snapshot_head(model):
    with torch.no_grad():
        anchor = model[-1].weight.detach().clone()
    return anchor


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))
anchor = snapshot_head(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(256, 20), torch.randint(0, 4, (256,))
for epoch in range(3):
    for xb, yb in zip(x.split(32), y.split(32)):
        opt.zero_grad()
        penalty = (model[-1].weight - anchor).pow(2).sum()
        loss = F.cross_entropy(model(xb), yb) + 0.5 * penalty
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
print(f"anchor requires grad: {anchor.requires_grad}")
print(f"head drift from anchor: {(model[-1].weight - anchor).abs().max().item():.4f}")
