"""AG017 fixed: the discriminator sees `fake.detach()`, so its backward leaves the generator graph alone.
Observed in torch 2.13: runs clean; both networks train, the generator only from g_loss."""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
g_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
d_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
real = torch.randn(16, 2) * 0.5 + 2.0
ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)

for step in range(3):
    fake = G(torch.randn(16, 2))
    d_opt.zero_grad()
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    d_loss.backward()
    d_opt.step()

    g_opt.zero_grad()
    g_loss = bce(D(fake), ones)
    g_loss.backward()
    g_opt.step()
    print(step, d_loss.item(), g_loss.item())
