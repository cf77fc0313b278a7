# source: written for holdout25 (pattern: custom masked linear layer allocates weight and bias with torch.Tensor(...) but reset_parameters only initialises the weight)
# symptom: loss nan
"""MADE-style masked linear layers for a tiny autoregressive density model on binary vectors."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)  # reproducible runs
D = 8


class MaskedLinear(nn.Module):
    def __init__(self, in_features, out_features, mask):
        super().__init__()
        self.weight = nn.Parameter(torch.Tensor(out_features, in_features))
        self.bias = nn.Parameter(torch.Tensor(out_features))  # expect: AG012
        self.register_buffer("mask", mask)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)


def made_masks(d, hidden):
    deg_in = torch.arange(1, d + 1)
    deg_h = torch.arange(hidden) % (d - 1) + 1
    m1 = (deg_h[:, None] >= deg_in[None, :]).float()
    m2 = (deg_in[:, None] > deg_h[None, :]).float()
    return m1, m2


class MADE(nn.Module):
    def __init__(self, d=D, hidden=32):
        super().__init__()
        m1, m2 = made_masks(d, hidden)
        self.l1 = MaskedLinear(d, hidden, m1)
        self.l2 = MaskedLinear(hidden, d, m2)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


torch.manual_seed(0)
data = (torch.rand(256, D) < torch.linspace(0.2, 0.8, D)).float()
model = MADE()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for i in range(0, 256, 32):
        x = data[i:i + 32]
        loss = F.binary_cross_entropy_with_logits(model(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("epoch", epoch, "loss", round(loss.item(), 4))
