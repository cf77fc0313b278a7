# source: https://github.com/zh217/torch-dct/issues/10
# symptom: fixed DCT weight changed by training: True
# LinearDCT (an nn.Linear whose weight is the DCT matrix) ends reset_parameters() with
# self.weight.require_grad = False  # don't learn this! -- the typo only adds an attribute, so the DCT is trained.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def dct(x, norm=None):
    """DCT-II along the last dimension, via the explicit cosine basis."""
    N = x.shape[-1]
    n = torch.arange(N, dtype=x.dtype)
    basis = torch.cos(math.pi * (2 * n[None, :] + 1) * n[:, None] / (2 * N))  # [k, n]
    X = 2 * x @ basis.t()
    if norm == "ortho":
        X[..., 0] = X[..., 0] / (math.sqrt(N) * 2)
        X[..., 1:] = X[..., 1:] / (math.sqrt(N / 2) * 2)
    return X


class LinearDCT(nn.Linear):
    """Implement any DCT as a linear layer; in practice this executes around 50x faster on GPU."""

    def __init__(self, in_features, type, norm=None, bias=False):
        self.type = type
        self.N = in_features
        self.norm = norm
        super(LinearDCT, self).__init__(in_features, in_features, bias=bias)

    def reset_parameters(self):
        # initialise using dct function
        I = torch.eye(self.N)
        if self.type == "dct":
            self.weight.data = dct(I, norm=self.norm).data.t()
        self.weight.require_grad = False  # expect: AG018


def apply_linear_2d(x, linear_layer):
    X1 = linear_layer(x)
    X2 = linear_layer(X1.transpose(-1, -2))
    return X2.transpose(-1, -2)


class DCTDenoiser(nn.Module):
    def __init__(self, n=8):
        super().__init__()
        self.dct = LinearDCT(n, "dct", norm="ortho")
        self.mask = nn.Parameter(torch.ones(n, n))

    def forward(self, x):
        return apply_linear_2d(x, self.dct) * self.mask


model = DCTDenoiser()
fixed = model.dct.weight.detach().clone()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 8, 8)
    target = dct(dct(x, norm="ortho").transpose(-1, -2), norm="ortho").transpose(-1, -2) * 0.5
    optimizer.zero_grad()
    loss = ((model(x) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
print("fixed DCT weight changed by training:", not torch.equal(fixed, model.dct.weight.detach()))
