# source: written for holdout28 (pattern: scheduler helper precomputes a warm-up + cosine learning-rate table over torch.range(0, total_steps - 1) and drives LambdaLR from it)
# symptom: torch\.range is deprecated
"""Linear warm-up followed by cosine decay, precomputed as a table.

The table is looked up by LambdaLR at every optimizer step.
"""
import math

import torch
import torch.nn as nn


def build_lr_table(total_steps, warmup_steps, min_ratio=0.05):
    steps = torch.range(0, total_steps - 1)  # expect: AG011
    warm = steps / max(1, warmup_steps)
    progress = (steps - warmup_steps).clamp(min=0) / max(1, total_steps - warmup_steps)
    cosine = min_ratio + (1 - min_ratio) * 0.5 * (1 + torch.cos(math.pi * progress))
    return torch.where(steps < warmup_steps, warm, cosine)


class Trainer:
    def __init__(self, model, total_steps, warmup_steps=10):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
        table = build_lr_table(total_steps, warmup_steps)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda s: float(table[min(s, len(table) - 1)]))

    def step(self, x, y):
        loss = nn.functional.mse_loss(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.sched.step()
        return loss.item()


def main():
    torch.manual_seed(0)
    x = torch.randn(320, 5)
    y = (x ** 2).sum(1, keepdim=True)
    epochs, batch = 4, 32
    total = epochs * (len(x) // batch)
    trainer = Trainer(nn.Sequential(nn.Linear(5, 64), nn.ReLU(), nn.Linear(64, 1)), total)
    for epoch in range(epochs):
        for i in range(0, len(x), batch):
            loss = trainer.step(x[i:i + batch], y[i:i + batch])
        print(f"epoch {epoch} loss {loss:.3f} lr {trainer.sched.get_last_lr()[0]:.5f}")


if __name__ == "__main__":
    main()
