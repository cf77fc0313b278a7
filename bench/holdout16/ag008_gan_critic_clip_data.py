# source: written for bench/holdout16 from RULES.md AG008 (WGAN critic: weights clipped through .data between the critic loss and its backward)
# symptom: critic gradients differ from the clean computation: True
"""WGAN on 2-D toy data (ring of Gaussians): the critic's weights are clipped in the critic step."""
import copy
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


def sample_ring(n):
    angle = torch.randint(0, 8, (n,)).float() * (2 * math.pi / 8)
    return torch.stack([angle.cos(), angle.sin()], 1) * 2 + 0.05 * torch.randn(n, 2)


G = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-4)
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-4)
CLIP = 0.01


def critic_grads_reference(D, real, fake):
    ref = copy.deepcopy(D)
    (ref(fake).mean() - ref(real).mean()).backward()
    return [p.grad.clone() for p in ref.parameters()]


differs = False
for it in range(5):
    real = sample_ring(64)
    fake = G(torch.randn(64, 4)).detach()
    opt_d.zero_grad()
    reference = critic_grads_reference(D, real, fake)
    d_loss = D(fake).mean() - D(real).mean()
    for p in D.parameters():
        p.data.clamp_(-CLIP, CLIP)  # expect: AG008
    d_loss.backward()
    opt_d.step()
    differs |= any(not torch.allclose(p.grad, r) for p, r in zip(D.parameters(), reference))

    opt_g.zero_grad()
    g_loss = -D(G(torch.randn(64, 4))).mean()
    g_loss.backward()
    opt_g.step()
    print(f"it {it} d_loss {d_loss.item():.4f} g_loss {g_loss.item():.4f}")
print(f"critic gradients differ from the clean computation: {differs}")
