# source: holdout13 short program (no report)
# symptom: backbone grad is None at unfreeze step: True
"""Gradual unfreezing in a trainer class: the backbone starts frozen and `maybe_unfreeze()` releases it at a given
step; `train_step` calls the loss method, the unfreeze method and backward in turn."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FineTuner:
    def __init__(self, unfreeze_at=3):
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.head = nn.Linear(32, 2)
        for p in self.backbone.parameters():
            p.requires_grad = False
        self.opt = torch.optim.SGD([*self.backbone.parameters(), *self.head.parameters()], lr=0.1)
        self.unfreeze_at = unfreeze_at
        self.step_count = 0

    def forward_loss(self, x, y):
        return F.cross_entropy(self.head(self.backbone(x)), y)

    def maybe_unfreeze(self):
        if self.step_count == self.unfreeze_at:
            for p in self.backbone.parameters():
                p.requires_grad = True  # expect: AG014

    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = self.forward_loss(x, y)
        self.maybe_unfreeze()
        loss.backward()
        if self.step_count == self.unfreeze_at:
            print(f"backbone grad is None at unfreeze step: {self.backbone[0].weight.grad is None}")
        self.opt.step()
        self.step_count += 1
        return loss.item()


torch.manual_seed(0)
x, y = torch.randn(160, 10), (torch.randn(160) > 0).long()
tuner = FineTuner()
for epoch in range(2):
    for xb, yb in zip(x.split(32), y.split(32)):
        last = tuner.train_step(xb, yb)
    print(f"epoch {epoch} loss {last:.4f}")
