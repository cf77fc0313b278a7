# source: written for holdout25 (pattern: WGAN critic step clips the critic weights through .data after the critic loss is computed but before its backward)
# symptom: critic grads differ from clean backward: True
"""WGAN with weight clipping on 2-D toy data (ring of Gaussians)."""
import copy
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
Z_DIM, CLIP, N_CRITIC = 8, 0.05, 3


def sample_ring(n):
    k = torch.randint(0, 8, (n,)).float()
    angle = 2 * math.pi * k / 8
    centers = torch.stack([torch.cos(angle), torch.sin(angle)], dim=1) * 2.0
    return centers + 0.05 * torch.randn(n, 2)


generator = nn.Sequential(nn.Linear(Z_DIM, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
critic = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
opt_g = torch.optim.RMSprop(generator.parameters(), lr=5e-4)
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
checked = False


def critic_loss(net, real, fake):
    return net(fake).mean() - net(real).mean()


for it in range(30):
    for _ in range(N_CRITIC):
        real = sample_ring(128)
        with torch.no_grad():
            fake = generator(torch.randn(128, Z_DIM))
        loss_c = critic_loss(critic, real, fake)
        if not checked:
            snapshot = copy.deepcopy(critic)  # debug: same weights, clean backward
        for p in critic.parameters():
            p.data.clamp_(-CLIP, CLIP)  # expect: AG008
        opt_c.zero_grad()
        loss_c.backward()
        if not checked:
            critic_loss(snapshot, real, fake).backward()
            differ = any(not torch.allclose(p.grad, q.grad, atol=1e-6)
                         for p, q in zip(critic.parameters(), snapshot.parameters()))
            print("critic grads differ from clean backward:", differ)
            checked = True
        opt_c.step()

    fake = generator(torch.randn(128, Z_DIM))
    loss_g = -critic(fake).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    if it % 10 == 0:
        print(f"iter {it}: critic {loss_c.item():.4f} gen {loss_g.item():.4f}")
