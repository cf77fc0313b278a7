# source: https://github.com/coarse-graining/cgnet/issues/63
# symptom: modified by an inplace operation
"""cgnet `CGnet.forward`: the network energy `self.arch(feat)` is topped up with each prior's energy in place,
`energy += prior(feat[:, prior.feat_idx])`. With the last `LinearLayer` given `activation=nn.Tanh()`, `energy` is
the tanh output that autograd saved for its backward, so the force computation
`torch.autograd.grad(-torch.sum(energy), coord, create_graph=True)` fails with the version-counter error of the
report ("output 0 of TanhBackward, is at version N; expected version 0")."""
import torch
import torch.nn as nn


def LinearLayer(d_in, d_out, bias=True, activation=None):
    seq = [nn.Linear(d_in, d_out, bias=bias)]
    if activation is not None:
        seq += [activation]
    return seq


class GeometryFeature(nn.Module):
    """pairwise distances of the beads"""

    def __init__(self, n_beads):
        super().__init__()
        self.pairs = [(i, j) for i in range(n_beads) for j in range(i + 1, n_beads)]

    def forward(self, coord):
        x = coord.view(coord.shape[0], -1, 3)
        return torch.stack([(x[:, i] - x[:, j]).norm(dim=-1) for i, j in self.pairs], dim=1)


class HarmonicLayer(nn.Module):
    def __init__(self, feat_idx, k=1.0, x0=1.0):
        super().__init__()
        self.feat_idx = feat_idx
        self.register_buffer("k", torch.full((len(feat_idx),), k))
        self.register_buffer("x0", torch.full((len(feat_idx),), x0))

    def forward(self, in_feat):
        return torch.sum(self.k * (in_feat - self.x0) ** 2, dim=1, keepdim=True) / 2


class ForceLoss(nn.Module):
    def forward(self, force, labels):
        return ((force - labels) ** 2).mean()


class CGnet(nn.Module):
    def __init__(self, arch, criterion, feature=None, priors=None):
        super().__init__()
        self.arch = nn.Sequential(*arch)
        self.priors = nn.ModuleList(priors) if priors else None
        self.criterion = criterion
        self.feature = feature

    def forward(self, coord):
        feat = coord
        if self.feature:
            feat = self.feature(feat)
        energy = self.arch(feat)
        if self.priors:
            for prior in self.priors:
                energy += prior(feat[:, prior.feat_idx])  # expect: AG006
        force = torch.autograd.grad(-torch.sum(energy), coord, create_graph=True, retain_graph=True)
        return energy, force[0]


torch.manual_seed(0)
n_beads = 5
feature = GeometryFeature(n_beads)
n_feat = len(feature.pairs)
width_layer = 16
arch = LinearLayer(n_feat, width_layer, activation=nn.Tanh())
arch += LinearLayer(width_layer, width_layer, activation=nn.Tanh())
arch += LinearLayer(width_layer, 1, activation=nn.Tanh())
bond_idx = [0, 4, 7, 9]
other_idx = [1, 2, 3, 5, 6, 8]
priors = [HarmonicLayer(bond_idx, k=2.0, x0=1.0), HarmonicLayer(other_idx, k=0.5, x0=2.0)]
chln_net = CGnet(arch, ForceLoss(), feature=feature, priors=priors)
optimizer = torch.optim.Adam(chln_net.parameters(), lr=1e-3)

traj = torch.randn(32, n_beads * 3)
forces = torch.randn(32, n_beads * 3)
for epoch in range(2):
    for i in range(0, 32, 16):
        coord = traj[i:i + 16].clone().requires_grad_(True)
        optimizer.zero_grad()
        pred_energy, pred_force = chln_net.forward(coord)
        loss = chln_net.criterion(pred_force, forces[i:i + 16])
        loss.backward()
        optimizer.step()
    print("epoch", epoch, "loss {:.4f}".format(loss.item()))
