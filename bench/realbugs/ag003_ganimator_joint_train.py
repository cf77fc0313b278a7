# source: https://github.com/PeizhuoLi/ganimator/issues/5
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# ganimator's joint_train runs every stage's generator, then calls each GAN_model.optimize_parameters(gen=True);
# backward_G does loss_total.backward(retain_graph=True) and optimizerG.step() on a graph the next stage still shares.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv1dModel(nn.Module):
    def __init__(self, channels, kernel_size=3, last_active=None):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(len(channels) - 1):
            seq = [nn.Conv1d(channels[i], channels[i + 1], kernel_size, padding=(kernel_size - 1) // 2)]
            if i < len(channels) - 2:
                seq.append(nn.LeakyReLU(negative_slope=0.2, inplace=True))
            elif last_active is not None:
                seq.append(last_active)
            self.layers.append(nn.Sequential(*seq))

    def forward(self, input, prev_img=None):
        for layer in self.layers:
            input = layer(input)
        return input


class GAN_loss(nn.Module):
    def forward(self, prediction, target_is_real):
        target = torch.ones_like(prediction) if target_is_real else torch.zeros_like(prediction)
        return F.mse_loss(prediction, target)


class GAN_model:
    def __init__(self, gen, disc, args):
        self.gen = gen
        self.disc = disc
        self.optimizerG = torch.optim.Adam(gen.parameters(), lr=args["lr_g"])
        self.optimizerD = torch.optim.Adam(disc.parameters(), lr=args["lr_d"])
        self.criterion_gan = GAN_loss()
        self.args = args
        self.fake_res = None
        self.loss_G = torch.tensor(0.0)

    def disc_requires_grad_(self, requires_grad):
        for para in self.disc.parameters():
            para.requires_grad = requires_grad

    def backward_D_basic(self, netD, real, fake):
        loss_D_real = self.criterion_gan(netD(real), True)
        loss_D_fake = self.criterion_gan(netD(fake.detach()), False)
        loss_D = (loss_D_real + loss_D_fake) * 0.5
        loss_D.backward()
        return loss_D

    def backward_D(self):
        self.loss_D = self.backward_D_basic(self.disc, self.real_res, self.fake_res.detach())

    def backward_G(self):
        pred_fake = self.disc(self.fake_res)
        self.loss_G = self.criterion_gan(pred_fake, True)
        loss_total = self.loss_G
        self.loss_G_total = loss_total
        loss_total.backward(retain_graph=True)  # expect: AG003

    def forward_proxy(self, real, img_base=0):
        self.delta = self.gen.output
        self.real_res = real
        self.fake_res = self.delta + img_base

    def optimize_parameters(self, gen=True, disc=True, rec=False):
        if gen:
            self.disc_requires_grad_(False)
            self.optimizerG.zero_grad()
            self.backward_G()
            self.optimizerG.step()
        if disc:
            self.disc_requires_grad_(True)
            self.optimizerD.zero_grad()
            self.backward_D()
            self.optimizerD.step()


def joint_train(reals, gens, gan_models, n_iter):
    for it in range(n_iter):
        imgs = [torch.zeros_like(reals[0])]
        for i, gen in enumerate(gens):
            base = F.interpolate(imgs[-1], size=reals[i].shape[-1], mode="linear") if i else imgs[-1]
            gen.output = gen(torch.randn_like(base) * 0.1 + base)
            gan_models[i].forward_proxy(reals[i], base)
            imgs.append(gan_models[i].fake_res)
        optimize_lambda = lambda x: x.optimize_parameters(gen=True, disc=False, rec=False)
        list(map(optimize_lambda, gan_models))
        optimize_lambda = lambda x: x.optimize_parameters(gen=False, disc=True, rec=False)
        list(map(optimize_lambda, gan_models))
        print("iter", it, [round(m.loss_G.item(), 4) for m in gan_models])


torch.manual_seed(0)
args = {"lr_g": 1e-3, "lr_d": 1e-3}
reals = [torch.randn(1, 6, 8), torch.randn(1, 6, 16)]
gens = [Conv1dModel([6, 16, 6]) for _ in reals]
discs = [Conv1dModel([6, 16, 1]) for _ in reals]
gan_models = [GAN_model(g, d, args) for g, d in zip(gens, discs)]
joint_train(reals, gens, gan_models, n_iter=3)
