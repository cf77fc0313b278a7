"""AG017 (seeds 000, 001): GAN step where the discriminator loss uses the generator output without .detach().
Observed in torch 2.13: RuntimeError at the generator backward: Trying to backward through the graph a second time."""
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
    d_loss = bce(D(real), ones) + bce(D(fake), zeros)  # expect: AG017
    d_loss.backward()
    d_opt.step()

    g_opt.zero_grad()
    g_loss = bce(D(fake), ones)
    g_loss.backward()  # expect: AG017
    g_opt.step()
    print(step, d_loss.item(), g_loss.item())
