# source: written for holdout28 (pattern: GAN script allocates the fixed monitoring noise with torch.Tensor(n, latent) and forgets to fill it with normal_() before sampling from the generator)
# symptom: fixed-noise samples: mean nan
"""1-D GAN that learns a bimodal distribution; progress is monitored on a
fixed batch of latent vectors.

Fixed: the fixed monitoring noise is drawn with torch.randn(16, LATENT).
"""
import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)
LATENT = 4


def real_samples(n):
    mode = torch.randint(0, 2, (n, 1)).float()
    return (mode * 4 - 2) + 0.3 * torch.randn(n, 1)


G = nn.Sequential(nn.Linear(LATENT, 32), nn.ReLU(), nn.Linear(32, 1))
D = nn.Sequential(nn.Linear(1, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
fixed_z = torch.randn(16, LATENT)

for step in range(150):
    real = real_samples(64)
    fake = G(torch.randn(64, LATENT))

    d_loss = bce(D(real), torch.ones(64, 1)) + bce(D(fake.detach()), torch.zeros(64, 1))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()

    g_loss = bce(D(fake), torch.ones(64, 1))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()

    if step % 50 == 0:
        with torch.no_grad():
            samples = G(fixed_z)
        print(f"step {step} d {d_loss.item():.3f} g {g_loss.item():.3f}")
        print(f"fixed-noise samples: mean {samples.mean().item():.3f} std {samples.std().item():.3f}")
