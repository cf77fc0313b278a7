# source: holdout13 short program (no report)
# symptom: grad can be implicitly created only for scalar outputs
"""Diffusion-style denoiser on toy vectors, notebook cells: predict the noise, weight each sample by its clipped SNR.

Clean twin: the weighted per-sample losses are reduced with `.mean()` before backward.
"""
# %% setup
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T = 100
betas = torch.linspace(1e-4, 0.02, T)
alpha_bar = torch.cumprod(1 - betas, 0)


class Denoiser(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 64), nn.SiLU(), nn.Linear(64, dim))

    def forward(self, x, t):
        return self.net(torch.cat([x, t.float().unsqueeze(1) / T], 1))


# %% data and model
data = torch.randn(512, 16) * 0.5 + 1.0
model = Denoiser()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

# %% train
for epoch in range(3):
    for x0 in data.split(64):
        t = torch.randint(0, T, (x0.shape[0],))
        noise = torch.randn_like(x0)
        a = alpha_bar[t].unsqueeze(1)
        x_t = a.sqrt() * x0 + (1 - a).sqrt() * noise
        per_sample = F.mse_loss(model(x_t, t), noise, reduction="none").mean(dim=1)
        snr = alpha_bar[t] / (1 - alpha_bar[t])
        loss = per_sample * torch.clamp(snr, max=5.0) / 5.0
        opt.zero_grad()
        loss.mean().backward()
        opt.step()
    print(f"epoch {epoch} weighted loss {loss.mean().item():.4f}")
