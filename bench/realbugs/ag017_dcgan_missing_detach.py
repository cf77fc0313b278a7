# source: https://github.com/pytorch/examples/issues/116
# symptom: Trying to backward through the graph a second time
# A commenter re-implemented the DCGAN example without fake.detach() in the discriminator's fake pass:
# errD_fake.backward() frees netG's part of the graph, and errG.backward() on netD(fake) then raises.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)

nz, ngf, ndf, nc = 8, 8, 8, 1
real_label, fake_label = 1.0, 0.0


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.ConvTranspose2d(nz, ngf, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
                                  nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                                  nn.Conv2d(ndf, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


netG = Generator()
netD = Discriminator()
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
dataloader = [torch.rand(4, nc, 8, 8) * 2 - 1 for _ in range(2)]

for epoch in range(1):
    for i, data in enumerate(dataloader):
        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        netD.zero_grad()
        real_cpu = data
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label)
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()

        noise = torch.randn(batch_size, nz, 1, 1)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()  # expect: AG017
        optimizerG.step()
        print("[%d/%d] Loss_D: %.4f Loss_G: %.4f" % (i, len(dataloader), errD.item(), errG.item()))
