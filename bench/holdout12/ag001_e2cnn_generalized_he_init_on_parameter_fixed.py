# source: https://github.com/QUVA-Lab/e2cnn/issues/34
# symptom: leaf Variable that requires grad is being used in an in-place operation
"""e2cnn with PyTorch 1.8: metalearning-symmetries' `generate_synthetic_data.py` builds equivariant
convolutions and initialises them with `gnn.init.generalized_he_init(conv.weights, conv.basisexpansion)`.
The init writes the new values in place (`tensor[:] = ...`) and, unlike PyTorch's own `nn.init`
functions, not under `torch.no_grad()`; `conv.weights` is a leaf Parameter, so the call fails. The
in-place write sits in the library's init helper; the marker is on the call that hands it the
Parameter.

Fixed the way the maintainer proposes to do it inside e2cnn (as PyTorch's `nn.init` does): the
initialisation runs under `torch.no_grad()` (his other suggestion was passing `conv.weights.data`)."""
import math
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasisExpansion(nn.Module):
    """Stand-in for e2cnn's block basis expansion: a fixed steerable basis, one entry per weight."""

    def __init__(self, in_channels, out_channels, size=3, num_basis=6):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.register_buffer("basis", torch.randn(num_basis, out_channels, in_channels, size, size))

    def dimension(self):
        return self.basis.shape[0]

    def get_basis_info(self):
        for b in range(self.dimension()):
            yield {"in_irrep": b % self.in_channels, "out_irrep": b % self.out_channels, "size": 1}

    def forward(self, weights):
        return torch.einsum("b,boiyx->oiyx", weights, self.basis)


class R2Conv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3):
        super().__init__()
        self.basisexpansion = BasisExpansion(in_channels, out_channels, kernel_size)
        self.weights = nn.Parameter(torch.zeros(self.basisexpansion.dimension()))
        self.padding = kernel_size // 2

    def forward(self, x):
        return F.conv2d(x, self.basisexpansion(self.weights), padding=self.padding)


def generalized_he_init(tensor, basisexpansion):
    """e2cnn.nn.init.generalized_he_init: He init adapted to the basis (written in place)."""
    vars = torch.ones_like(tensor)
    inputs_count = defaultdict(lambda: set())
    basis_count = defaultdict(int)
    basis_info = list(basisexpansion.get_basis_info())
    for attr in basis_info:
        inputs_count[attr["out_irrep"]].add(attr["in_irrep"])
        basis_count[attr["in_irrep"], attr["out_irrep"]] += 1
    for b, attr in enumerate(basis_info):
        n_in = len(inputs_count[attr["out_irrep"]]) * basis_count[attr["in_irrep"], attr["out_irrep"]]
        vars[b] = attr["size"] / n_in
    tensor[:] = vars.sqrt() * torch.randn_like(tensor) * math.sqrt(2.0)


def build_teacher(channels=(1, 4, 1)):
    convs = []
    for c_in, c_out in zip(channels[:-1], channels[1:]):
        conv = R2Conv(c_in, c_out)
        with torch.no_grad():
            generalized_he_init(conv.weights, conv.basisexpansion)
        convs.append(conv)
    return nn.Sequential(convs[0], nn.ReLU(), convs[1])


def main():
    teacher = build_teacher()
    inputs = torch.randn(16, 1, 12, 12)
    with torch.no_grad():
        targets = teacher(inputs)
    print(f"synthetic data: inputs {tuple(inputs.shape)}, targets {tuple(targets.shape)}, "
          f"target std {targets.std().item():.3f}")


if __name__ == "__main__":
    main()
