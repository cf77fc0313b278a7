# source: holdout11 short program (no report)
# symptom: backward through the graph a second time
"""DCGAN-style loop on small vectors: the generator output feeds the discriminator loss without .detach(), then the generator loss backpropagates through it again."""
import torch
import torch.nn as nn

torch.manual_seed(0)
latent, data_dim = 8, 16

netG = nn.Sequential(nn.Linear(latent, 64), nn.ReLU(), nn.Linear(64, data_dim), nn.Tanh())
netD = nn.Sequential(nn.Linear(data_dim, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1), nn.Sigmoid())
criterion = nn.BCELoss()
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

data = torch.tanh(torch.randn(256, data_dim) * 0.5 + 0.3)
for epoch in range(2):
    for i in range(0, 256, 32):
        real = data[i:i + 32]
        ones, zeros = torch.ones(32, 1), torch.zeros(32, 1)

        # (1) update D
        optD.zero_grad()
        fake = netG(torch.randn(32, latent))
        errD = criterion(netD(real), ones) + criterion(netD(fake), zeros)
        errD.backward()
        optD.step()

        # (2) update G
        optG.zero_grad()
        errG = criterion(netD(fake), ones)
        errG.backward()  # expect: AG017
        optG.step()
    print(f"epoch {epoch} errD {errD.item():.3f} errG {errG.item():.3f}")
