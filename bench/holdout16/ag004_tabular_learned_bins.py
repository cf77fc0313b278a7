# source: written for bench/holdout16 from RULES.md AG004 (custom nn.Module with learnable soft-binning thresholds initialised from arange with int args)
# symptom: Only Tensors of floating point and complex dtype can require gradients
"""Soft-binning of a numeric tabular feature (age) with learnable bin edges, feeding a credit-default classifier."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SoftBinning(nn.Module):
    def __init__(self, lo, hi, step, temperature=0.1):
        super().__init__()
        edges = torch.arange(lo, hi, step)
        self.edges = nn.Parameter(edges)  # expect: AG004
        self.temperature = temperature

    def forward(self, x):
        return torch.sigmoid((x.unsqueeze(-1) - self.edges) / self.temperature)


class CreditModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.age_bins = SoftBinning(cfg["age_lo"], cfg["age_hi"], cfg["age_step"])
        n_bins = len(range(cfg["age_lo"], cfg["age_hi"], cfg["age_step"]))
        self.out = nn.Linear(n_bins + 3, 1)

    def forward(self, age, other):
        return self.out(torch.cat([self.age_bins(age), other], dim=-1)).squeeze(-1)


cfg = {"age_lo": 20, "age_hi": 80, "age_step": 10}
model = CreditModel(cfg)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
age = torch.rand(128) * 60 + 20
other = torch.randn(128, 3)
target = ((age > 45) ^ (other[:, 0] > 0)).float()
for epoch in range(10):
    opt.zero_grad()
    loss = F.binary_cross_entropy_with_logits(model(age, other), target)
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")
