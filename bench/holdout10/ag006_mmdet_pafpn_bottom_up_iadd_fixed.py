# source: https://github.com/open-mmlab/mmdetection/pull/9450
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""mmdetection `PAFPN.forward`, fixed as pull request #9450 fixed it: the bottom-up path is written out of place,
`inter_outs[i + 1] = inter_outs[i + 1] + self.downsample_convs[i](inter_outs[i])`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    """conv / norm / activation, as mmcv builds it (the activation is in place by default)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, act_cfg=None, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.with_activation = act_cfg is not None
        if self.with_activation:
            assert act_cfg['type'] == 'ReLU'
            self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.conv(x)
        if self.with_activation:
            x = self.activate(x)
        return x


class PAFPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, act_cfg=None):
        super().__init__()
        self.in_channels, self.out_channels, self.num_outs = in_channels, out_channels, num_outs
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        self.downsample_convs = nn.ModuleList()
        self.pafpn_convs = nn.ModuleList()
        for i in range(len(in_channels)):
            self.lateral_convs.append(ConvModule(in_channels[i], out_channels, 1, act_cfg=act_cfg, inplace=False))
            self.fpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg, inplace=False))
        for i in range(1, len(in_channels)):
            self.downsample_convs.append(ConvModule(out_channels, out_channels, 3, stride=2, padding=1, act_cfg=act_cfg,
                                                    inplace=False))
            self.pafpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg, inplace=False))

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)
        # build laterals
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            # fix runtime error of "+=" inplace operation in PyTorch 1.10
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, mode='nearest')

        # build outputs
        # part 1: from original levels
        inter_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]

        # part 2: add bottom-up path
        for i in range(0, used_backbone_levels - 1):
            inter_outs[i + 1] = inter_outs[i + 1] + self.downsample_convs[i](inter_outs[i])

        outs = []
        outs.append(inter_outs[0])
        outs.extend([self.pafpn_convs[i - 1](inter_outs[i]) for i in range(1, used_backbone_levels)])

        # part 3: add extra levels
        if self.num_outs > len(outs):
            for i in range(self.num_outs - used_backbone_levels):
                outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)


class TinyBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1), nn.Conv2d(16, 32, 3, 2, 1)])

    def forward(self, x):
        outs = []
        for stage in self.stages:
            x = F.relu(stage(x))
            outs.append(x)
        return tuple(outs)


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = TinyBackbone()
        self.neck = PAFPN([8, 16, 32], 16, num_outs=4, act_cfg=dict(type='ReLU'))
        self.cls_head = nn.Conv2d(16, 3, 1)

    def forward(self, img):
        return [self.cls_head(f) for f in self.neck(self.backbone(img))]


def loss_fn(cls_scores, gt_maps):
    return sum(F.binary_cross_entropy_with_logits(s, F.interpolate(gt_maps, size=s.shape[2:])) for s in cls_scores)


model = Detector()
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=1e-4)
images = torch.randn(4, 3, 32, 32)
gts = (torch.rand(4, 3, 32, 32) > 0.8).float()
for it in range(3):
    optimizer.zero_grad()
    losses = loss_fn(model(images), gts)
    losses.backward()
    optimizer.step()
    print(f"iter {it} loss {losses.item():.4f}")
