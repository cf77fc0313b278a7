# source: holdout13 short program (no report)
# symptom: unexpected keyword argument 'require_grad'
"""Planar normalising flow (Rezende & Mohamed) fitted to a correlated 2-D Gaussian by maximum likelihood.

Clean twin: the keyword is spelled `requires_grad`.
"""
import math

import torch
import torch.nn as nn


class PlanarFlow(nn.Module):
    def __init__(self, dim=2):
        super().__init__()
        self.u = nn.Parameter(torch.randn(dim) * 0.1)
        self.w = nn.Parameter(torch.randn(dim) * 0.1)
        self.b = nn.Parameter(torch.zeros(1), requires_grad=True)

    def forward(self, z):
        lin = z @ self.w + self.b
        f = z + self.u * torch.tanh(lin).unsqueeze(1)
        psi = (1 - torch.tanh(lin) ** 2).unsqueeze(1) * self.w
        return f, torch.log((1 + psi @ self.u).abs() + 1e-6)


torch.manual_seed(0)
flows = nn.ModuleList([PlanarFlow() for _ in range(4)])
opt = torch.optim.Adam(flows.parameters(), lr=1e-2)
cov = torch.tensor([[1.0, 0.8], [0.8, 1.0]])
data = torch.randn(512, 2) @ torch.linalg.cholesky(cov).t()
for epoch in range(3):
    for xb in data.split(64):
        z, log_det = xb, torch.zeros(xb.shape[0])
        for flow in flows:
            z, ld = flow(z)
            log_det = log_det + ld
        loss = -(-0.5 * (z ** 2).sum(1) - math.log(2 * math.pi) + log_det).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} nll {loss.item():.4f}")
