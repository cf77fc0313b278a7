# source: https://github.com/KupynOrest/DeblurGAN/issues/56
# symptom: Trying to backward through the graph a second time
"""DeblurGAN `ConditionalGAN.optimize_parameters` with `--gan_type wgan-gp`: `forward()` computes `fake_B` once, then
five critic updates call `backward_D()`; the WGAN-GP gradient penalty interpolates with the *undetached* `fake_B`, so
the first `loss_D.backward()` frees the generator's graph and the second critic update backpropagates into it again."""
import torch
import torch.nn as nn
from torch import autograd

torch.manual_seed(0)


class Options:
    gan_type = 'wgan-gp'
    lr = 1e-4
    beta1 = 0.5
    lambda_A = 100.0
    input_nc = output_nc = 3


def define_G(opt):
    return nn.Sequential(nn.Conv2d(opt.input_nc, 8, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(8, opt.output_nc, 3, padding=1), nn.Tanh())


def define_D(opt):
    return nn.Sequential(nn.Conv2d(opt.output_nc, 8, 4, 2, 1), nn.LeakyReLU(0.2),
                         nn.Conv2d(8, 1, 4, 2, 1))


class ContentLoss:
    def __init__(self, criterion):
        self.criterion = criterion

    def get_loss(self, fakeIm, realIm):
        return self.criterion(fakeIm, realIm)


class DiscLossWGANGP:
    def __init__(self):
        self.LAMBDA = 10

    def get_g_loss(self, net, realA, fakeB):
        self.D_fake = net.forward(fakeB)
        return -self.D_fake.mean()

    def calc_gradient_penalty(self, netD, real_data, fake_data):
        alpha = torch.rand(1, 1)
        alpha = alpha.expand(real_data.size(0), real_data.nelement() // real_data.size(0)).contiguous().view(real_data.size())
        interpolates = alpha * real_data + ((1 - alpha) * fake_data)
        interpolates = interpolates.requires_grad_(True)
        disc_interpolates = netD.forward(interpolates)
        gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                  grad_outputs=torch.ones(disc_interpolates.size()),
                                  create_graph=True, retain_graph=True, only_inputs=True)[0]
        gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * self.LAMBDA
        return gradient_penalty

    def get_loss(self, net, realA, fakeB, realB):
        self.D_fake = net.forward(fakeB.detach())
        self.D_fake = self.D_fake.mean()
        self.D_real = net.forward(realB)
        self.D_real = self.D_real.mean()
        self.loss_D = self.D_fake - self.D_real
        gradient_penalty = self.calc_gradient_penalty(net, realB.data, fakeB)
        return self.loss_D + gradient_penalty


class ConditionalGAN:
    def __init__(self, opt):
        self.opt = opt
        self.netG = define_G(opt)
        self.netD = define_D(opt)
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
        self.criticUpdates = 5 if opt.gan_type == 'wgan-gp' else 1
        self.discLoss, self.contentLoss = DiscLossWGANGP(), ContentLoss(nn.L1Loss())

    def set_input(self, input):
        self.input_A, self.input_B = input['A'], input['B']

    def forward(self):
        self.real_A = self.input_A
        self.fake_B = self.netG.forward(self.real_A)
        self.real_B = self.input_B

    def backward_D(self):
        self.loss_D = self.discLoss.get_loss(self.netD, self.real_A, self.fake_B, self.real_B)
        self.loss_D.backward()  # expect: AG003

    def backward_G(self):
        self.loss_G_GAN = self.discLoss.get_g_loss(self.netD, self.real_A, self.fake_B)
        self.loss_G_Content = self.contentLoss.get_loss(self.fake_B, self.real_B) * self.opt.lambda_A
        self.loss_G = self.loss_G_GAN + self.loss_G_Content
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        for iter_d in range(self.criticUpdates):
            self.optimizer_D.zero_grad()
            self.backward_D()
            self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


model = ConditionalGAN(Options())
for i in range(2):
    model.set_input({'A': torch.rand(2, 3, 16, 16) * 2 - 1, 'B': torch.rand(2, 3, 16, 16) * 2 - 1})
    model.optimize_parameters()
    print(f"iter {i} | G_GAN {model.loss_G_GAN.item():.3f} | G_L1 {model.loss_G_Content.item():.3f} | D {model.loss_D.item():.3f}")
