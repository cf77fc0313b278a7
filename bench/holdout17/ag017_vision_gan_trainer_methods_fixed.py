# source: written for bench/holdout17 from RULES.md AG017 (DCGAN-like trainer: train_step makes one fake batch on self and hands it to _update_d and _update_g, the discriminator's loss uses it undetached)
# symptom: Trying to backward through the graph a second time|modified by an inplace operation
"""Small conv GAN on random 16x16 'images' with the updates split into methods."""
import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, z_dim=16):
        self.z_dim = z_dim
        self.G = nn.Sequential(nn.Linear(z_dim, 8 * 4 * 4), nn.Unflatten(1, (8, 4, 4)), nn.ReLU(),
                               nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), nn.ReLU(),
                               nn.ConvTranspose2d(4, 1, 4, stride=2, padding=1), nn.Tanh())
        self.D = nn.Sequential(nn.Conv2d(1, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Flatten(),
                               nn.Linear(8 * 8 * 8, 1))
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.bce = nn.BCEWithLogitsLoss()

    def _update_d(self, real):
        self.opt_d.zero_grad()
        out_real, out_fake = self.D(real), self.D(self.fake.detach())
        loss = self.bce(out_real, torch.ones_like(out_real)) + self.bce(out_fake, torch.zeros_like(out_fake))
        loss.backward()
        self.opt_d.step()
        return loss.item()

    def _update_g(self):
        self.opt_g.zero_grad()
        out = self.D(self.fake)
        loss = self.bce(out, torch.ones_like(out))
        loss.backward()
        self.opt_g.step()
        return loss.item()

    def train_step(self, real):
        self.fake = self.G(torch.randn(real.size(0), self.z_dim))
        return self._update_d(real), self._update_g()


torch.manual_seed(0)
trainer = GANTrainer()
for it in range(3):
    print("iter", it, trainer.train_step(torch.rand(8, 1, 16, 16) * 2 - 1))
