# source: written for bench/holdout17 from RULES.md AG007 (multi-horizon forecaster: the long-horizon head's outputs are unpacked as targets under no_grad for a consistency loss on the short head)
# symptom: consistency targets require grad: True
"""Two-head forecaster (1-step and 4-step) on random walks; the 4-step head's first step teaches the 1-step head."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Forecaster(nn.Module):
    def __init__(self, lookback=24):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(lookback, 64), nn.GELU())
        self.short = nn.Linear(64, 1)
        self.long = nn.Linear(64, 4)

    def forward(self, x):
        h = self.body(x)
        long = self.long(h)
        return self.short(h), long[:, :1], long[:, 1:]


def make_batch(n=32, lookback=24):
    walk = torch.cumsum(torch.randn(n, lookback + 4), dim=1)
    return walk[:, :lookback], walk[:, lookback:]


torch.manual_seed(0)
model = Forecaster()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=20)
seen = []
for step in range(20):
    x, y = make_batch()
    short, long_first, long_rest = model(x)
    with torch.no_grad():
        target_short, target_rest = long_first.detach(), long_rest.detach()
    seen.append(target_short.requires_grad)
    loss = F.mse_loss(short, y[:, :1]) + F.mse_loss(torch.cat([long_first, long_rest], 1), y) + 0.1 * F.mse_loss(short, target_short)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
print("last loss", round(loss.item(), 3))
print("consistency targets require grad:", any(seen))
