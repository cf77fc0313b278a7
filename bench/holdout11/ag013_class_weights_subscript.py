# source: holdout11 short program (no report)
# symptom: is not subscriptable
"""Imbalanced-classification trainer class; the class weights are written as torch.FloatTensor[...] in __init__."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from dataclasses import dataclass

torch.manual_seed(0)


@dataclass
class TrainConfig:
    epochs: int = 3
    lr: float = 1e-3
    batch_size: int = 32


class ImbalancedTrainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        self.class_weights = torch.FloatTensor[1.0, 4.0, 9.0]  # expect: AG013

    def run_epoch(self, X, y):
        total = 0.0
        for i in range(0, len(X), self.cfg.batch_size):
            xb, yb = X[i:i + self.cfg.batch_size], y[i:i + self.cfg.batch_size]
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(xb), yb, weight=self.class_weights)
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total


X = torch.randn(256, 6)
y = torch.multinomial(torch.tensor([0.75, 0.2, 0.05]), 256, replacement=True)
trainer = ImbalancedTrainer(nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 3)), TrainConfig())
for epoch in range(trainer.cfg.epochs):
    print(f"epoch {epoch} loss {trainer.run_epoch(X, y):.3f}")
