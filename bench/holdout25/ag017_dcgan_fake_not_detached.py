# source: written for holdout25 (pattern: GAN loop feeds the generator output to the discriminator loss without detach, steps D, then backprops the generator loss through the same fake batch)
# symptom: backward through the graph a second time|modified by an inplace operation
"""Small fully-connected GAN on 8x8 'images' of a bright square."""
import torch
import torch.nn as nn

torch.manual_seed(0)
NZ, IMG = 16, 64


def real_batch(n=32):
    imgs = torch.zeros(n, 8, 8)
    for i in range(n):
        r, c = torch.randint(0, 5, (2,)).tolist()
        imgs[i, r:r + 3, c:c + 3] = 1.0
    return (imgs * 2 - 1).view(n, IMG)


netG = nn.Sequential(nn.Linear(NZ, 128), nn.ReLU(), nn.Linear(128, IMG), nn.Tanh())
netD = nn.Sequential(nn.Linear(IMG, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1))
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()


def train_step():
    real = real_batch()
    n = real.size(0)
    ones, zeros = torch.ones(n, 1), torch.zeros(n, 1)
    fake = netG(torch.randn(n, NZ))

    # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    errD = criterion(netD(real), ones) + criterion(netD(fake), zeros)
    errD.backward()
    optD.step()

    # (2) update G: maximize log(D(G(z)))
    netG.zero_grad()
    errG = criterion(netD(fake), ones)
    errG.backward()  # expect: AG017
    optG.step()
    return errD.item(), errG.item()


for it in range(50):
    d, g = train_step()
    if it % 10 == 0:
        print(f"iter {it}: D {d:.3f} G {g:.3f}")
