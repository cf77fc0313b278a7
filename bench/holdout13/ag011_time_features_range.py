# source: holdout13 short program (no report)
# symptom: torch\.range is deprecated
"""Hourly load forecasting with calendar features (sin/cos of the hour) built by a helper; the loop is a
`train_one_epoch(model, loader, opt)` function."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def time_features(length, period=24):
    t = torch.range(0, length - 1)  # expect: AG011
    return torch.stack([torch.sin(2 * math.pi * t / period), torch.cos(2 * math.pi * t / period)], dim=1)


def train_one_epoch(model, loader, opt):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    return total / len(loader)


torch.manual_seed(0)
n = 24 * 30
feats = time_features(n)
load = 1.0 + feats[:, 0] * 0.5 + 0.1 * torch.randn(n)
x = torch.cat([feats[1:], load[:-1].unsqueeze(1)], 1)
y = load[1:].unsqueeze(1)
loader = list(zip(x.split(48), y.split(48)))
model = nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    print(f"epoch {epoch} mse {train_one_epoch(model, loader, opt):.4f}")
