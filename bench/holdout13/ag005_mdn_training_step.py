# source: holdout13 short program (no report)
# symptom: grad can be implicitly created only for scalar outputs
"""Mixture density network on the inverse-sine problem, in a LightningModule-like class (`configure_optimizers`,
`training_step`) driven by a small `fit()` loop."""
import math

import torch
import torch.nn as nn


class MDN(nn.Module):
    def __init__(self, n_hidden=32, n_comp=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, n_hidden), nn.Tanh())
        self.pi = nn.Linear(n_hidden, n_comp)
        self.mu = nn.Linear(n_hidden, n_comp)
        self.log_sigma = nn.Linear(n_hidden, n_comp)

    def forward(self, x):
        h = self.body(x)
        return torch.log_softmax(self.pi(h), -1), self.mu(h), self.log_sigma(h).clamp(-5, 3)


class LitMDN:
    def __init__(self):
        self.model = MDN()

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), lr=5e-3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        log_pi, mu, log_sigma = self.model(x)
        log_prob = -0.5 * ((y - mu) / log_sigma.exp()) ** 2 - log_sigma - 0.5 * math.log(2 * math.pi)
        return -torch.logsumexp(log_pi + log_prob, dim=-1)


def fit(module, loader, epochs=3):
    opt = module.configure_optimizers()
    for epoch in range(epochs):
        for i, batch in enumerate(loader):
            opt.zero_grad()
            loss = module.training_step(batch, i)
            loss.backward()  # expect: AG005
            opt.step()
        print(f"epoch {epoch} nll {loss.mean().item():.4f}")


torch.manual_seed(0)
y = torch.rand(512, 1)
x = y + 0.3 * torch.sin(2 * math.pi * y) + 0.05 * torch.randn_like(y)
fit(LitMDN(), list(zip(x.split(64), y.split(64))))
