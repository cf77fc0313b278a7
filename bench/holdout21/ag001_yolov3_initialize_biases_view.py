# source: https://github.com/ultralytics/yolov3/commit/1c39505d4eb0d6e4c81c38849338b79bb11efe2f
# symptom: a view of a leaf Variable that requires grad is being used in an in-place operation
"""ultralytics/yolov3 models/yolo.py before #1619: Model._initialize_biases adds the
objectness/class priors into `mi.bias.view(m.na, -1)` in place, a view of the Detect
convolutions' bias Parameters, at model construction (outside no_grad)."""
import math

import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self, c1, c2, k=3, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.LeakyReLU(0.1)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Detect(nn.Module):
    stride = None

    def __init__(self, nc=4, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)), ch=(16, 32)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        out = []
        for i in range(self.nl):
            xi = self.m[i](x[i])
            bs, _, ny, nx = xi.shape
            out.append(xi.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous())
        return out


class Model(nn.Module):
    def __init__(self, ch=3, nc=4):
        super().__init__()
        self.b1 = Conv(ch, 16, 3, 2)
        self.b2 = Conv(16, 32, 3, 2)
        self.model = nn.ModuleList([self.b1, self.b2, Detect(nc, ch=(16, 32))])
        m = self.model[-1]
        s = 64
        m.stride = torch.tensor([s / x.shape[-3] for x in self.forward(torch.zeros(1, ch, s, s))])
        m.anchors /= m.stride.view(-1, 1, 1)
        self.stride = m.stride
        self._initialize_biases()  # only run once

    def forward(self, x):
        p3 = self.b1(x)
        p4 = self.b2(p3)
        return self.model[-1]([p3, p4])

    def _initialize_biases(self, cf=None):
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)  # conv.bias(27) to (3,9)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # expect: AG001
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # expect: AG001
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


def main():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    imgs = torch.randn(2, 3, 64, 64)
    for _ in range(2):
        pred = model(imgs)
        loss = sum(p[..., 4].sigmoid().mean() for p in pred)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print('loss', loss.item())


if __name__ == '__main__':
    main()
