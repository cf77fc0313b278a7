# source: written for bench/holdout5 (short training program, conditional GAN on toy 2-D clusters, helper-function losses)
# symptom: backward through the graph a second time|modified by an inplace operation
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(33)
LATENT, N_CLASSES = 8, 3
CENTERS = torch.tensor([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.label = nn.Embedding(N_CLASSES, 4)
        self.net = nn.Sequential(nn.Linear(LATENT + 4, 32), nn.ReLU(), nn.Linear(32, 2))

    def forward(self, z, labels):
        return self.net(torch.cat([z, self.label(labels)], dim=1))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.label = nn.Embedding(N_CLASSES, 4)
        self.net = nn.Sequential(nn.Linear(2 + 4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x, labels):
        return self.net(torch.cat([x, self.label(labels)], dim=1))


def d_loss_fn(disc, real, fake, labels):
    real_logits = disc(real, labels)
    fake_logits = disc(fake, labels)
    return (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
            + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))


def train_step(gen, disc, g_opt, d_opt, real, labels):
    fake = gen(torch.randn(real.shape[0], LATENT), labels)
    d_opt.zero_grad()
    d_loss = d_loss_fn(disc, real, fake, labels)  # expect: AG017
    d_loss.backward()
    d_opt.step()

    g_opt.zero_grad()
    logits = disc(fake, labels)
    g_loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    g_loss.backward()
    g_opt.step()
    return d_loss.item(), g_loss.item()


gen, disc = Generator(), Discriminator()
g_opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
d_opt = torch.optim.Adam(disc.parameters(), lr=1e-3)
for it in range(40):
    labels = torch.randint(0, N_CLASSES, (64,))
    real = CENTERS[labels] + 0.2 * torch.randn(64, 2)
    d, g = train_step(gen, disc, g_opt, d_opt, real, labels)
    if it % 10 == 0:
        print(f"iter {it}: d {d:.3f} g {g:.3f}")
