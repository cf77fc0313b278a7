# source: https://github.com/pyg-team/pytorch_geometric/pull/4424
# symptom: out=\.\.\. arguments don't support automatic differentiation, but one of the arguments requires grad|leaf Variable that requires grad is being used in an in-place operation
# Clean twin: reset_parameters fills the frequencies under torch.no_grad() and re-enables their gradient, as PyG's
# BesselBasisLayer does after the PR.
from math import pi as PI

import torch
from torch import nn
from torch.nn import Parameter


class Envelope(nn.Module):
    def __init__(self, exponent):
        super().__init__()
        self.p = exponent + 1
        self.a = -(self.p + 1) * (self.p + 2) / 2
        self.b = self.p * (self.p + 2)
        self.c = -self.p * (self.p + 1) / 2

    def forward(self, x):
        p, a, b, c = self.p, self.a, self.b, self.c
        x_pow_p0 = x.pow(p - 1)
        x_pow_p1 = x_pow_p0 * x
        x_pow_p2 = x_pow_p1 * x
        return (1.0 / x + a * x_pow_p0 + b * x_pow_p1 + c * x_pow_p2) * (x < 1.0).to(x.dtype)


class BesselBasisLayer(nn.Module):
    def __init__(self, num_radial, cutoff=5.0, envelope_exponent=5):
        super().__init__()
        self.cutoff = cutoff
        self.envelope = Envelope(envelope_exponent)
        self.freq = Parameter(torch.Tensor(num_radial))
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            torch.arange(1, self.freq.numel() + 1, out=self.freq).mul_(PI)
        self.freq.requires_grad_()

    def forward(self, dist):
        dist = dist.unsqueeze(-1) / self.cutoff
        return self.envelope(dist) * (self.freq * dist).sin()


class DimeNet(nn.Module):
    def __init__(self, hidden_channels, out_channels, num_radial=6, cutoff=5.0, envelope_exponent=5):
        super().__init__()
        self.rbf = BesselBasisLayer(num_radial, cutoff, envelope_exponent)
        self.lin = nn.Linear(num_radial, hidden_channels)
        self.out = nn.Linear(hidden_channels, out_channels)

    def forward(self, dist):
        return self.out(torch.relu(self.lin(self.rbf(dist))))


torch.manual_seed(0)
model = DimeNet(hidden_channels=5, out_channels=19, num_radial=6)
dist = torch.rand(10) * 4.0 + 0.5
loss = model(dist).pow(2).mean()
loss.backward()
print("freq grad:", model.rbf.freq.grad)
