# source: https://github.com/VincentStimper/normalizing-flows/commit/45e0d38b45ffd869dfd3c4c28e67e26ff231b934
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""normflow core.py before the fix: `NormalizingFlow.reverse_kld` takes
`z, log_q = self.q0(num_samples)` and then subtracts every flow's log-determinant in place
(`log_q -= log_det`). With a `GaussianMixture` base, `log_q` is the output of
`torch.logsumexp`, which autograd saved for its backward, so `loss.backward()` fails.

The commit also repairs `GaussianMixture.forward`'s sampling (mode indices from
`weights[0, :]`, `one_hot(mode, n_modes)`, eps recomputed from z); the program and its twin
both use the repaired sampling, so that they differ only by the in-place fix.
Stand-ins: a Planar flow and the TwoModes target written for this program; random init
with torch instead of numpy.
"""
import math

import torch
import torch.nn as nn


class GaussianMixture(nn.Module):
    """Mixture of Gaussians with diagonal covariance matrix"""

    def __init__(self, n_modes, dim, trainable=True):
        super().__init__()
        self.n_modes = n_modes
        self.dim = dim
        loc = torch.randn(1, n_modes, dim, dtype=torch.float64)
        scale = torch.ones(1, n_modes, dim, dtype=torch.float64)
        weights = torch.ones(1, n_modes, dtype=torch.float64) / n_modes
        if trainable:
            self.loc = nn.Parameter(loc)
            self.log_scale = nn.Parameter(torch.log(scale))
            self.weight_scores = nn.Parameter(torch.log(weights))
        else:
            self.register_buffer("loc", loc)
            self.register_buffer("log_scale", torch.log(scale))
            self.register_buffer("weight_scores", torch.log(weights))

    def forward(self, num_samples=1):
        weights = torch.softmax(self.weight_scores, 1)

        mode = torch.multinomial(weights[0, :], num_samples, replacement=True)
        mode_1h = nn.functional.one_hot(mode, self.n_modes)
        mode_1h = mode_1h[..., None]

        eps_ = torch.randn(num_samples, self.dim, dtype=self.loc.dtype, device=self.loc.device)
        scale_sample = torch.sum(torch.exp(self.log_scale) * mode_1h, 1)
        loc_sample = torch.sum(self.loc * mode_1h, 1)
        z = eps_ * scale_sample + loc_sample

        eps = (z[:, None, :] - self.loc) / torch.exp(self.log_scale)
        log_p = - 0.5 * self.dim * math.log(2 * math.pi) + torch.log(weights) \
                - 0.5 * torch.sum(torch.pow(eps, 2), 2) \
                - torch.sum(self.log_scale, 2)
        log_p = torch.logsumexp(log_p, 1)
        return z, log_p

    def log_prob(self, z):
        weights = torch.softmax(self.weight_scores, 1)
        eps = (z[:, None, :] - self.loc) / torch.exp(self.log_scale)
        log_p = - 0.5 * self.dim * math.log(2 * math.pi) + torch.log(weights) \
                - 0.5 * torch.sum(torch.pow(eps, 2), 2) \
                - torch.sum(self.log_scale, 2)
        return torch.logsumexp(log_p, 1)


class Planar(nn.Module):
    """Planar flow, f(z) = z + u h(w^T z + b)"""

    def __init__(self, shape):
        super().__init__()
        lim_w = math.sqrt(2.0 / shape[0])
        lim_u = math.sqrt(2)
        self.u = nn.Parameter(torch.zeros(shape, dtype=torch.float64)[None])
        nn.init.uniform_(self.u, -lim_u, lim_u)
        self.w = nn.Parameter(torch.zeros(shape, dtype=torch.float64)[None])
        nn.init.uniform_(self.w, -lim_w, lim_w)
        self.b = nn.Parameter(torch.zeros(1, dtype=torch.float64))

    def forward(self, z):
        lin = torch.sum(self.w * z, 1) + self.b
        inner = torch.sum(self.w * self.u)
        u = self.u + (torch.log(1 + torch.exp(inner)) - 1 - inner) * self.w / torch.sum(self.w ** 2)
        z_ = z + u * torch.tanh(lin.unsqueeze(1))
        log_det = torch.log(torch.abs(1 + torch.sum(self.w * u) / torch.cosh(lin) ** 2))
        return z_, log_det


class TwoModes(nn.Module):
    def __init__(self, loc, scale):
        super().__init__()
        self.loc = loc
        self.scale = scale

    def log_prob(self, z):
        a = torch.abs(z[:, 0])
        eps = abs(self.loc)
        return - 0.5 * ((torch.norm(z, dim=1) - self.loc) / (2 * self.scale)) ** 2 \
               - 0.5 * ((a - eps) / (3 * self.scale)) ** 2 \
               + torch.log(1 + torch.exp(-2 * (a * eps) / (3 * self.scale) ** 2))


class NormalizingFlow(nn.Module):
    def __init__(self, q0, flows, p=None):
        super().__init__()
        self.q0 = q0
        self.flows = nn.ModuleList(flows)
        self.p = p

    def reverse_kld(self, num_samples=1, beta=1.0):
        z, log_q = self.q0(num_samples)
        for flow in self.flows:
            z, log_det = flow(z)
            log_q -= log_det  # expect: AG006
        log_p = self.p.log_prob(z)
        return torch.mean(log_q) - beta * torch.mean(log_p)


def main():
    torch.manual_seed(0)
    q0 = GaussianMixture(n_modes=3, dim=2)
    flows = [Planar((2,)) for _ in range(4)]
    nfm = NormalizingFlow(q0=q0, flows=flows, p=TwoModes(2.0, 0.1))
    optimizer = torch.optim.Adam(nfm.parameters(), lr=1e-3, weight_decay=1e-4)
    for it in range(20):
        optimizer.zero_grad()
        loss = nfm.reverse_kld(num_samples=64, beta=min(1.0, 0.01 + it / 20))
        if not torch.isnan(loss):
            loss.backward()
            optimizer.step()
    print("reverse KLD %.4f" % loss.item())


if __name__ == "__main__":
    main()
