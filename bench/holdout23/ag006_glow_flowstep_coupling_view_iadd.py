# source: https://github.com/chaiyujin/glow-pytorch/pull/6
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""chaiyujin/glow-pytorch (#2, fixed by pull request #6 "Fixed un-computable gradients"): FlowStep.normal_flow
splits the permuted activations with `z1, z2 = thops.split_feature(z, "split")` (two slices, views of the
same tensor), runs the coupling network on z1 (its first convolution saves z1 for backward), and then
updates the other half in place: `z2 += self.f(z1)` (additive) or `z2 += shift; z2 *= scale` (affine).
Writing through the view z2 bumps the version of the storage z1 shares, so training the flow raises at
`loss.backward()`.  (Stand-ins: small random images, two flow steps, no multi-scale split.)"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class thops:
    @staticmethod
    def sum(tensor, dim=None):
        if dim is None:
            return torch.sum(tensor)
        for d in sorted(dim, reverse=True):
            tensor = tensor.sum(dim=d)
        return tensor

    @staticmethod
    def split_feature(tensor, type="split"):
        C = tensor.size(1)
        if type == "split":
            return tensor[:, :C // 2, ...], tensor[:, C // 2:, ...]
        elif type == "cross":
            return tensor[:, 0::2, ...], tensor[:, 1::2, ...]

    @staticmethod
    def cat_feature(tensor_a, tensor_b):
        return torch.cat((tensor_a, tensor_b), dim=1)

    @staticmethod
    def pixels(tensor):
        return int(tensor.size(2) * tensor.size(3))


class ActNorm2d(nn.Module):
    def __init__(self, num_features, scale=1.0):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(1, num_features, 1, 1))
        self.logs = nn.Parameter(torch.zeros(1, num_features, 1, 1))

    def forward(self, input, logdet=None, reverse=False):
        z = (input + self.bias) * torch.exp(self.logs)
        if logdet is not None:
            logdet = logdet + thops.sum(self.logs) * thops.pixels(input)
        return z, logdet


class InvertibleConv1x1(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        w_init = torch.linalg.qr(torch.randn(num_channels, num_channels))[0]
        self.weight = nn.Parameter(w_init)

    def forward(self, input, logdet=None, reverse=False):
        dlogdet = torch.slogdet(self.weight)[1] * thops.pixels(input)
        weight = self.weight.view(*self.weight.shape, 1, 1)
        z = F.conv2d(input, weight)
        if logdet is not None:
            logdet = logdet + dlogdet
        return z, logdet


class Conv2dZeros(nn.Conv2d):
    def __init__(self, in_channels, out_channels):
        super().__init__(in_channels, out_channels, 3, padding=1)
        self.weight.data.zero_()
        self.bias.data.zero_()


def f(in_channels, out_channels, hidden_channels):
    return nn.Sequential(
        nn.Conv2d(in_channels, hidden_channels, 3, padding=1), nn.ReLU(inplace=False),
        nn.Conv2d(hidden_channels, hidden_channels, kernel_size=1), nn.ReLU(inplace=False),
        Conv2dZeros(hidden_channels, out_channels))


class FlowStep(nn.Module):
    FlowCoupling = ["additive", "affine"]

    def __init__(self, in_channels, hidden_channels, flow_coupling="additive"):
        assert flow_coupling in FlowStep.FlowCoupling
        super().__init__()
        self.flow_coupling = flow_coupling
        self.actnorm = ActNorm2d(in_channels)
        self.invconv = InvertibleConv1x1(in_channels)
        if flow_coupling == "additive":
            self.f = f(in_channels // 2, in_channels // 2, hidden_channels)
        elif flow_coupling == "affine":
            self.f = f(in_channels // 2, in_channels, hidden_channels)

    def forward(self, input, logdet=None):
        return self.normal_flow(input, logdet)

    def normal_flow(self, input, logdet):
        assert input.size(1) % 2 == 0
        # 1. actnorm
        z, logdet = self.actnorm(input, logdet=logdet, reverse=False)
        # 2. permute
        z, logdet = self.invconv(z, logdet, False)
        # 3. coupling
        z1, z2 = thops.split_feature(z, "split")
        if self.flow_coupling == "additive":
            z2 += self.f(z1)  # expect: AG006
        elif self.flow_coupling == "affine":
            h = self.f(z1)
            shift, scale = thops.split_feature(h, "cross")
            scale = torch.sigmoid(scale + 2.)
            z2 += shift  # expect: AG006
            z2 *= scale  # expect: AG006
            logdet = thops.sum(torch.log(scale), dim=[1, 2, 3]) + logdet
        z = thops.cat_feature(z1, z2)
        return z, logdet


class Glow(nn.Module):
    def __init__(self, in_channels=4, hidden_channels=16, depth=2, flow_coupling="affine"):
        super().__init__()
        self.layers = nn.ModuleList(
            [FlowStep(in_channels, hidden_channels, flow_coupling) for _ in range(depth)])

    def forward(self, x):
        logdet = torch.zeros(x.size(0))
        z = x
        for layer in self.layers:
            z, logdet = layer(z, logdet)
        log_p = -0.5 * (z ** 2 + math.log(2 * math.pi))
        objective = thops.sum(log_p, dim=[1, 2, 3]) + logdet
        nll = -objective / float(math.log(2.) * x[0].numel())
        return z, nll


def main():
    torch.manual_seed(0)
    for coupling in ("affine", "additive"):
        model = Glow(flow_coupling=coupling)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        for step in range(2):
            x = torch.rand(8, 4, 8, 8) - 0.5
            optimizer.zero_grad()
            _, nll = model(x)
            loss = nll.mean()
            loss.backward()
            optimizer.step()
            print(f"{coupling} step {step} nll {loss.item():.4f}")


if __name__ == "__main__":
    main()
