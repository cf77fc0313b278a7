"""A two-scale stand-in for RA-CNN: a classifier at full resolution and one on an attended, zoomed crop."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoScaleNet(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.scale1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, n_classes))
        self.apn = nn.Linear(3 * 16 * 16, 3)
        self.scale2 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, n_classes))

    def forward(self, x):
        s1 = self.scale1(x)
        box = torch.sigmoid(self.apn(x.flatten(1)))
        zoomed = F.interpolate(x * box[:, :1, None, None], scale_factor=2, mode="bilinear", align_corners=False)
        s2 = self.scale2(zoomed)
        return [s1, s2]
