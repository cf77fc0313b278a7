# source: written for holdout25 (pattern: DDPM-style toy script builds its timestep grid with torch.range for the sinusoidal embedding)
# symptom: torch\.range is deprecated
"""Denoising diffusion on 1-D mixture data with a sinusoidal timestep embedding."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

T = 50
betas = torch.linspace(1e-4, 0.05, T)
alphas_bar = torch.cumprod(1 - betas, dim=0)


def timestep_embedding(t, dim=16):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half) / half)
    args = t.float().unsqueeze(1) * freqs.unsqueeze(0)
    return torch.cat([torch.sin(args), torch.cos(args)], dim=1)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1 + 16, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU(), nn.Linear(64, 1))

    def forward(self, x, t):
        return self.net(torch.cat([x, timestep_embedding(t)], dim=1))


def sample_data(n):
    comp = torch.randint(0, 2, (n, 1)).float()
    return comp * 2.0 - 1.0 + 0.1 * torch.randn(n, 1)


torch.manual_seed(0)
model = Denoiser()
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
all_steps = torch.range(0, T - 1).long()  # expect: AG011
for it in range(100):
    x0 = sample_data(128)
    t = all_steps[torch.randint(0, T, (128,))]
    noise = torch.randn_like(x0)
    a = alphas_bar[t].unsqueeze(1)
    xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
    loss = F.mse_loss(model(xt, t), noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("denoising loss", round(loss.item(), 4))
