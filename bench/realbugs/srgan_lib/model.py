import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, scale_factor):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.PReLU())
        self.upsample = nn.Sequential(nn.Conv2d(8, 3 * scale_factor ** 2, 3, padding=1), nn.PixelShuffle(scale_factor))

    def forward(self, x):
        return (torch.tanh(self.upsample(self.block1(x))) + 1) / 2


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1),
                                 nn.Conv2d(8, 1, 1))

    def forward(self, x):
        return torch.sigmoid(self.net(x).view(x.size(0)))
