# source: holdout13 short program (no report)
# symptom: modified by an inplace operation
"""RealNVP-style normalising flow on 2-D data: affine couplings (a helper called from the loop) with a tanh-bounded
log-scale times a learned scale, trained by maximum likelihood.

Clean twin: the log-scale is multiplied out of place (`log_s = log_s * scale`).
"""
import math

import torch
import torch.nn as nn


def coupling_forward(net, scale, x, flip):
    x1, x2 = x.chunk(2, dim=1)
    if flip:
        x1, x2 = x2, x1
    s_raw, t = net(x1).chunk(2, dim=1)
    log_s = torch.tanh(s_raw)
    log_s = log_s * scale
    y2 = x2 * torch.exp(log_s) + t
    y = torch.cat([y2, x1], 1) if flip else torch.cat([x1, y2], 1)
    return y, log_s.sum(1)


torch.manual_seed(0)
nets = nn.ModuleList([nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 2)) for _ in range(4)])
scales = nn.ParameterList([nn.Parameter(torch.ones(1)) for _ in range(4)])
opt = torch.optim.Adam([*nets.parameters(), *scales.parameters()], lr=3e-3)
angle = torch.rand(1024) * 2 * math.pi
data = torch.stack([torch.cos(angle), torch.sin(angle)], 1) + 0.05 * torch.randn(1024, 2)

for epoch in range(3):
    for xb in data.split(128):
        z, log_det = xb, torch.zeros(xb.shape[0])
        for k, (net, scale) in enumerate(zip(nets, scales)):
            z, ld = coupling_forward(net, scale, z, flip=k % 2 == 1)
            log_det = log_det + ld
        log_prob = -0.5 * (z ** 2).sum(1) - math.log(2 * math.pi) + log_det
        loss = -log_prob.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} nll {loss.item():.4f}")
