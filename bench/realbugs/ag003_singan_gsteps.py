# source: https://github.com/tamarott/SinGAN/issues/148
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# SinGAN's train_single_scale makes `fake` once in the D loop, then in the G loop calls errG.backward(retain_graph=True)
# and optimizerG.step() Gsteps times on that same fake; from the second G step on, backward meets netG's updated weights.
import torch
import torch.nn as nn
import torch.optim as optim


class ConvBlock(nn.Sequential):
    def __init__(self, in_channel, out_channel, ker_size=3, padd=1):
        super().__init__()
        self.add_module("conv", nn.Conv2d(in_channel, out_channel, ker_size, 1, padd))
        self.add_module("norm", nn.BatchNorm2d(out_channel))
        self.add_module("LeakyRelu", nn.LeakyReLU(0.2, inplace=True))


class WDiscriminator(nn.Module):
    def __init__(self, nc=3, nfc=8):
        super().__init__()
        self.head = ConvBlock(nc, nfc)
        self.body = ConvBlock(nfc, nfc)
        self.tail = nn.Conv2d(nfc, 1, 3, 1, 1)

    def forward(self, x):
        return self.tail(self.body(self.head(x)))


class GeneratorConcatSkip2CleanAdd(nn.Module):
    def __init__(self, nc=3, nfc=8):
        super().__init__()
        self.head = ConvBlock(nc, nfc)
        self.body = ConvBlock(nfc, nfc)
        self.tail = nn.Sequential(nn.Conv2d(nfc, nc, 3, 1, 1), nn.Tanh())

    def forward(self, x, y):
        return self.tail(self.body(self.head(x))) + y


def calc_gradient_penalty(netD, real_data, fake_data, LAMBDA):
    alpha = torch.rand(1, 1).expand(real_data.size())
    interpolates = (alpha * real_data + (1 - alpha) * fake_data).requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                    grad_outputs=torch.ones(disc_interpolates.size()),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA


def train_single_scale(netD, netG, real, opt):
    optimizerD = optim.Adam(netD.parameters(), lr=opt["lr_d"], betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt["lr_g"], betas=(0.5, 0.999))
    z_opt = torch.randn_like(real)
    prev = torch.zeros_like(real)
    for epoch in range(opt["niter"]):
        noise_ = torch.randn_like(real)
        # (1) Update D network
        for j in range(opt["Dsteps"]):
            netD.zero_grad()
            output = netD(real)
            errD_real = -output.mean()
            errD_real.backward(retain_graph=True)  # expect: AG003
            noise = opt["noise_amp"] * noise_ + prev
            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward(retain_graph=True)  # expect: AG003
            gradient_penalty = calc_gradient_penalty(netD, real, fake.detach(), opt["lambda_grad"])
            gradient_penalty.backward()
            optimizerD.step()
        # (2) Update G network
        for j in range(opt["Gsteps"]):
            netG.zero_grad()
            output = netD(fake)
            errG = -output.mean()
            errG.backward(retain_graph=True)  # expect: AG003
            rec_loss = opt["alpha"] * nn.MSELoss()(netG(z_opt.detach(), prev), real)
            rec_loss.backward(retain_graph=True)  # expect: AG003
            optimizerG.step()
        print("[%d/%d]" % (epoch, opt["niter"]))
    return z_opt, netG


torch.manual_seed(0)
opt = {"lr_d": 5e-4, "lr_g": 5e-4, "niter": 3, "Dsteps": 3, "Gsteps": 3, "noise_amp": 0.1, "lambda_grad": 0.1, "alpha": 10}
real = torch.rand(1, 3, 16, 16) * 2 - 1
train_single_scale(WDiscriminator(), GeneratorConcatSkip2CleanAdd(), real, opt)
