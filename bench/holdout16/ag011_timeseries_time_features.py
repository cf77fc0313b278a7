# source: written for bench/holdout16 from RULES.md AG011 (Dataset builds its time index with torch.range)
# symptom: torch\.range is deprecated
"""Sinusoidal time features for an hourly energy-load dataset, with a small MLP regressor."""
import math
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class HourlyLoad(Dataset):
    def __init__(self, n_hours=240):
        hours = torch.range(0, n_hours - 1)  # expect: AG011
        self.x = torch.stack([torch.sin(2 * math.pi * hours / 24), torch.cos(2 * math.pi * hours / 24),
                              torch.sin(2 * math.pi * hours / 168), torch.cos(2 * math.pi * hours / 168)], 1)
        self.y = 10 + 3 * self.x[:, 0] + self.x[:, 2] + 0.2 * torch.randn(n_hours)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


loader = DataLoader(HourlyLoad(), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xb).squeeze(-1), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
