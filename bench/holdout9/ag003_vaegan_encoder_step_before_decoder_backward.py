# source: https://github.com/ry85/VAE-GAN/issues/1
# symptom: modified by an inplace operation
"""VAE/GAN (Larsen et al.) training loop of ry85/VAE-GAN `main.py`: one forward of `VaeGan` gives the reconstruction,
the discriminator's layer features and its class outputs; three losses (encoder, decoder, discriminator) are
backpropagated one after the other, each with its own RMSprop optimizer, "so we can selectively backprop".

`loss_encoder.backward(retain_graph=True)` is followed at once by `optimizer_encoder.step()`, which changes the
encoder weights in place; `loss_decoder.backward(retain_graph=True)` then goes back through the same retained graph
(the decoder input z comes from the encoder) and fails.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import RMSprop
from torch.optim.lr_scheduler import ExponentialLR

torch.manual_seed(0)


class EncoderBlock(nn.Module):
    def __init__(self, channel_in, channel_out):
        super(EncoderBlock, self).__init__()
        self.conv = nn.Conv2d(channel_in, channel_out, kernel_size=5, padding=2, stride=2, bias=False)
        self.bn = nn.BatchNorm2d(num_features=channel_out, momentum=0.9)

    def forward(self, ten, out=False):
        # here we want to be able to take an intermediate output for reconstruction error
        if out:
            ten = self.conv(ten)
            ten_out = ten
            ten = self.bn(ten)
            ten = F.relu(ten, False)
            return ten, ten_out
        ten = self.conv(ten)
        ten = self.bn(ten)
        return F.relu(ten, True)


class DecoderBlock(nn.Module):
    def __init__(self, channel_in, channel_out):
        super(DecoderBlock, self).__init__()
        self.conv = nn.ConvTranspose2d(channel_in, channel_out, kernel_size=5, padding=2, stride=2,
                                       output_padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channel_out, momentum=0.9)

    def forward(self, ten):
        return F.relu(self.bn(self.conv(ten)), True)


class Encoder(nn.Module):
    def __init__(self, channel_in=3, z_size=16):
        super(Encoder, self).__init__()
        self.size = 8
        self.conv = nn.Sequential(EncoderBlock(channel_in, 8), EncoderBlock(8, 16), EncoderBlock(16, 32))
        self.size = 32
        self.fc = nn.Sequential(nn.Linear(32 * 2 * 2, 64, bias=False), nn.BatchNorm1d(64, momentum=0.9), nn.ReLU(True))
        self.l_mu = nn.Linear(64, z_size)
        self.l_var = nn.Linear(64, z_size)

    def forward(self, ten):
        ten = self.conv(ten)
        ten = self.fc(ten.view(len(ten), -1))
        return self.l_mu(ten), self.l_var(ten)


class Decoder(nn.Module):
    def __init__(self, z_size, size):
        super(Decoder, self).__init__()
        self.size = size
        self.fc = nn.Sequential(nn.Linear(z_size, 2 * 2 * size, bias=False), nn.BatchNorm1d(2 * 2 * size, momentum=0.9),
                                nn.ReLU(True))
        self.conv = nn.Sequential(DecoderBlock(size, 16), DecoderBlock(16, 8), DecoderBlock(8, 8),
                                  nn.Conv2d(8, 3, kernel_size=5, stride=1, padding=2), nn.Tanh())

    def forward(self, ten):
        ten = self.fc(ten)
        ten = ten.view(len(ten), -1, 2, 2)
        return self.conv(ten)


class Discriminator(nn.Module):
    def __init__(self, channel_in=3, recon_level=2):
        super(Discriminator, self).__init__()
        self.recon_levl = recon_level
        self.conv = nn.ModuleList([nn.Sequential(nn.Conv2d(channel_in, 8, 5, 1, 2), nn.ReLU(inplace=True)),
                                   EncoderBlock(8, 16), EncoderBlock(16, 32), EncoderBlock(32, 32)])
        self.fc = nn.Sequential(nn.Linear(2 * 2 * 32, 32, bias=False), nn.BatchNorm1d(32, momentum=0.9),
                                nn.ReLU(inplace=True), nn.Linear(32, 1))

    def forward(self, ten_orig, ten_predicted, ten_sampled, mode='REC'):
        ten = torch.cat((ten_orig, ten_predicted, ten_sampled), 0)
        if mode == "REC":
            for i, lay in enumerate(self.conv):
                # we take the recon_levl-th layer as one of the outputs
                if i == self.recon_levl:
                    ten, layer_ten = lay(ten, True)
                    return layer_ten.view(len(layer_ten), -1)
                ten = lay(ten)
        for lay in self.conv:
            ten = lay(ten)
        ten = self.fc(ten.view(len(ten), -1))
        return torch.sigmoid(ten)


class VaeGan(nn.Module):
    def __init__(self, z_size=16, recon_level=2):
        super(VaeGan, self).__init__()
        self.z_size = z_size
        self.encoder = Encoder(z_size=self.z_size)
        self.decoder = Decoder(z_size=self.z_size, size=self.encoder.size)
        self.discriminator = Discriminator(channel_in=3, recon_level=recon_level)

    def reparameterize(self, mu, logvar):
        logvar = logvar.mul(0.5).exp_()
        eps = torch.randn_like(logvar)
        return eps.mul(logvar).add_(mu)

    def forward(self, x):
        mus, log_variances = self.encoder(x)
        z = self.reparameterize(mus, log_variances)
        x_tilde = self.decoder(z)
        z_p = torch.randn(len(x), self.z_size)
        x_p = self.decoder(z_p)
        disc_layer = self.discriminator(x, x_tilde, x_p, "REC")
        disc_class = self.discriminator(x, x_tilde, x_p, "GAN")
        return x_tilde, disc_class, disc_layer, mus, log_variances

    @staticmethod
    def loss(x, x_tilde, disc_layer_original, disc_layer_predicted, disc_layer_sampled, disc_class_original,
             disc_class_predicted, disc_class_sampled, mus, variances):
        nle = 0.5 * (x.view(len(x), -1) - x_tilde.view(len(x_tilde), -1)) ** 2
        kl = -0.5 * torch.sum(-variances.exp() - torch.pow(mus, 2) + variances + 1, 1)
        mse = torch.sum(0.5 * (disc_layer_original - disc_layer_predicted) ** 2, 1)
        bce_dis_original = -torch.log(disc_class_original + 1e-3)
        bce_dis_predicted = -torch.log(1 - disc_class_predicted + 1e-3)
        bce_dis_sampled = -torch.log(1 - disc_class_sampled + 1e-3)
        return nle, kl, mse, bce_dis_original, bce_dis_predicted, bce_dis_sampled


if __name__ == "__main__":
    lr, decay_lr, lambda_mse = 3e-4, 0.75, 1e-6
    margin, equilibrium = 0.35, 0.68
    net = VaeGan(z_size=16, recon_level=2)
    train_loader = [(torch.rand(8, 3, 16, 16) * 2 - 1, torch.zeros(8)) for _ in range(3)]

    optimizer_encoder = RMSprop(params=net.encoder.parameters(), lr=lr, alpha=0.9, eps=1e-8)
    lr_encoder = ExponentialLR(optimizer_encoder, gamma=decay_lr)
    optimizer_decoder = RMSprop(params=net.decoder.parameters(), lr=lr, alpha=0.9, eps=1e-8)
    lr_decoder = ExponentialLR(optimizer_decoder, gamma=decay_lr)
    optimizer_discriminator = RMSprop(params=net.discriminator.parameters(), lr=lr, alpha=0.9, eps=1e-8)
    lr_discriminator = ExponentialLR(optimizer_discriminator, gamma=decay_lr)

    for i in range(2):
        print('Epoch:%s' % (i))
        for j, (x, label) in enumerate(train_loader):
            net.train()
            batch_size = len(x)
            x_tilde, disc_class, disc_layer, mus, log_variances = net(x)

            disc_layer_original = disc_layer[:batch_size]
            disc_layer_predicted = disc_layer[batch_size:-batch_size]
            disc_layer_sampled = disc_layer[-batch_size:]
            disc_class_original = disc_class[:batch_size]
            disc_class_predicted = disc_class[batch_size:-batch_size]
            disc_class_sampled = disc_class[-batch_size:]

            nle, kl, mse, bce_dis_original, bce_dis_predicted, bce_dis_sampled = VaeGan.loss(
                x, x_tilde, disc_layer_original, disc_layer_predicted, disc_layer_sampled,
                disc_class_original, disc_class_predicted, disc_class_sampled, mus, log_variances)

            # THIS IS THE MOST IMPORTANT PART OF THE CODE
            loss_encoder = torch.sum(kl) + torch.sum(mse)
            loss_discriminator = torch.sum(bce_dis_original) + torch.sum(bce_dis_predicted) + torch.sum(bce_dis_sampled)
            loss_decoder = torch.sum(lambda_mse * mse) - (1.0 - lambda_mse) * loss_discriminator

            # selectively disable the decoder of the discriminator if they are unbalanced
            train_dis = True
            train_dec = True
            if torch.mean(bce_dis_original).item() < equilibrium - margin or \
                    torch.mean(bce_dis_predicted).item() < equilibrium - margin:
                train_dis = False
            if torch.mean(bce_dis_original).item() > equilibrium + margin or \
                    torch.mean(bce_dis_predicted).item() > equilibrium + margin:
                train_dec = False
            if train_dec is False and train_dis is False:
                train_dis = True
                train_dec = True

            net.zero_grad()
            # encoder
            loss_encoder.backward(retain_graph=True)  # expect: AG003
            optimizer_encoder.step()
            net.zero_grad()  # clean others, so they are not afflicted by encoder loss

            # decoder
            if train_dec:
                loss_decoder.backward(retain_graph=True)  # expect: AG003
                optimizer_decoder.step()
                net.discriminator.zero_grad()  # clean the discriminator

            # discriminator
            if train_dis:
                loss_discriminator.backward()  # expect: AG003
                optimizer_discriminator.step()

            print('[%02d] encoder loss: %.5f | decoder loss: %.5f | discriminator loss: %.5f'
                  % (i, loss_encoder, loss_decoder, loss_discriminator))
        lr_encoder.step()
        lr_decoder.step()
        lr_discriminator.step()
