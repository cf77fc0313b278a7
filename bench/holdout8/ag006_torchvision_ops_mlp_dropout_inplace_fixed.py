# source: https://github.com/pytorch/vision/issues/7174
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""torchvision.ops.MLP: `inplace` defaults to True and is passed both to the activation and to the
Dropout layers, so with dropout > 0 the in-place Dropout overwrites the ReLU output that the ReLU node
saved for backward; `MLP(3, [3, 3], dropout=0.5)(x).sum().backward()` fails.

Written for bench/holdout8 with the structure of torchvision/ops/misc.py's MLP (Linear, optional norm,
activation, Dropout per hidden layer, then the last Linear and Dropout), used as the projection head of
a small contrastive model trained for a step on random inputs (torchvision itself is not installed).

Twin: the call the report shows working, MLP(..., dropout=0.5, inplace=False).
"""
from typing import Callable, List, Optional

import torch


class MLP(torch.nn.Sequential):
    def __init__(self, in_channels: int, hidden_channels: List[int],
                 norm_layer: Optional[Callable[..., torch.nn.Module]] = None,
                 activation_layer: Optional[Callable[..., torch.nn.Module]] = torch.nn.ReLU,
                 inplace: Optional[bool] = True, bias: bool = True, dropout: float = 0.0):
        params = {} if inplace is None else {"inplace": inplace}
        layers = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(torch.nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers.append(activation_layer(**params))
            layers.append(torch.nn.Dropout(dropout, **params))
            in_dim = hidden_dim
        layers.append(torch.nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(torch.nn.Dropout(dropout, **params))
        super().__init__(*layers)


class ContrastiveModel(torch.nn.Module):
    def __init__(self, in_features=12, feat_dim=16, proj_dim=8):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(in_features, feat_dim), torch.nn.Tanh())
        self.projector = self.build_projector(feat_dim, proj_dim)

    @staticmethod
    def build_projector(feat_dim, proj_dim):
        return MLP(feat_dim, [feat_dim, proj_dim], dropout=0.5, inplace=False)

    def forward(self, x):
        return torch.nn.functional.normalize(self.projector(self.encoder(x)), dim=-1)


def nt_xent(z1, z2, temperature=0.5):
    z = torch.cat([z1, z2])
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    n = z1.shape[0]
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return torch.nn.functional.cross_entropy(sim, targets)


def main():
    torch.manual_seed(0)
    model = ContrastiveModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 12)
    loss = nt_xent(model(x + 0.1 * torch.randn_like(x)), model(x + 0.1 * torch.randn_like(x)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
