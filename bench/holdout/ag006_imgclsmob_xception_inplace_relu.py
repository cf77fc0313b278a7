# source: https://github.com/osmr/imgclsmob/issues/13
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# imgclsmob's Xception units compute identity = self.identity_conv(x) and then run the body, whose first
# DwsConvBlock applies self.activ = nn.ReLU(inplace=True) to that same x: the ReLU overwrites the input the
# identity convolution saved for backward. "Removing inplace=True fixes this."
import torch
import torch.nn as nn


class DwsConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.dw_conv = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.pw_conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x):
        return self.pw_conv(self.dw_conv(x))


class DwsConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, activate):
        super().__init__()
        self.activate = activate
        if self.activate:
            self.activ = nn.ReLU(inplace=True)
        self.conv = DwsConv(in_channels, out_channels)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        if self.activate:
            x = self.activ(x)  # expect: AG006
        x = self.conv(x)
        x = self.bn(x)
        return x


class XceptionUnit(nn.Module):
    def __init__(self, in_channels, out_channels, strides, reps, start_with_relu=True):
        super().__init__()
        self.resize_identity = (in_channels != out_channels) or (strides != 1)
        if self.resize_identity:
            self.identity_conv = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, strides, bias=False),
                                               nn.BatchNorm2d(out_channels))
        self.body = nn.Sequential()
        for i in range(reps):
            self.body.add_module(f"block{i + 1}", DwsConvBlock(in_channels if i == 0 else out_channels, out_channels,
                                                              activate=(start_with_relu or i != 0)))
        if strides != 1:
            self.body.add_module("pool", nn.MaxPool2d(3, strides, 1))

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_conv(x)
        else:
            identity = x
        x = self.body(x)
        x = x + identity
        return x


class Xception(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.init_block = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.stage1 = XceptionUnit(8, 16, strides=2, reps=2, start_with_relu=False)
        self.stage2 = XceptionUnit(16, 32, strides=2, reps=2, start_with_relu=True)
        self.output = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, num_classes))

    def forward(self, x):
        return self.output(self.stage2(self.stage1(self.init_block(x))))


def train(train_loader, model, criterion, optimizer):
    model.train()
    for i, (input, target) in enumerate(train_loader):
        output = model(input)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(i, loss.item())


torch.manual_seed(0)
net = Xception()
train([(torch.randn(2, 3, 32, 32), torch.tensor([1, 2]))] * 2, net, nn.CrossEntropyLoss(),
      torch.optim.SGD(net.parameters(), lr=0.01))
