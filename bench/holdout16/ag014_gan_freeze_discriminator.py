# source: written for bench/holdout16 from RULES.md AG014 (GAN generator step freezes the discriminator with requires_grad_(False) after scoring the fakes, then the critic is weight-clipped in place before backward)
# symptom: modified by an inplace operation
"""GAN on 1-D mixture data: the discriminator is frozen for the generator step and kept Lipschitz by clipping."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
D = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)


def set_requires_grad(net, flag):
    for p in net.parameters():
        p.requires_grad_(flag)


for it in range(4):
    real = torch.cat([torch.randn(32, 1) - 2, torch.randn(32, 1) + 2])
    z = torch.randn(64, 2)

    set_requires_grad(D, True)
    opt_d.zero_grad()
    fake = G(z)
    d_loss = F.softplus(D(fake.detach())).mean() + F.softplus(-D(real)).mean()
    d_loss.backward()
    opt_d.step()

    opt_g.zero_grad()
    g_loss = F.softplus(-D(fake)).mean()
    set_requires_grad(D, False)  # expect: AG014
    for p in D.parameters():
        if not p.requires_grad:
            p.clamp_(-0.5, 0.5)
    g_loss.backward()
    opt_g.step()
    print(f"it {it} d {d_loss.item():.4f} g {g_loss.item():.4f}")
