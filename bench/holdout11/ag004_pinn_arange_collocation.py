# source: holdout11 short program (no report)
# symptom: [Oo]nly Tensors of floating point
"""Physics-informed net for u' = -u, u(0)=1: the collocation points are built with an integer arange."""
import torch
import torch.nn as nn

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)


def collocation(n):
    t = torch.arange(0, n, requires_grad=True)  # expect: AG004
    return (t / n).unsqueeze(1)


def residual(t):
    u = net(t)
    du = torch.autograd.grad(u.sum(), t, create_graph=True)[0]
    return du + u


t = collocation(40)
t0 = torch.zeros(1, 1)
for epoch in range(200):
    optimizer.zero_grad()
    loss = residual(t).pow(2).mean() + (net(t0) - 1.0).pow(2).mean()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.5f}  u(1) ~ {net(torch.ones(1, 1)).item():.3f}")
