# source: https://github.com/acrarshin/RPNet/pull/6
# symptom: modified by an inplace operation
"""RPNet (R-peak detection, `network.py`): the encoder stage `e2` of `IncUNet` opens with
`nn.LeakyReLU(0.2, inplace=True)`, applied to the output of `e1`, whose last module is an `IncResBlock`
ending in an out-of-place `nn.ReLU()`. ReluBackward saved that output, the in-place LeakyReLU rewrites
it, and `loss.backward()` fails in the training notebook (issue #5, fixed by pull request #6)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class IncResBlock(nn.Module):
    def __init__(self, inplanes, planes, convsize=7, convpadding=3):
        super().__init__()
        self.input_conv1x1 = nn.Conv1d(inplanes, planes, kernel_size=1, bias=False)
        self.conv1_1 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 4, kernel_size=convsize, padding=convpadding),
            nn.BatchNorm1d(planes // 4))
        self.conv1_2 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 4, kernel_size=1, bias=False),
            nn.BatchNorm1d(planes // 4),
            nn.LeakyReLU(0.2),
            nn.Conv1d(planes // 4, planes // 4, kernel_size=convsize + 2, padding=convpadding + 1),
            nn.BatchNorm1d(planes // 4))
        self.conv1_3 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 4, kernel_size=1, bias=False),
            nn.BatchNorm1d(planes // 4),
            nn.LeakyReLU(0.2),
            nn.Conv1d(planes // 4, planes // 4, kernel_size=convsize + 4, padding=convpadding + 2),
            nn.BatchNorm1d(planes // 4))
        self.conv1_4 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 4, kernel_size=1, bias=False),
            nn.BatchNorm1d(planes // 4),
            nn.LeakyReLU(0.2),
            nn.Conv1d(planes // 4, planes // 4, kernel_size=convsize + 6, padding=convpadding + 3),
            nn.BatchNorm1d(planes // 4))
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = self.input_conv1x1(x)
        out = torch.cat([self.conv1_1(x), self.conv1_2(x), self.conv1_3(x), self.conv1_4(x)], 1)
        out += residual
        return self.relu(out)


class IncUNet(nn.Module):
    def __init__(self, in_channels=1):
        super().__init__()
        self.e1 = nn.Sequential(
            nn.Conv1d(in_channels, 16, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(16),
            nn.LeakyReLU(0.2),
            IncResBlock(16, 16))
        self.e2 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),  # expect: AG006
            nn.Conv1d(16, 32, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(32),
            IncResBlock(32, 32))
        self.e2add = nn.Sequential(
            nn.Conv1d(32, 32, kernel_size=3, padding=1),
            nn.BatchNorm1d(32))
        self.e3 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv1d(32, 32, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(32),
            IncResBlock(32, 32))
        self.d1 = nn.Sequential(
            nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(32, 32, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(32))
        self.d2 = nn.Sequential(
            nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(64, 16, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(16))
        self.out_l = nn.Sequential(
            nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(32, in_channels, kernel_size=4, stride=2, padding=1))

    def forward(self, x):
        en1 = self.e1(x)
        en2 = self.e2(en1)
        en2add = self.e2add(en2)
        en3 = self.e3(en2add)
        de1 = torch.cat([en2add, self.d1(en3)], 1)
        de2 = torch.cat([en1, self.d2(de1)], 1)
        return self.out_l(de2)


def main():
    model = IncUNet(in_channels=1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.SmoothL1Loss()
    ecg = torch.randn(8, 1, 128)
    peaks = torch.zeros(8, 1, 128)
    peaks[:, :, ::32] = 1.0  # distance-transform-like R-peak target
    for epoch in range(3):
        model.train()
        optimizer.zero_grad()
        out = model(ecg)
        loss = criterion(out, peaks)
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
