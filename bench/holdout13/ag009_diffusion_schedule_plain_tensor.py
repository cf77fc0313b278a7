# source: holdout13 short program (no report)
# symptom: schedule saved in checkpoint: False
"""Diffusion-style denoiser that owns its noise schedule; trained briefly, checkpointed with `state_dict()` and
reloaded into a fresh model for sampling."""
import io

import torch
import torch.nn as nn
import torch.nn.functional as F


class ScheduledDenoiser(nn.Module):
    def __init__(self, dim=8, timesteps=50):
        super().__init__()
        self.betas = torch.linspace(1e-4, 0.05, timesteps)  # expect: AG009
        self.net = nn.Sequential(nn.Linear(dim + 1, 64), nn.SiLU(), nn.Linear(64, dim))

    def alpha_bar(self, t):
        return torch.cumprod(1 - self.betas, 0)[t]

    def forward(self, x_t, t):
        return self.net(torch.cat([x_t, t.float().unsqueeze(1) / len(self.betas)], 1))


torch.manual_seed(0)
model = ScheduledDenoiser()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
data = torch.randn(256, 8) + 2.0
for epoch in range(3):
    for x0 in data.split(32):
        t = torch.randint(0, len(model.betas), (x0.shape[0],))
        a = model.alpha_bar(t).unsqueeze(1)
        noise = torch.randn_like(x0)
        loss = F.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t), noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
checkpoint = torch.load(buf)
sampler = ScheduledDenoiser()
sampler.load_state_dict(checkpoint)
print(f"loss {loss.item():.4f}")
print(f"schedule saved in checkpoint: {'betas' in checkpoint}")
