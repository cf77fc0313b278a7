# source: https://github.com/DataXujing/YOLO-v5/issues/23
# symptom: a view of a leaf Variable that requires grad is being used in an in-place operation
# yolo.py's Model.__init__ -> self._initialize_biases() writes b[:,4] = b[:,4] + math.log(...) into
# b = mi.bias.view(m.na, -1), a view of a Detect conv bias that requires grad (fails on torch >= 1.8).
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    stride = None

    def __init__(self, nc=3, anchors=((10, 13, 16, 30, 33, 23),), ch=(16,)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.na = len(anchors[0]) // 2
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        return [self.m[i](x[i]) for i in range(len(self.m))]


class Model(nn.Module):
    def __init__(self, cfg="yolov5s.yaml", nc=3):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), Detect(nc))
        m = self.model[-1]
        m.stride = torch.tensor([2.0])
        self.stride = m.stride
        self._initialize_biases()  # only run once

    def forward(self, x):
        y = self.model[1](self.model[0](x))
        return self.model[-1]([y])

    def _initialize_biases(self, cf=None):
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b[:, 4] = b[:, 4] + math.log(8 / (640 / s) ** 2)  # expect: AG001
            b[:, 5:] = b[:, 5:] + math.log(0.6 / (m.nc - 0.99))
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


if __name__ == "__main__":
    device = torch.device("cpu")
    model = Model("yolov5s.yaml").to(device)
    model.train()
    print(model(torch.randn(1, 3, 16, 16))[0].shape)
