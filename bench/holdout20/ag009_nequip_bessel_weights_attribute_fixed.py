# source: https://github.com/mir-group/nequip/commit/cf3be116e1152b985ef0c0601c23d45e58359b87
# symptom: bessel_weights left behind by \.to\(\): True
"""nequip: a pair-distance energy model with a non-trainable `BesselBasis` radial embedding, trained in float32,
then moved with `.to(...)` for double-precision evaluation (the same call that moves it to a GPU).

Fixed as in the commit: the non-trainable weights are registered, `self.register_buffer("bessel_weights",
bessel_weights)` (an `nn.Parameter` when trainable), so `.to(...)` moves them.
"""
import math

import torch
from torch import nn

torch.manual_seed(0)


class BesselBasis(nn.Module):
    r_max: float
    prefactor: float

    def __init__(self, r_max, num_basis=8, trainable=True):
        super().__init__()
        self.trainable = trainable
        self.num_basis = num_basis
        self.r_max = float(r_max)
        self.prefactor = 2.0 / self.r_max

        bessel_weights = torch.linspace(start=1.0, end=num_basis, steps=num_basis) * math.pi
        if self.trainable:
            self.bessel_weights = nn.Parameter(bessel_weights)
        else:
            self.register_buffer("bessel_weights", bessel_weights)

    def forward(self, x):
        numerator = torch.sin(self.bessel_weights * x.unsqueeze(-1) / self.r_max)
        return self.prefactor * (numerator / x.unsqueeze(-1))


class PairEnergyModel(nn.Module):
    def __init__(self, r_max=4.0, num_basis=8):
        super().__init__()
        self.basis = BesselBasis(r_max, num_basis, trainable=False)
        self.mlp = nn.Sequential(nn.Linear(num_basis, 32), nn.SiLU(), nn.Linear(32, 1))

    def forward(self, pos):
        n = pos.shape[1]
        iu = torch.triu_indices(n, n, offset=1)
        r = (pos[:, iu[0]] - pos[:, iu[1]]).norm(dim=-1)
        return self.mlp(self.basis(r)).sum(dim=(1, 2))


model = PairEnergyModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
pos = torch.rand(32, 6, 3) * 3 + 0.1
target = torch.randn(32)
for epoch in range(20):
    optimizer.zero_grad()
    loss = ((model(pos) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
print(f"train loss {loss.item():.4f}")

model = model.to(torch.float64)
energy = model(pos.double())
print("energy dtype", energy.dtype, "| mlp weight dtype", model.mlp[0].weight.dtype)
print("bessel_weights left behind by .to():", model.basis.bessel_weights.dtype != torch.float64)
print("bessel_weights in state_dict:", any("bessel_weights" in k for k in model.state_dict()))
