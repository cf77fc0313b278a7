"""BPPNet dehazing GAN: the discriminator is stepped before the generator's adversarial loss is backpropagated.

`DU_Net.process` runs the U-Net once, computes the discriminator loss on `outputs.detach()` and, in the same pass,
the U-Net's adversarial loss from `discriminator(outputs)`. `DU_Net.backward` then does
`dis_loss.backward(retain_graph=True); dis_optimizer.step()` and only afterwards `unet_loss.backward()`: the
adversarial term still goes back through the discriminator forward whose weights the step has just rewritten in place,
so the first iteration stops with a version-counter error. (The `retain_graph=True` keeps a graph nothing else uses.)
"""
# source: https://github.com/ayu-22/BPPNet-Back-Projected-Pyramid-Network/issues/6
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
from collections import OrderedDict
from math import exp

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class UNet(nn.Module):
    def __init__(self, in_channels=3, out_channels=3, init_features=8):
        super().__init__()
        f = init_features
        self.encoder1 = UNet._block(in_channels, f, name="enc1")
        self.pool1 = nn.MaxPool2d(kernel_size=2, stride=2)
        self.encoder2 = UNet._block(f, f * 2, name="enc2")
        self.pool2 = nn.MaxPool2d(kernel_size=2, stride=2)
        self.bottleneck = UNet._block(f * 2, f * 4, name="bottleneck")
        self.upconv2 = nn.ConvTranspose2d(f * 4, f * 2, kernel_size=2, stride=2)
        self.decoder2 = UNet._block(f * 4, f * 2, name="dec2")
        self.upconv1 = nn.ConvTranspose2d(f * 2, f, kernel_size=2, stride=2)
        self.decoder1 = UNet._block(f * 2, f, name="dec1")
        self.conv = nn.Conv2d(f, out_channels, kernel_size=1)

    def forward(self, x):
        enc1 = self.encoder1(x)
        enc2 = self.encoder2(self.pool1(enc1))
        bottleneck = self.bottleneck(self.pool2(enc2))
        dec2 = self.decoder2(torch.cat((self.upconv2(bottleneck), enc2), dim=1))
        dec1 = self.decoder1(torch.cat((self.upconv1(dec2), enc1), dim=1))
        return torch.sigmoid(self.conv(dec1))

    @staticmethod
    def _block(in_channels, features, name):
        return nn.Sequential(OrderedDict([
            (name + "conv1", nn.Conv2d(in_channels, features, kernel_size=3, padding=1, bias=False)),
            (name + "norm1", nn.BatchNorm2d(features)),
            (name + "relu1", nn.ReLU(inplace=True)),
            (name + "conv2", nn.Conv2d(features, features, kernel_size=3, padding=1, bias=False)),
            (name + "norm2", nn.BatchNorm2d(features)),
            (name + "relu2", nn.ReLU(inplace=True)),
        ]))


def spectral_norm(module, mode=True):
    return nn.utils.spectral_norm(module) if mode else module


class Discriminator(nn.Module):
    def __init__(self, in_channels, use_sigmoid=True, use_spectral_norm=True):
        super().__init__()
        self.use_sigmoid = use_sigmoid
        sn = use_spectral_norm
        self.conv1 = nn.Sequential(spectral_norm(nn.Conv2d(in_channels, 16, 4, 2, 1, bias=not sn), sn), nn.LeakyReLU(0.2, inplace=True))
        self.conv2 = nn.Sequential(spectral_norm(nn.Conv2d(16, 32, 4, 2, 1, bias=not sn), sn), nn.LeakyReLU(0.2, inplace=True))
        self.conv3 = nn.Sequential(spectral_norm(nn.Conv2d(32, 1, 4, 1, 1, bias=not sn), sn))

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        conv3 = self.conv3(conv2)
        outputs = torch.sigmoid(conv3) if self.use_sigmoid else conv3
        return outputs, [conv1, conv2, conv3]


class AdversarialLoss(nn.Module):
    def __init__(self, type="hinge"):
        super().__init__()
        self.type = type

    def __call__(self, outputs, is_real, is_disc=None):
        if is_real:
            return -torch.log(outputs).mean()
        return -torch.log(1 - outputs).mean()


def gaussian(window_size, sigma):
    gauss = torch.tensor([exp(-(x - window_size // 2) ** 2 / float(2 * sigma ** 2)) for x in range(window_size)])
    return gauss / gauss.sum()


def create_window(window_size, channel):
    w1 = gaussian(window_size, 1.5).unsqueeze(1)
    w2 = w1.mm(w1.t()).float().unsqueeze(0).unsqueeze(0)
    return w2.expand(channel, 1, window_size, window_size).contiguous()


def ssim(img1, img2, window_size=11):
    channel = img1.size(1)
    window = create_window(window_size, channel)
    mu1 = F.conv2d(img1, window, padding=window_size // 2, groups=channel)
    mu2 = F.conv2d(img2, window, padding=window_size // 2, groups=channel)
    sigma1_sq = F.conv2d(img1 * img1, window, padding=window_size // 2, groups=channel) - mu1.pow(2)
    sigma2_sq = F.conv2d(img2 * img2, window, padding=window_size // 2, groups=channel) - mu2.pow(2)
    sigma12 = F.conv2d(img1 * img2, window, padding=window_size // 2, groups=channel) - mu1 * mu2
    C1, C2 = 0.01 ** 2, 0.03 ** 2
    ssim_map = ((2 * mu1 * mu2 + C1) * (2 * sigma12 + C2)) / ((mu1.pow(2) + mu2.pow(2) + C1) * (sigma1_sq + sigma2_sq + C2))
    return ssim_map.mean()


class DU_Net(nn.Module):
    def __init__(self, unet_input, unet_output, discriminator_input):
        super().__init__()
        self.unet = UNet(in_channels=unet_input, out_channels=unet_output)
        self.discriminator = Discriminator(in_channels=discriminator_input, use_sigmoid=True)
        self.criterion = nn.MSELoss()
        self.adversarial_loss = AdversarialLoss(type="hinge")
        self.unet_optimizer = optim.Adam(self.unet.parameters(), lr=1e-4, betas=(0.9, 0.999))
        self.dis_optimizer = optim.Adam(self.discriminator.parameters(), lr=1e-4, betas=(0.9, 0.999))

    def process(self, haze_images, dehaze_images):
        self.unet_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()
        unet_loss = 0
        dis_loss = 0
        outputs = self.unet(haze_images)

        # discriminator loss
        dis_real, _ = self.discriminator(dehaze_images)
        dis_fake, _ = self.discriminator(outputs.detach())
        dis_loss += (self.adversarial_loss(dis_real, True, True) + self.adversarial_loss(dis_fake, False, True)) / 2

        # unet loss
        unet_fake, _ = self.discriminator(outputs)
        unet_loss += self.adversarial_loss(unet_fake, True, False) * 0.7
        unet_criterion = self.criterion(outputs, dehaze_images)
        unet_loss += unet_criterion
        ssim_loss = (1 - ssim(outputs, dehaze_images)) * 2
        unet_loss += ssim_loss
        return unet_loss, dis_loss, unet_criterion, 1 - ssim_loss / 2

    def backward(self, unet_loss, dis_loss):
        dis_loss.backward(retain_graph=True)  # expect: AG003
        self.dis_optimizer.step()

        unet_loss.backward()  # expect: AG017
        self.unet_optimizer.step()


def train(model, batches, max_epochs):
    for epoch in range(max_epochs):
        mse_epoch = ssim_epoch = 0.0
        for haze_images, dehaze_images in batches:
            unet_loss, dis_loss, mse, ssim_val = model.process(haze_images, dehaze_images)
            model.backward(unet_loss, dis_loss)
            mse_epoch += mse.item()
            ssim_epoch += ssim_val.item()
        print(f"epoch {epoch + 1} mse {mse_epoch / len(batches):.4f} ssim {ssim_epoch / len(batches):.4f}")


def main():
    torch.manual_seed(0)
    clear = torch.rand(8, 3, 32, 32)
    haze = 0.6 * clear + 0.4 * torch.rand(8, 1, 1, 1)
    batches = [(haze[i:i + 2], clear[i:i + 2]) for i in range(0, 8, 2)]
    model = DU_Net(3, 3, 3)
    train(model, batches, max_epochs=2)


if __name__ == "__main__":
    main()
