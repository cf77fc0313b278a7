# source: https://github.com/iMED-Lab/ER-Net/pull/3
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# ER-Net's 3D ResEncoder: out = relu(bn2(conv2(out))) and then "out += residual" changes the ReLU output that
# ReluBackward0 saved ("output 0 of ReluBackward0, is at version 1; expected version 0"); the PR writes
# out = out + residual.
import torch
import torch.nn as nn


class ResEncoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv1 = nn.Conv3d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm3d(out_channels)
        self.conv2 = nn.Conv3d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm3d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv3d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += residual  # expect: AG006
        out = self.relu(out)
        return out


class ER_Net(nn.Module):
    def __init__(self, classes=2, channels=1):
        super().__init__()
        self.enc_input = ResEncoder(channels, 4)
        self.encoder1 = ResEncoder(4, 8)
        self.down = nn.MaxPool3d(2)
        self.final = nn.Conv3d(8, classes, kernel_size=1)

    def forward(self, x):
        return self.final(self.encoder1(self.down(self.enc_input(x))))


torch.manual_seed(0)
net = ER_Net()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
criterion = nn.CrossEntropyLoss()
image, label = torch.randn(1, 1, 8, 8, 8), torch.randint(0, 2, (1, 4, 4, 4))
optimizer.zero_grad()
loss = criterion(net(image), label)
loss.backward()
optimizer.step()
print("loss", loss.item())
