# source: written for holdout28 (pattern: VAE-GAN loop trains the discriminator on the VAE's reconstructions without detach, steps it, then backprops the VAE loss's adversarial term through the same reconstructions)
# symptom: backward through the graph a second time
"""VAE-GAN on 16-d toy data: a VAE whose reconstructions are also judged by a
discriminator, to sharpen them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, d=16, z=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 2 * z))
        self.dec = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


torch.manual_seed(0)
data = torch.randn(512, 4) @ torch.randn(4, 16)
vae = VAE()
disc = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_vae = torch.optim.Adam(vae.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(disc.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()

for epoch in range(3):
    for i in range(0, 512, 64):
        x = data[i:i + 64]
        x_rec, mu, logvar = vae(x)
        ones, zeros = torch.ones(len(x), 1), torch.zeros(len(x), 1)

        d_loss = bce(disc(x), ones) + bce(disc(x_rec), zeros)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()

        recon = F.mse_loss(x_rec, x)
        kl = -0.5 * torch.mean(1 + logvar - mu ** 2 - logvar.exp())
        vae_loss = recon + 0.1 * kl + 0.05 * bce(disc(x_rec), ones)
        opt_vae.zero_grad()
        vae_loss.backward()  # expect: AG017
        opt_vae.step()
    print(f"epoch {epoch} d {d_loss.item():.3f} vae {vae_loss.item():.3f}")
