# source: https://github.com/tamarott/SinGAN/pull/117 (pattern: SinGAN train_single_scale reuses the fake made in the D steps for every G step, backpropagating errG with retain_graph=True after optimizerG.step() changed netG)
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""SinGAN-style single-scale training: Dsteps critic updates, then Gsteps generator updates.

Fixed (as the PR review suggested): each G step generates a new fake, so errG never backprops through
a graph that optimizerG.step() already changed, and no backward keeps its graph (retain_graph dropped).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Opt:
    niter = 2
    Dsteps = 3
    Gsteps = 3
    alpha = 10
    lambda_grad = 0.1
    device = torch.device("cpu")


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.LeakyReLU(0.2))


class WDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(conv_block(3, 8), conv_block(8, 8))
        self.tail = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        return self.tail(self.body(x))


class GeneratorConcatSkip2CleanAdd(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(conv_block(3, 8), conv_block(8, 8))
        self.tail = nn.Sequential(nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, x, y):
        return self.tail(self.body(x)) + y


def calc_gradient_penalty(netD, real_data, fake_data, LAMBDA, device):
    alpha = torch.rand(1, 1).expand(real_data.size())
    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = torch.autograd.Variable(interpolates, requires_grad=True)
    disc_interpolates = netD(interpolates)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                    grad_outputs=torch.ones(disc_interpolates.size(), device=device),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA


def train_single_scale(netD, netG, real, opt):
    optimizerD = torch.optim.Adam(netD.parameters(), lr=5e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=5e-4, betas=(0.5, 0.999))
    loss = nn.MSELoss()
    Z_opt = torch.randn_like(real)
    z_prev = torch.zeros_like(real)
    prev = torch.zeros_like(real)

    for epoch in range(opt.niter):
        noise = torch.randn_like(real)

        # (1) Update D network: maximize D(x) + D(G(z))
        for j in range(opt.Dsteps):
            netD.zero_grad()
            output = netD(real)
            errD_real = -output.mean()
            errD_real.backward()

            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward()

            gradient_penalty = calc_gradient_penalty(netD, real, fake, opt.lambda_grad, opt.device)
            gradient_penalty.backward()
            optimizerD.step()

        # (2) Update G network: maximize D(G(z))
        for j in range(opt.Gsteps):
            netG.zero_grad()
            fake = netG(noise.detach(), prev)
            output = netD(fake)
            errG = -output.mean()
            errG.backward()
            rec_loss = opt.alpha * loss(netG(Z_opt.detach(), z_prev), real)
            rec_loss.backward()
            optimizerG.step()

        print(f"epoch {epoch}: errD {(errD_real + errD_fake).item():.3f} errG {errG.item():.3f}")


real = torch.rand(1, 3, 16, 16) * 2 - 1
train_single_scale(WDiscriminator(), GeneratorConcatSkip2CleanAdd(), real, Opt())
