# source: holdout11 short program (no report)
# symptom: grad can be implicitly created only for scalar outputs
"""VAE on random binary vectors; the ELBO helper returns one value per sample and the trainer backpropagates it directly."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, d=20, z=4):
        super().__init__()
        self.enc = nn.Linear(d, 32)
        self.mu = nn.Linear(32, z)
        self.logvar = nn.Linear(32, z)
        self.dec = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, x):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar


def negative_elbo(x, recon_logits, mu, logvar):
    recon = F.binary_cross_entropy_with_logits(recon_logits, x, reduction="none").sum(dim=1)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1)
    return recon + kl


class VAETrainer:
    def __init__(self):
        self.model = VAE()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def step(self, x):
        self.opt.zero_grad()
        loss = negative_elbo(x, *self.model(x))
        loss.backward()  # expect: AG005
        self.opt.step()
        return loss.mean().item()


trainer = VAETrainer()
data = (torch.rand(256, 20) < 0.3).float()
for epoch in range(3):
    for i in range(0, 256, 64):
        l = trainer.step(data[i:i + 64])
    print(f"epoch {epoch} -elbo {l:.3f}")
