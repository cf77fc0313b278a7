# source: https://github.com/karpathy/pytorch-normalizing-flows/commit/fce68b6ccfd1580e0984246ef86e67eb7ce5b7e1
# symptom: loss nan
"""karpathy/pytorch-normalizing-flows nflib/nets.py after "fix a bug where we would init with
uninitialized memory" (fixed): LeafParam starts from `nn.Parameter(torch.zeros(1, n))`. Same
deterministic mode as the bug program."""
import math

import torch
import torch.nn.functional as F
from torch import nn

torch.use_deterministic_algorithms(True)


class LeafParam(nn.Module):
    """just ignores the input and outputs a parameter tensor"""

    def __init__(self, n):
        super().__init__()
        self.p = nn.Parameter(torch.zeros(1, n))

    def forward(self, x):
        return self.p.expand(x.size(0), self.p.size(1))


class MLP(nn.Module):
    """a simple 4-layer MLP"""

    def __init__(self, nin, nout, nh):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nin, nh), nn.LeakyReLU(0.2), nn.Linear(nh, nh), nn.LeakyReLU(0.2),
                                 nn.Linear(nh, nh), nn.LeakyReLU(0.2), nn.Linear(nh, nout))

    def forward(self, x):
        return self.net(x)


class SlowMAF(nn.Module):
    """Masked Autoregressive Flow, slow version with explicit networks per dim"""

    def __init__(self, dim, parity, net_class=MLP, nh=24):
        super().__init__()
        self.dim = dim
        self.layers = nn.ModuleDict()
        self.layers[str(0)] = LeafParam(2)
        for i in range(1, dim):
            self.layers[str(i)] = MLP(i, 2, nh)
        self.order = list(range(dim)) if parity else list(range(dim))[::-1]

    def forward(self, x):
        z = torch.zeros_like(x)
        log_det = torch.zeros(x.size(0))
        for i in range(self.dim):
            st = self.layers[str(i)](x[:, :i])
            s, t = st[:, 0], st[:, 1]
            z[:, self.order[i]] = x[:, i] * torch.exp(s) + t
            log_det += s
        return z, log_det


class NormalizingFlow(nn.Module):
    def __init__(self, flows):
        super().__init__()
        self.flows = nn.ModuleList(flows)

    def forward(self, x):
        m, _ = x.shape
        log_det = torch.zeros(m)
        zs = [x]
        for flow in self.flows:
            x, ld = flow.forward(x)
            log_det += ld
            zs.append(x)
        return zs, log_det


class NormalizingFlowModel(nn.Module):
    def __init__(self, flows):
        super().__init__()
        self.flow = NormalizingFlow(flows)

    def prior_log_prob(self, z):
        return (-0.5 * z.pow(2) - 0.5 * math.log(2 * math.pi)).sum(1)

    def forward(self, x):
        zs, log_det = self.flow.forward(x)
        return zs, self.prior_log_prob(zs[-1]), log_det


def sample_moons(n):
    t = torch.rand(n) * math.pi
    upper = torch.rand(n) < 0.5
    x = torch.where(upper, torch.cos(t), 1 - torch.cos(t))
    y = torch.where(upper, torch.sin(t), 0.5 - torch.sin(t))
    return torch.stack([x, y], 1) + 0.05 * torch.randn(n, 2)


def main():
    torch.manual_seed(0)
    flows = [SlowMAF(dim=2, parity=i % 2, nh=16) for i in range(3)]
    model = NormalizingFlowModel(flows)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, weight_decay=1e-5)
    model.train()
    for k in range(20):
        x = sample_moons(64)
        zs, prior_logprob, log_det = model(x)
        logprob = prior_logprob + log_det
        loss = -torch.sum(logprob)
        model.zero_grad()
        loss.backward()
        optimizer.step()
    print('loss', loss.item())


if __name__ == '__main__':
    main()
