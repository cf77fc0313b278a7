# source: holdout13 short program (no report)
# symptom: appears to not have been used in the graph
"""WGAN-GP on 2-D data: several critic steps per generator step, the gradient penalty in a helper called from the
critic step."""
import torch
import torch.nn as nn


def gradient_penalty(critic, real, fake):
    eps = torch.rand(real.shape[0], 1)
    interp = eps * real + (1 - eps) * fake
    scores = critic(interp)
    interp.requires_grad_(True)  # expect: AG014
    grads, = torch.autograd.grad(scores.sum(), interp, create_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


torch.manual_seed(0)
gen = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
critic = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
g_opt = torch.optim.Adam(gen.parameters(), lr=1e-3, betas=(0.5, 0.9))
c_opt = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
data = torch.randn(512, 2) * 0.5 + torch.tensor([2.0, -1.0])
for epoch in range(2):
    for i, real in enumerate(data.split(64)):
        fake = gen(torch.randn(real.shape[0], 4)).detach()
        c_loss = critic(fake).mean() - critic(real).mean() + 10.0 * gradient_penalty(critic, real, fake)
        c_opt.zero_grad()
        c_loss.backward()
        c_opt.step()
        if i % 3 == 2:
            g_loss = -critic(gen(torch.randn(64, 4))).mean()
            g_opt.zero_grad()
            g_loss.backward()
            g_opt.step()
    print(f"epoch {epoch} critic {c_loss.item():.4f}")
