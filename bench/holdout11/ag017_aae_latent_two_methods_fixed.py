# source: holdout11 short program (no report)
# symptom: backward through the graph a second time
"""Adversarial autoencoder trainer: the discriminator update scores z.detach(); the encoder update goes through z once."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AAETrainer:
    def __init__(self, d=24, z=2):
        self.enc = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, z))
        self.dec = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, d))
        self.disc = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, 1))
        self.ae_opt = torch.optim.Adam(list(self.enc.parameters()) + list(self.dec.parameters()), lr=1e-3)
        self.d_opt = torch.optim.Adam(self.disc.parameters(), lr=1e-3)
        self.z_dim = z

    def discriminator_step(self, z):
        prior = torch.randn_like(z)
        d_prior, d_post = self.disc(prior), self.disc(z.detach())
        loss = F.binary_cross_entropy_with_logits(d_prior, torch.ones_like(d_prior)) + \
            F.binary_cross_entropy_with_logits(d_post, torch.zeros_like(d_post))
        self.d_opt.zero_grad()
        loss.backward()
        self.d_opt.step()
        return loss.item()

    def autoencoder_step(self, x, z):
        recon = F.mse_loss(self.dec(z), x)
        d_post = self.disc(z)
        adv = F.binary_cross_entropy_with_logits(d_post, torch.ones_like(d_post))
        loss = recon + 0.1 * adv
        self.ae_opt.zero_grad()
        loss.backward()
        self.ae_opt.step()
        return loss.item()

    def train_step(self, x):
        z = self.enc(x)
        d = self.discriminator_step(z)
        g = self.autoencoder_step(x, z)
        return d, g


trainer = AAETrainer()
data = torch.randn(128, 24)
for epoch in range(3):
    for i in range(0, 128, 32):
        d, g = trainer.train_step(data[i:i + 32])
    print(f"epoch {epoch} disc {d:.3f} ae {g:.3f}")
