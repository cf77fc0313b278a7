# source: https://github.com/fahmirevo/l-to-rgb/blob/4917ec0c580800e6928aa459d4edf21f14522e44/main.py
# symptom: TypeError: type 'Tensor' is not subscriptable
# An L-to-RGB colourisation GAN: the train_g helper builds the generator's target label as
# torch.Tensor[[0, 1]] (brackets instead of a call), so the first generator step raises a TypeError.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class SqueezeGAN(nn.Module):
    """Generator: a 1-channel L image in, a 3-channel RGB image out."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


class SqueezeNet(nn.Module):
    """Discriminator: [real, fake] class probabilities for an RGB image."""

    def __init__(self, in_ch, hidden):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(in_ch, hidden, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(hidden, 2)

    def forward(self, x):
        return torch.softmax(self.classifier(self.features(x).flatten(1)), dim=1)


def data_iterator(train_size, input_max):
    while True:
        rgb = torch.rand(1, 3, input_max, input_max)
        yield rgb.mean(dim=1, keepdim=True), rgb, False


def train_d(discriminator, inputs, targets, optimizer, criterion=nn.BCELoss()):
    optimizer.zero_grad()
    outputs = discriminator(inputs)
    loss = criterion(outputs, targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return outputs


def train_g(generator, outputs, d_pred, optimizer, criterion=nn.BCELoss()):
    optimizer.zero_grad()
    loss = criterion(d_pred, torch.Tensor[[0, 1]])  # expect: AG013
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(loss.item())


epochs = 1
train_size = 4
input_max = 8

g = SqueezeGAN()
g_optim = optim.Adam(g.parameters())
d = SqueezeNet(3, 3)
d_optim = optim.Adam(d.parameters())
data = data_iterator(train_size, input_max)

for epoch in range(epochs):
    for step in range(train_size):
        g_optim.zero_grad()
        d_optim.zero_grad()
        inputs, reals, res = next(data)
        train_d(d, reals, torch.Tensor([[1, 0]]), d_optim)
        generated = g(inputs)
        d_pred = train_d(d, generated, torch.Tensor([[0, 1]]), d_optim)
        train_g(g, generated, d_pred, g_optim)
