# source: https://github.com/1Konny/FactorVAE/issues/15 (pattern: FactorVAE solver backprops vae_loss with retain_graph=True, steps the VAE optimizer, then backprops the discriminator TC loss that reuses D_z from the VAE forward)
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""FactorVAE-style training step: VAE update first, then the total-correlation discriminator.

Fixed: the discriminator loss re-runs D on z.detach() (its own, fresh graph), so it no longer
backprops through the VAE graph that optim_VAE.step() changed; retain_graph=True is dropped.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, x_dim=16, z_dim=4):
        super().__init__()
        self.z_dim = z_dim
        self.encode = nn.Sequential(nn.Linear(x_dim, 32), nn.ReLU(), nn.Linear(32, 2 * z_dim))
        self.decode = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, x_dim))

    def forward(self, x, no_dec=False):
        stats = self.encode(x)
        mu, logvar = stats[:, :self.z_dim], stats[:, self.z_dim:]
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        if no_dec:
            return z.squeeze()
        return self.decode(z), mu, logvar, z.squeeze()


class Discriminator(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))

    def forward(self, z):
        return self.net(z)


def permute_dims(z):
    B, _ = z.size()
    perm_z = []
    for z_j in z.split(1, 1):
        perm_z.append(z_j[torch.randperm(B)])
    return torch.cat(perm_z, 1)


def kl_divergence(mu, logvar):
    return -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1).mean()


class Solver:
    def __init__(self):
        self.gamma = 6.4
        self.VAE = VAE()
        self.D = Discriminator()
        self.optim_VAE = torch.optim.Adam(self.VAE.parameters(), lr=1e-3)
        self.optim_D = torch.optim.Adam(self.D.parameters(), lr=1e-3)

    def train(self, data, steps=3):
        ones = torch.ones(32, dtype=torch.long)
        zeros = torch.zeros(32, dtype=torch.long)
        for step in range(steps):
            x_true1, x_true2 = data[step]
            x_recon, mu, logvar, z = self.VAE(x_true1)
            vae_recon_loss = F.mse_loss(x_recon, x_true1, reduction="sum") / 32
            vae_kld = kl_divergence(mu, logvar)

            D_z = self.D(z)
            vae_tc_loss = (D_z[:, :1] - D_z[:, 1:]).mean()
            vae_loss = vae_recon_loss + vae_kld + self.gamma * vae_tc_loss

            self.optim_VAE.zero_grad()
            vae_loss.backward()
            self.optim_VAE.step()

            z_prime = self.VAE(x_true2, no_dec=True)
            z_pperm = permute_dims(z_prime).detach()
            D_z_pperm = self.D(z_pperm)
            D_z_det = self.D(z.detach())
            D_tc_loss = 0.5 * (F.cross_entropy(D_z_det, zeros) + F.cross_entropy(D_z_pperm, ones))

            self.optim_D.zero_grad()
            D_tc_loss.backward()
            self.optim_D.step()
            print(f"step {step}: vae_loss {vae_loss.item():.3f} D_tc_loss {D_tc_loss.item():.3f}")


data = [(torch.randn(32, 16), torch.randn(32, 16)) for _ in range(3)]
Solver().train(data)
