# source: https://github.com/mperezcarrasco/PyTorch-BiGAN/issues/1
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# TrainerBiGAN.train computes out_true/out_fake once and builds both loss_d and loss_ge from them; after
# loss_d.backward(retain_graph=True) and optimizer_d.step(), loss_ge.backward() needs D's pre-step weights.
import torch
import torch.nn as nn
from torch import optim

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.LeakyReLU(0.1), nn.Linear(32, 16), nn.Tanh())

    def forward(self, z):
        return self.net(z.flatten(1))


class Encoder(nn.Module):
    def __init__(self, z_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.1), nn.Linear(32, z_dim))

    def forward(self, x):
        return self.net(x).view(x.size(0), -1, 1, 1)


class Discriminator(nn.Module):
    def __init__(self, z_dim, wasserstein=False):
        super().__init__()
        self.wass = wasserstein
        self.net = nn.Sequential(nn.Linear(16 + z_dim, 32), nn.LeakyReLU(0.1), nn.Linear(32, 1))

    def forward(self, x, z):
        out = self.net(torch.cat([x, z.flatten(1)], dim=1))
        return out if self.wass else torch.sigmoid(out)


def weights_init_normal(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0.0, 0.02)
        nn.init.zeros_(m.bias)


class Args:
    latent_dim = 4
    wasserstein = False
    lr_adam = 1e-4
    num_epochs = 1


class TrainerBiGAN:
    def __init__(self, args, data, device):
        self.args = args
        self.train_loader = data
        self.device = device

    def train(self):
        """Training the BiGAN"""
        self.G = Generator(self.args.latent_dim).to(self.device)
        self.E = Encoder(self.args.latent_dim).to(self.device)
        self.D = Discriminator(self.args.latent_dim, self.args.wasserstein).to(self.device)
        self.G.apply(weights_init_normal)
        self.E.apply(weights_init_normal)
        self.D.apply(weights_init_normal)

        optimizer_ge = optim.Adam(list(self.G.parameters()) + list(self.E.parameters()), lr=self.args.lr_adam)
        optimizer_d = optim.Adam(self.D.parameters(), lr=self.args.lr_adam)
        criterion = nn.BCELoss()
        for epoch in range(self.args.num_epochs):
            for x, _ in self.train_loader:
                y_true = torch.ones((x.size(0), 1)).to(self.device)
                y_fake = torch.zeros((x.size(0), 1)).to(self.device)
                noise1 = torch.Tensor(x.size()).normal_(0, 0.1 * (self.args.num_epochs - epoch) / self.args.num_epochs)
                noise2 = torch.Tensor(x.size()).normal_(0, 0.1 * (self.args.num_epochs - epoch) / self.args.num_epochs)

                optimizer_d.zero_grad()
                optimizer_ge.zero_grad()

                z_fake = torch.randn((x.size(0), self.args.latent_dim, 1, 1)).to(self.device)
                x_fake = self.G(z_fake)
                x_true = x.float().to(self.device)
                z_true = self.E(x_true)

                out_true = self.D(x_true + noise1, z_true)
                out_fake = self.D(x_fake + noise2, z_fake)

                loss_d = criterion(out_true, y_true) + criterion(out_fake, y_fake)
                loss_ge = criterion(out_fake, y_true) + criterion(out_true, y_fake)

                loss_d.backward(retain_graph=True)
                optimizer_d.step()

                loss_ge.backward()  # expect: AG017
                optimizer_ge.step()
            print("Training... Epoch: {}, Discriminator Loss: {:.3f}, Generator Loss: {:.3f}".format(
                epoch, loss_d.item(), loss_ge.item()))


data = [(torch.rand(8, 16) * 2 - 1, None) for _ in range(2)]
TrainerBiGAN(Args(), data, torch.device("cpu")).train()
