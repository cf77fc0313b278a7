# source: written for bench/holdout17 from RULES.md AG011 (time-series dataset class builds its normalised time index with torch.range)
# symptom: torch.range is deprecated
"""Seasonal regression with time features from a Dataset class and a DataLoader."""
import math
import torch
from torch.utils.data import DataLoader, Dataset


class SeasonalDataset(Dataset):
    def __init__(self, length=200, period=24):
        t = torch.arange(0, length, dtype=torch.float32) / period
        self.x = torch.stack([torch.sin(2 * math.pi * t), torch.cos(2 * math.pi * t), t / t.max()], dim=1)
        self.y = (2 * self.x[:, 0] + 0.5 * self.x[:, 2] + 0.1 * torch.randn(length)).unsqueeze(1)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


torch.manual_seed(0)
ds = SeasonalDataset()
assert len(ds) == 200
loader = DataLoader(ds, batch_size=32, shuffle=True)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for xb, yb in loader:
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("epoch", epoch, round(loss.item(), 4))
