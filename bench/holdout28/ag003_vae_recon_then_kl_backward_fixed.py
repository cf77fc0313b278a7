# source: written for holdout28 (pattern: VAE training step backprops the reconstruction term with retain_graph=True, steps the optimizer, then backprops the KL term through the same encoder graph)
# symptom: modified by an inplace operation
"""Gaussian VAE on toy 2-cluster data, with a KL warm-up.

The two ELBO terms are backpropagated separately so their gradient norms can be
logged.

Fixed: the reconstruction gradient norm is measured with retain_graph=True but
without stepping; then the gradients are cleared and the whole ELBO
(rec_loss + beta * kl) is backpropagated once before a single optimizer step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, d=10, h=32, z=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, h), nn.ReLU())
        self.mu = nn.Linear(h, z)
        self.logvar = nn.Linear(h, z)
        self.dec = nn.Sequential(nn.Linear(z, h), nn.ReLU(), nn.Linear(h, d))

    def forward(self, x):
        h = self.body(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


def grad_norm(model):
    return sum(p.grad.norm() ** 2 for p in model.parameters() if p.grad is not None) ** 0.5


torch.manual_seed(0)
centers = torch.randn(2, 10) * 3
data = centers[torch.randint(0, 2, (512,))] + torch.randn(512, 10)
model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

step = 0
for epoch in range(2):
    for i in range(0, 512, 64):
        x = data[i:i + 64]
        recon, mu, logvar = model(x)
        rec_loss = F.mse_loss(recon, x, reduction="sum") / len(x)
        kl = -0.5 * torch.mean(torch.sum(1 + logvar - mu ** 2 - logvar.exp(), dim=1))
        beta = min(1.0, step / 20)

        optimizer.zero_grad()
        rec_loss.backward(retain_graph=True)
        rec_norm = grad_norm(model).item()

        optimizer.zero_grad()
        (rec_loss + beta * kl).backward()
        optimizer.step()
        step += 1
    print(f"epoch {epoch} rec {rec_loss.item():.3f} kl {kl.item():.3f} |g_rec| {rec_norm:.3f}")
