# source: holdout13 short program (no report)
# symptom: torch\.range is deprecated
"""Denoising score matching on 2-D points with a geometric ladder of noise levels; the levels live in an
`@dataclass` config.

Clean twin: the levels are `torch.arange(1, 11)` (the same values as the inclusive range).
"""
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class NoiseConfig:
    sigma_min: float = 0.05
    sigma_max: float = 1.0
    levels: torch.Tensor = field(default_factory=lambda: torch.arange(1, 11))
    lr: float = 2e-3

    def sigmas(self):
        frac = (self.levels - 1) / (len(self.levels) - 1)
        return self.sigma_max * (self.sigma_min / self.sigma_max) ** frac


torch.manual_seed(0)
cfg = NoiseConfig()
sigmas = cfg.sigmas()
score_net = nn.Sequential(nn.Linear(3, 64), nn.Softplus(), nn.Linear(64, 2))
opt = torch.optim.Adam(score_net.parameters(), lr=cfg.lr)
data = torch.randn(512, 2) * torch.tensor([1.0, 0.3])
for epoch in range(3):
    for xb in data.split(64):
        sigma = sigmas[torch.randint(0, len(sigmas), (xb.shape[0],))].unsqueeze(1)
        noise = torch.randn_like(xb)
        score = score_net(torch.cat([xb + sigma * noise, sigma], 1))
        loss = ((sigma * score + noise) ** 2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} dsm loss {loss.item():.4f}")
