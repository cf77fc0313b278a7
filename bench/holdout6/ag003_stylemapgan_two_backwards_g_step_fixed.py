# source: https://github.com/naver-ai/StyleMapGAN/issues/16
# symptom: Trying to backward through the graph a second time
"""Twin (the reporter's fix in the thread: one backward on `g_loss + w_rec_loss * lambda_w_rec_loss`). StyleMapGAN `train.py`: the generator step gets `adv_loss, w_rec_loss, stylecode = model(None, "G")` from one
forward of the DDP wrapper (mapping -> generator -> discriminator / encoder), then calls `g_loss.backward()` and
`(w_rec_loss * lambda_w_rec_loss).backward()` separately; both graphs share the generator's forward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MappingNetwork(nn.Module):
    def __init__(self, latent=16, stylemap=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, 64), nn.LeakyReLU(0.2), nn.Linear(64, stylemap * 4 * 4))
        self.stylemap = stylemap

    def forward(self, z):
        return self.net(z).view(z.size(0), self.stylemap, 4, 4)


class Generator(nn.Module):
    def __init__(self, stylemap=8):
        super().__init__()
        self.up = nn.Sequential(nn.ConvTranspose2d(stylemap, 16, 4, 2, 1), nn.LeakyReLU(0.2),
                                nn.ConvTranspose2d(16, 3, 4, 2, 1), nn.Tanh())

    def forward(self, stylecode):
        return self.up(stylecode)


class Encoder(nn.Module):
    def __init__(self, stylemap=8):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(16, stylemap, 4, 2, 1))

    def forward(self, img):
        return self.down(img)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(16 * 8 * 8, 1))

    def forward(self, img):
        return self.net(img)


def d_logistic_loss(real_pred, fake_pred):
    return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred)


class DDPModel(nn.Module):
    def __init__(self, latent=16):
        super().__init__()
        self.latent = latent
        self.mapping_network = MappingNetwork(latent)
        self.generator = Generator()
        self.encoder = Encoder()
        self.discriminator = Discriminator()

    def forward(self, real_img, mode, batch=4):
        if mode == "G":
            z = torch.randn(batch, self.latent)
            stylecode = self.mapping_network(z)
            fake_img = self.generator(stylecode)
            fake_pred = self.discriminator(fake_img)
            adv_loss = g_nonsaturating_loss(fake_pred)
            fake_stylecode = self.encoder(fake_img)
            w_rec_loss = F.mse_loss(stylecode, fake_stylecode, reduction="none").flatten(1).mean(1)
            return adv_loss, w_rec_loss, stylecode
        if mode == "D":
            with torch.no_grad():
                z = torch.randn(real_img.size(0), self.latent)
                fake_img = self.generator(self.mapping_network(z))
            return self.discriminator(real_img), self.discriminator(fake_img)
        raise ValueError(mode)


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


class Args:
    lambda_adv_loss = 1.0
    lambda_w_rec_loss = 1.0
    iter = 3


def train(args, model, g_optim, e_optim, d_optim, loader):
    for i, real_img in zip(range(args.iter), loader):
        requires_grad(model.discriminator, True)
        requires_grad(model.generator, False)
        real_pred, fake_pred = model(real_img, "D")
        d_loss = d_logistic_loss(real_pred, fake_pred)
        d_optim.zero_grad()
        d_loss.backward()
        d_optim.step()

        requires_grad(model.discriminator, False)
        requires_grad(model.generator, True)
        adv_loss, w_rec_loss, stylecode = model(None, "G")
        adv_loss = adv_loss.mean()
        w_rec_loss = w_rec_loss.mean()
        g_loss = adv_loss * args.lambda_adv_loss
        g_optim.zero_grad()
        e_optim.zero_grad()
        g_w_rec_loss = g_loss + w_rec_loss * args.lambda_w_rec_loss
        g_w_rec_loss.backward()
        g_optim.step()
        e_optim.step()
        print(f"iter {i} | d {d_loss.item():.4f} | adv {adv_loss.item():.4f} | w_rec {w_rec_loss.item():.4f}")


model = DDPModel()
g_optim = torch.optim.Adam(list(model.generator.parameters()) + list(model.mapping_network.parameters()), lr=2e-3)
e_optim = torch.optim.Adam(model.encoder.parameters(), lr=2e-3)
d_optim = torch.optim.Adam(model.discriminator.parameters(), lr=2e-3)
loader = [torch.rand(4, 3, 16, 16) * 2 - 1 for _ in range(3)]
train(Args(), model, g_optim, e_optim, d_optim, loader)
