# source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/439
# symptom: Trying to backward through the graph a second time
# Clean twin: the gradient penalty gets fake_AB.detach(), like the critic's fake pass, so loss_D.backward() stays
# inside netD and backward_G still has netG's graph (no fix in the part of the thread read here; this is the detach
# the code already applies to pred_fake).
import torch
import torch.nn as nn


def cal_gradient_penalty(netD, real_data, fake_data, constant=1.0, lambda_gp=10.0):
    alpha = torch.rand(real_data.shape[0], 1)
    per_sample = real_data.nelement() // real_data.shape[0]
    alpha = alpha.expand(real_data.shape[0], per_sample).contiguous().view(*real_data.shape)
    interpolatesv = alpha * real_data + ((1 - alpha) * fake_data)
    interpolatesv.requires_grad_(True)
    disc_interpolates = netD(interpolatesv)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolatesv,
                                    grad_outputs=torch.ones(disc_interpolates.size()),
                                    create_graph=True, retain_graph=True, only_inputs=True)
    gradients = gradients[0].view(real_data.size(0), -1)
    gradient_penalty = (((gradients + 1e-16).norm(2, dim=1) - constant) ** 2).mean() * lambda_gp
    return gradient_penalty, gradients


class GANLoss(nn.Module):
    def __call__(self, prediction, target_is_real):
        return -prediction.mean() if target_is_real else prediction.mean()


class Pix2PixModel:
    def __init__(self, L_GP=10.0, lambda_L1=100.0):
        self.netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
        self.netD = nn.Sequential(nn.Conv2d(6, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, 1, 1))
        self.criterionGAN = GANLoss()
        self.criterionL1 = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.L_GP = L_GP
        self.lambda_L1 = lambda_L1

    def set_requires_grad(self, net, requires_grad):
        for param in net.parameters():
            param.requires_grad = requires_grad

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        fake_AB = torch.cat((self.real_A, self.fake_B), 1)
        pred_fake = self.netD(fake_AB.detach())
        self.loss_D_fake = self.criterionGAN(pred_fake, False)
        real_AB = torch.cat((self.real_A, self.real_B), 1)
        pred_real = self.netD(real_AB)
        self.loss_D_real = self.criterionGAN(pred_real, True)
        self.gradient_penalty, self.gradients = cal_gradient_penalty(
            self.netD, real_AB, fake_AB.detach(), lambda_gp=self.L_GP)
        self.loss_D = self.loss_D_fake + self.loss_D_real + self.gradient_penalty
        self.loss_D.backward()

    def backward_G(self):
        fake_AB = torch.cat((self.real_A, self.fake_B), 1)
        pred_fake = self.netD(fake_AB)
        self.loss_G_GAN = self.criterionGAN(pred_fake, True)
        self.loss_G_L1 = self.criterionL1(self.fake_B, self.real_B) * self.lambda_L1
        self.loss_G = self.loss_G_GAN + self.loss_G_L1
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.set_requires_grad(self.netD, True)
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.set_requires_grad(self.netD, False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


torch.manual_seed(0)
model = Pix2PixModel()
for i in range(2):
    model.set_input(torch.rand(2, 3, 16, 16) * 2 - 1, torch.rand(2, 3, 16, 16) * 2 - 1)
    model.optimize_parameters()
    print(f"iter {i} loss_D {model.loss_D.item():.4f} loss_G {model.loss_G.item():.4f}")
