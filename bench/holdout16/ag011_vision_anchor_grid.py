# source: written for bench/holdout16 from RULES.md AG011 (helper builds normalised anchor centres with a float step via torch.range)
# symptom: torch\.range is deprecated
"""Keypoint heatmap regression: anchor centres on a normalised grid, a tiny conv net predicts offsets."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def anchor_centres(step=0.25):
    ticks = torch.range(0.0, 1.0, step)  # expect: AG011
    gy, gx = torch.meshgrid(ticks, ticks, indexing="ij")
    return torch.stack([gx, gy], -1).view(-1, 2)


anchors = anchor_centres()
net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                    nn.Linear(8, anchors.numel()))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(3):
    img = torch.rand(4, 1, 20, 20)
    target = anchors + 0.05 * torch.randn(4, *anchors.shape)
    opt.zero_grad()
    pred = anchors + net(img).view(4, -1, 2)
    loss = F.smooth_l1_loss(pred, target)
    loss.backward()
    opt.step()
    print(f"step {step} anchors {anchors.shape[0]} loss {loss.item():.4f}")
