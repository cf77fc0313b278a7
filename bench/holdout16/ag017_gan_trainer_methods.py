# source: written for bench/holdout16 from RULES.md AG017 (GAN trainer class: the generated batch is passed to a discriminator-step method and then to a generator-step method)
# symptom: backward through the graph a second time|modified by an inplace operation
"""DCGAN-style training on 8x8 random "images": a trainer class with separate D and G step methods."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.Tanh())

    def forward(self, z):
        return self.net(z).view(-1, 1, 8, 8)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class GANTrainer:
    def __init__(self, z_dim=16):
        self.z_dim = z_dim
        self.G, self.D = Generator(z_dim), Discriminator()
        self.opt_G = torch.optim.Adam(self.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.opt_D = torch.optim.Adam(self.D.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def d_step(self, real, fake):
        self.opt_D.zero_grad()
        ones, zeros = torch.ones(real.shape[0], 1), torch.zeros(fake.shape[0], 1)
        loss = F.binary_cross_entropy_with_logits(self.D(real), ones) + \
            F.binary_cross_entropy_with_logits(self.D(fake), zeros)
        loss.backward()
        self.opt_D.step()
        return loss.item()

    def g_step(self, fake):
        self.opt_G.zero_grad()
        loss = F.binary_cross_entropy_with_logits(self.D(fake), torch.ones(fake.shape[0], 1))
        loss.backward()  # expect: AG017
        self.opt_G.step()
        return loss.item()

    def train_iteration(self, real):
        fake = self.G(torch.randn(real.shape[0], self.z_dim))
        d = self.d_step(real, fake)
        g = self.g_step(fake)
        return d, g


trainer = GANTrainer()
for it in range(3):
    d, g = trainer.train_iteration(torch.rand(16, 1, 8, 8) * 2 - 1)
    print(f"it {it} D {d:.4f} G {g:.4f}")
