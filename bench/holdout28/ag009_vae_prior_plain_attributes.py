# source: written for holdout28 (pattern: VAE module keeps its Gaussian prior's mean and log-variance as plain tensor attributes in __init__; model.to(float64) leaves them behind and the checkpoint lacks them)
# symptom: prior left behind by \.to\(\): True
"""VAE with an explicit (fixed) diagonal Gaussian prior, evaluated in float64.

Training runs in float32; the final ELBO is recomputed in double precision.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PriorVAE(nn.Module):
    def __init__(self, d=12, z=3, prior_std=1.0):
        super().__init__()
        self.enc = nn.Linear(d, 2 * z)
        self.dec = nn.Sequential(nn.Linear(z, 32), nn.Tanh(), nn.Linear(32, d))
        self.prior_mu = torch.zeros(z)  # expect: AG009
        self.prior_logvar = torch.full((z,), 2.0 * torch.log(torch.tensor(prior_std)).item())  # expect: AG009

    def kl(self, mu, logvar):
        pv = self.prior_logvar.exp()
        return 0.5 * (self.prior_logvar - logvar + (logvar.exp() + (mu - self.prior_mu) ** 2) / pv - 1).sum(1)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        rec = F.mse_loss(self.dec(z), x, reduction="none").sum(1)
        return (rec + self.kl(mu, logvar)).mean()


torch.manual_seed(0)
data = torch.randn(300, 3) @ torch.randn(3, 12)
model = PriorVAE()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(4):
    for i in range(0, 300, 30):
        loss = model(data[i:i + 30])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} neg-elbo {loss.item():.3f}")

model = model.to(torch.float64)
with torch.no_grad():
    print(f"float64 neg-elbo {model(data.double()).item():.4f}")
print(f"prior left behind by .to(): {model.prior_mu.dtype != torch.float64}")
print(f"prior in checkpoint: {'prior_mu' in model.state_dict()}")
