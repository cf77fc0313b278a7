import torch
import torch.nn as nn

gen, disc = nn.Linear(2, 2), nn.Linear(2, 1)
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(disc.parameters(), lr=1e-3)
for step in range(3):
    noise, real = torch.randn(4, 2), torch.randn(4, 2)
    fake = gen(noise)
    opt_d.zero_grad()
    d_loss = disc(fake.detach()).mean() - disc(real).mean()
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = -disc(fake).mean()
    g_loss.backward()
    opt_g.step()
