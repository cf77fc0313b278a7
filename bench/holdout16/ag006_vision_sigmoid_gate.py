# source: written for bench/holdout16 from RULES.md AG006 (custom nn.Module: a sigmoid channel gate is forced open by index assignment in forward)
# symptom: modified by an inplace operation
"""Squeeze-and-excitation style gating on a small image classifier; the first channels are always kept open."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ChannelGate(nn.Module):
    def __init__(self, channels, always_open=2):
        super().__init__()
        self.fc = nn.Linear(channels, channels)
        self.always_open = always_open

    def forward(self, x):
        gate = torch.sigmoid(self.fc(x.mean((2, 3))))
        gate[:, : self.always_open] = 1.0  # expect: AG006
        return x * gate[:, :, None, None]


class GatedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 3, padding=1)
        self.gate = ChannelGate(12)
        self.cls = nn.Linear(12, 4)

    def forward(self, x):
        return self.cls(self.gate(F.relu(self.conv(x))).mean((2, 3)))


model = GatedNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    images, labels = torch.randn(8, 3, 16, 16), torch.randint(0, 4, (8,))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
