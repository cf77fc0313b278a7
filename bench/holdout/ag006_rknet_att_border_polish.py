# source: https://github.com/AggMan96/RK-Net/issues/9
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# RK-Net's attention map att is a ReLU output (ReluBackward0); with self.polish the border rows/columns are
# zeroed in place (att[:, :, :, 0] = 0 ...), which the answer fixes with att = att.clone() first.
import torch
import torch.nn as nn


class USAM(nn.Module):
    def __init__(self, channels=8, polish=True):
        super().__init__()
        self.conv = nn.Conv2d(channels, 1, 3, padding=1)
        self.relu = nn.ReLU()
        self.polish = polish

    def forward(self, x):
        att = self.relu(self.conv(x))
        if self.polish:
            att[:, :, :, 0] = 0  # expect: AG006
            att[:, :, :, -1] = 0
            att[:, :, 0, :] = 0
            att[:, :, -1, :] = 0
        return x * torch.sigmoid(att)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.usam = USAM(8)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))

    def forward(self, x):
        return self.head(self.usam(self.stem(x)))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(2):
    loss = nn.functional.cross_entropy(model(torch.randn(2, 3, 12, 12)), torch.tensor([0, 3]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
