# source: https://github.com/tamarott/SinGAN/issues/148
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# train_single_scale: the D loop leaves `fake = netG(noise, prev)`; the G loop reuses that same fake for every one of
# its Gsteps (output = netD(fake); errG.backward(retain_graph=True); optimizerG.step()), so the second G step
# backpropagates through netG weights the first step already changed (error on newer PyTorch).
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Opt:
    nc_z = 3
    nzx = nzy = 8
    niter = 2
    Dsteps = 3
    Gsteps = 3
    lr_d = lr_g = 0.0005
    beta1 = 0.5
    alpha = 10
    noise_amp = 0.1


class GeneratorConcatSkip2CleanAdd(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2))
        self.tail = nn.Sequential(nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, x, y):
        return self.tail(self.head(x)) + y


class WDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, x):
        return self.body(x)


def generate_noise(size):
    return torch.randn(1, *size)


def train_single_scale(netD, netG, real, opt):
    optimizerD = optim.Adam(netD.parameters(), lr=opt.lr_d, betas=(opt.beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt.lr_g, betas=(opt.beta1, 0.999))
    z_opt = generate_noise([opt.nc_z, opt.nzx, opt.nzy])
    for epoch in range(opt.niter):
        noise_ = generate_noise([opt.nc_z, opt.nzx, opt.nzy])
        ############################
        # (1) Update D network: maximize D(x) + D(G(z))
        ###########################
        for j in range(opt.Dsteps):
            netD.zero_grad()
            output = netD(real)
            errD_real = -output.mean()
            errD_real.backward(retain_graph=True)
            prev = torch.zeros(1, opt.nc_z, opt.nzx, opt.nzy)
            noise = opt.noise_amp * noise_ + prev
            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward(retain_graph=True)
            optimizerD.step()
        ############################
        # (2) Update G network: maximize D(G(z))
        ###########################
        for j in range(opt.Gsteps):
            netG.zero_grad()
            output = netD(fake)
            errG = -output.mean()
            errG.backward(retain_graph=True)  # expect: AG017
            rec_loss = opt.alpha * nn.MSELoss()(netG(z_opt.detach(), prev), real)
            rec_loss.backward(retain_graph=True)
            optimizerG.step()
        print("[%d/%d] errG %.4f" % (epoch, opt.niter, errG.item()))
    return z_opt, netG


opt = Opt()
train_single_scale(WDiscriminator(), GeneratorConcatSkip2CleanAdd(), torch.rand(1, 3, 8, 8) * 2 - 1, opt)
