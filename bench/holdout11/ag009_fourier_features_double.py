# source: holdout11 short program (no report)
# symptom: same dtype
"""Fourier-feature network fitted in float64: the random projection matrix is a plain tensor attribute, so .double() leaves it in float32."""
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class FourierFeatures(nn.Module):
    def __init__(self, d_in, n_freq=16, scale=4.0):
        super().__init__()
        self.B = torch.randn(d_in, n_freq) * scale  # expect: AG009

    def forward(self, x):
        proj = 2 * math.pi * x @ self.B
        return torch.cat([proj.sin(), proj.cos()], dim=-1)


class FourierNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = FourierFeatures(2)
        self.mlp = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        return self.mlp(self.features(x))


model = FourierNet().double()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
coords = torch.rand(256, 2, dtype=torch.float64)
target = torch.sin(6 * coords[:, :1]) * torch.cos(4 * coords[:, 1:])
for it in range(30):
    optimizer.zero_grad()
    loss = (model(coords) - target).pow(2).mean()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.6f}")
