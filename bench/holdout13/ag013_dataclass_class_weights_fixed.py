# source: holdout13 short program (no report)
# symptom: object is not subscriptable
"""Imbalanced text classification (mean-pooled embeddings) with class weights in an `@dataclass` training config.

Clean twin: the class weights are built with `torch.tensor([...])`.
"""
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TrainConfig:
    vocab: int = 50
    dim: int = 16
    n_classes: int = 3
    lr: float = 0.05
    epochs: int = 3
    class_weights: torch.Tensor = field(default_factory=lambda: torch.tensor([1.0, 2.5, 0.7]))


def build(cfg):
    model = nn.Sequential(nn.EmbeddingBag(cfg.vocab, cfg.dim), nn.Linear(cfg.dim, cfg.n_classes))
    return model, torch.optim.SGD(model.parameters(), lr=cfg.lr)


torch.manual_seed(0)
cfg = TrainConfig()
model, opt = build(cfg)
tokens = torch.randint(0, cfg.vocab, (120, 10))
labels = torch.multinomial(torch.tensor([0.6, 0.1, 0.3]), 120, replacement=True)
for epoch in range(cfg.epochs):
    for xb, yb in zip(tokens.split(24), labels.split(24)):
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb, weight=cfg.class_weights)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
