# source: holdout11 short program (no report)
# symptom: generator grad matches this step's: False
"""GAN on 2-D points: each optimizer is zeroed before its own backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
g_opt = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
d_opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))


def real_batch(n=64):
    angle = torch.rand(n) * 6.2832
    return torch.stack([angle.cos(), angle.sin()], dim=1) + 0.05 * torch.randn(n, 2)


def g_loss_fn(z):
    logits = D(G(z))
    return F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))


matches = []
for it in range(20):
    real = real_batch()
    z = torch.randn(64, 4)
    fake = G(z)
    d_real, d_fake = D(real), D(fake.detach())
    d_loss = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + \
        F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()

    g_opt.zero_grad()
    g_loss = g_loss_fn(z)
    g_loss.backward()
    expected = torch.autograd.grad(g_loss_fn(z), G[0].weight)[0]
    matches.append(torch.allclose(G[0].weight.grad, expected))
    g_opt.step()
    if it % 5 == 0:
        print(f"it {it} d {d_loss.item():.3f} g {g_loss.item():.3f}")
print("generator grad matches this step's:", all(matches))
