# source: written for bench/holdout17 from RULES.md AG008 (WGAN critic update: weights clipped through .data between the critic's forward and its backward)
# symptom: critic gradient differs from the unclipped graph: True
"""WGAN on 8x8 random 'images'; the critic's weight clipping sits between the loss and backward."""
import copy
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.Tanh())
D = nn.Sequential(nn.Linear(64, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1))
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-5)
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-5)
CLIP = 0.01
differs = []


def critic_grad_reference(D, real, fake):
    ref = copy.deepcopy(D)
    (ref(fake).mean() - ref(real).mean()).backward()
    return ref[0].weight.grad


for it in range(5):
    real = torch.rand(32, 64) * 2 - 1
    fake = G(torch.randn(32, 16)).detach()
    reference = critic_grad_reference(D, real, fake)
    opt_d.zero_grad()
    loss_d = D(fake).mean() - D(real).mean()
    loss_d.backward()
    differs.append(not torch.allclose(D[0].weight.grad, reference))
    opt_d.step()
    with torch.no_grad():
        for p in D.parameters():
            p.clamp_(-CLIP, CLIP)

    opt_g.zero_grad()
    loss_g = -D(G(torch.randn(32, 16))).mean()
    loss_g.backward()
    opt_g.step()
print("critic gradient differs from the unclipped graph:", any(differs))
