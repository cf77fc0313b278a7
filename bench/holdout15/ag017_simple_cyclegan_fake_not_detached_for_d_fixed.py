# source: https://github.com/cy-xu/simple_CycleGAN/issues/3
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""simple_CycleGAN `simple_cygan.py`, `train()`: the X and Y generator cycles each end with
`loss.backward(retain_graph=True)` and `optimizer_g.step()`, and the discriminator updates then score the same
`fake_y` / `fake_x` tensors without `.detach()`, so `loss_D_x.backward()` walks back into netG_x, whose weights
`optimizer_g.step()` has changed in place twice ("[3, 64, 7, 7] is at version 3; expected version 1" on
PyTorch >= 1.5). Written for this set with the script's structure (ResnetGenerator/NLayerDiscriminator pairs,
one optimizer for both generators and one for both discriminators, LSGAN `GANLoss`, cycle and identity L1
losses with lambda_X, lambda_Y and lambda_identity, score meters); tiny networks and random 32x32 images.

Fixed twin: the issue has no fix in the repository; the twin detaches the generator outputs for the
discriminator losses (`netD_x(fake_y.detach())`, `netD_y(fake_x.detach())`), as the CycleGAN reference
implementation that the script follows does, and drops the `retain_graph=True` that nothing reuses then."""
import itertools

import torch as t
import torch.nn as nn


class ResnetGenerator(nn.Module):
    def __init__(self, ngf=8):
        super().__init__()
        self.head = nn.Sequential(nn.ReflectionPad2d(3), nn.Conv2d(3, ngf, 7), nn.InstanceNorm2d(ngf), nn.ReLU(True))
        self.block = nn.Sequential(nn.Conv2d(ngf, ngf, 3, padding=1), nn.InstanceNorm2d(ngf), nn.ReLU(True),
                                   nn.Conv2d(ngf, ngf, 3, padding=1), nn.InstanceNorm2d(ngf))
        self.tail = nn.Sequential(nn.ReflectionPad2d(3), nn.Conv2d(ngf, 3, 7), nn.Tanh())

    def forward(self, x):
        h = self.head(x)
        h = h + self.block(h)
        return self.tail(h)


class NLayerDiscriminator(nn.Module):
    def __init__(self, ndf=8):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True),
                                   nn.Conv2d(ndf, ndf * 2, 4, 2, 1), nn.InstanceNorm2d(ndf * 2), nn.LeakyReLU(0.2, True),
                                   nn.Conv2d(ndf * 2, 1, 4, 1, 1))

    def forward(self, x):
        return self.model(x)


class GANLoss(nn.Module):
    def __init__(self, gan_mode="lsgan"):
        super().__init__()
        self.loss = nn.MSELoss()

    def __call__(self, prediction, target_is_real):
        target = t.ones_like(prediction) if target_is_real else t.zeros_like(prediction)
        return self.loss(prediction, target)


def mean(xs):
    return sum(xs[-10:]) / max(len(xs[-10:]), 1)


def train(max_epochs=1, iters=3):
    t.manual_seed(0)
    netG_x, netG_y = ResnetGenerator(), ResnetGenerator()
    netD_x, netD_y = NLayerDiscriminator(), NLayerDiscriminator()
    optimizer_g = t.optim.Adam(itertools.chain(netG_x.parameters(), netG_y.parameters()), lr=2e-4, betas=(0.5, 0.999))
    optimizer_d = t.optim.Adam(itertools.chain(netD_x.parameters(), netD_y.parameters()), lr=2e-4, betas=(0.5, 0.999))
    lambda_X, lambda_Y, lambda_identity = 10.0, 10.0, 0.5
    criterionGAN = GANLoss(gan_mode="lsgan")
    criterionCycle, criterionIdt = nn.L1Loss(), nn.L1Loss()
    loss_X_meter, loss_Y_meter, score_Dx_real_y, score_Dx_fake_y = [], [], [], []

    for epoch in range(max_epochs):
        for i in range(iters):
            real_x = t.rand(1, 3, 32, 32) * 2 - 1
            real_y = t.rand(1, 3, 32, 32) * 2 - 1

            # X -> Y' -> X^ cycle
            optimizer_g.zero_grad()
            fake_y = netG_x(real_x)
            prediction = netD_x(fake_y)
            loss_G_X = criterionGAN(prediction, True)
            x_hat = netG_y(fake_y)
            loss_cycle_X = criterionCycle(x_hat, real_x) * lambda_X
            idt_x = netG_x(real_y)
            loss_idt_x = criterionIdt(idt_x, real_y) * lambda_Y * lambda_identity
            loss_X = loss_G_X + loss_cycle_X + loss_idt_x
            loss_X.backward()
            optimizer_g.step()
            loss_X_meter.append(loss_X.item())

            # Y -> X' -> Y^ cycle
            optimizer_g.zero_grad()
            fake_x = netG_y(real_y)
            prediction = netD_y(fake_x)
            loss_G_Y = criterionGAN(prediction, True)
            y_hat = netG_x(fake_x)
            loss_cycle_Y = criterionCycle(y_hat, real_y) * lambda_Y
            idt_y = netG_y(real_x)
            loss_idt_y = criterionIdt(idt_y, real_x) * lambda_X * lambda_identity
            loss_Y = loss_G_Y + loss_cycle_Y + loss_idt_y
            loss_Y.backward()
            optimizer_g.step()
            loss_Y_meter.append(loss_Y.item())

            # netD_x
            optimizer_d.zero_grad()
            pred_real = netD_x(real_y)
            loss_D_x_real = criterionGAN(pred_real, True)
            score_Dx_real_y.append(float(pred_real.detach().mean()))
            pred_fake = netD_x(fake_y.detach())
            loss_D_x_fake = criterionGAN(pred_fake, False)
            score_Dx_fake_y.append(float(pred_fake.detach().mean()))
            loss_D_x = (loss_D_x_real + loss_D_x_fake) * 0.5
            loss_D_x.backward()
            optimizer_d.step()

            # netD_y
            optimizer_d.zero_grad()
            pred_real = netD_y(real_x)
            loss_D_y_real = criterionGAN(pred_real, True)
            pred_fake = netD_y(fake_x.detach())
            loss_D_y_fake = criterionGAN(pred_fake, False)
            loss_D_y = (loss_D_y_real + loss_D_y_fake) * 0.5
            loss_D_y.backward()
            optimizer_d.step()

        print("epoch", epoch, {"loss_X": round(mean(loss_X_meter), 4), "loss_Y": round(mean(loss_Y_meter), 4)},
              {"score_Dx_real_y": round(mean(score_Dx_real_y), 4), "score_Dx_fake_y": round(mean(score_Dx_fake_y), 4)})


if __name__ == "__main__":
    train()
