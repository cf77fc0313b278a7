# source: written for bench/holdout5 (short training program, physics-informed network for an ODE, inputs need gradients)
# symptom: (?i)only Tensors of floating point( and complex)? dtype can require gradients
import torch
from torch import nn

torch.manual_seed(8)

# solve du/dt = -2u with u(0) = 1 on t in [0, 1]
net = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(), nn.Linear(20, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)


def collocation_points(n):
    steps = torch.arange(n).unsqueeze(1)
    steps.requires_grad_(True)  # expect: AG004
    return steps / (n - 1)


def residual_loss(t):
    u = net(t)
    du_dt, = torch.autograd.grad(u.sum(), t, create_graph=True)
    ode = du_dt + 2 * u
    ic = net(torch.zeros(1, 1)) - 1.0
    return (ode ** 2).mean() + (ic ** 2).mean()


for it in range(60):
    t = collocation_points(32)
    opt.zero_grad()
    loss = residual_loss(t)
    loss.backward()
    opt.step()
    if it % 20 == 0:
        print(f"iter {it}: residual {loss.item():.5f}")

with torch.no_grad():
    print("u(1) =", round(net(torch.ones(1, 1)).item(), 4), "exact 0.1353")
