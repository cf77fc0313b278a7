# source: written for bench/holdout17 from RULES.md AG014 (WGAN generator step: the critic is frozen after the generator's forward through it, then its weights are clipped in place before the generator's backward)
# symptom: modified by an inplace operation
"""WGAN on 2-D ring data; the critic is frozen for the generator update."""
import math
import torch
import torch.nn as nn

torch.manual_seed(0)
gen = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
critic = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
g_opt = torch.optim.RMSprop(gen.parameters(), lr=1e-4)
c_opt = torch.optim.RMSprop(critic.parameters(), lr=1e-4)


def ring(n):
    a = torch.rand(n) * 2 * math.pi
    return torch.stack([a.cos(), a.sin()], 1) + 0.05 * torch.randn(n, 2)


for it in range(4):
    for p in critic.parameters():
        p.requires_grad_(True)
    real, fake = ring(64), gen(torch.randn(64, 4)).detach()
    c_loss = critic(fake).mean() - critic(real).mean()
    c_opt.zero_grad()
    c_loss.backward()
    c_opt.step()

    g_score = critic(gen(torch.randn(64, 4))).mean()
    for p in critic.parameters():
        p.requires_grad_(False)  # expect: AG014
        p.clamp_(-0.05, 0.05)
    g_opt.zero_grad()
    (-g_score).backward()
    g_opt.step()
    print("iter", it, "critic", round(c_loss.item(), 4))
