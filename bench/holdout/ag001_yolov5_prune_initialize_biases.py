# source: https://github.com/xhwNobody/yolov5_prune_sfp/issues/17
# symptom: a view of a leaf Variable that requires grad is being used in an in-place operation
# model.py's Model.__init__ calls self._initialize_biases(), which takes b = mi.bias.view(m.na, -1) of each Detect
# conv and adds the objectness / class priors with b[:, 4] += ... while the bias still requires grad.
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=4, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(8, 16)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.stride = torch.tensor([8.0, 16.0])
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, xs):
        return [conv(x) for conv, x in zip(self.m, xs)]


class Model(nn.Module):
    def __init__(self, nc=80):
        super().__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1)])
        self.head_self = Detect(nc=nc)
        self._initialize_biases()  # only run once

    def _initialize_biases(self, cf=None):
        m = self.head_self
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # expect: AG001
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, x):
        feats = []
        for layer in self.backbone:
            x = layer(x)
            feats.append(x)
        return self.head_self(feats)


model_dst = Model(nc=4)
print([o.shape for o in model_dst(torch.randn(1, 3, 32, 32))])
