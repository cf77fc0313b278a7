# source: https://github.com/lyongo/NWPU-MOC/issues/4
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# Clean twin: the thread's fix, the top-down sum is written out of place.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU()

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))


class FPN_Head(nn.Module):
    def __init__(self, in_channels=(8, 16, 32), channels=16, num_classes=2):
        super().__init__()
        self.lateral_convs = nn.ModuleList(ConvModule(c, channels, 1) for c in in_channels)
        self.fpn_convs = nn.ModuleList(ConvModule(channels, channels, 3) for _ in in_channels)
        self.cls_seg = nn.Conv2d(channels, num_classes, 1)

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, mode='nearest')
        fpn_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        return self.cls_seg(fpn_outs[0])


torch.manual_seed(0)
head = FPN_Head()
optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
feats = [torch.randn(2, 8, 16, 16), torch.randn(2, 16, 8, 8), torch.randn(2, 32, 4, 4)]
target = torch.randint(0, 2, (2, 16, 16))
for epoch in range(2):
    loss = F.cross_entropy(head(feats), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
