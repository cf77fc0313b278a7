# source: written for bench/holdout5 (short training program, 1-D GAN learning a Gaussian, module-level loop)
# symptom: backward through the graph a second time|modified by an inplace operation
import torch
from torch import nn

torch.manual_seed(31)

G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
D = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
ones = torch.ones(64, 1)
zeros = torch.zeros(64, 1)

for it in range(60):
    real = 3.0 + 0.5 * torch.randn(64, 1)
    fake = G(torch.randn(64, 4))

    opt_d.zero_grad()
    d_loss = bce(D(real), ones) + bce(D(fake), zeros)  # expect: AG017
    d_loss.backward()
    opt_d.step()

    opt_g.zero_grad()
    g_loss = bce(D(fake), ones)
    g_loss.backward()
    opt_g.step()
    if it % 20 == 0:
        print(f"iter {it}: d {d_loss.item():.3f} g {g_loss.item():.3f}")

with torch.no_grad():
    samples = G(torch.randn(1000, 4))
print(f"generated mean {samples.mean().item():.2f} std {samples.std().item():.2f}")
