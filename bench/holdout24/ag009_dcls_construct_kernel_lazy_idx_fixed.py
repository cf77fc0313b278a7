# source: https://github.com/K-H-Ismail/Dilated-Convolution-with-Learnable-Spacings-PyTorch/pull/8
# symptom: Tensor on device cpu is not on the expected device meta
"""DCLS ConstructKernel2d, fixed as the maintainer asked in the pull request: the index grid and the
limits are built in __init__ and registered with register_buffer (as ConstructKernel2_1d already
did), so moving the model moves them."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Module, Parameter


class ConstructKernel2d(Module):
    def __init__(self, out_channels, in_channels, groups, kernel_count, dilated_kernel_size, version):
        super().__init__()
        self.version = version
        self.out_channels = out_channels
        self.in_channels = in_channels
        self.groups = groups
        self.dilated_kernel_size = dilated_kernel_size
        self.kernel_count = kernel_count
        J = torch.arange(0, self.dilated_kernel_size[0])
        I = torch.arange(0, self.dilated_kernel_size[1])
        I = I.expand(self.dilated_kernel_size[0], -1)
        J = J.expand(self.dilated_kernel_size[1], -1).t()
        IDX = torch.cat((I.unsqueeze(0), J.unsqueeze(0)), 0)
        IDX = IDX.expand(
            self.out_channels, self.in_channels // self.groups, self.kernel_count, -1, -1, -1
        ).permute(4, 5, 3, 0, 1, 2)
        lim = torch.tensor(self.dilated_kernel_size)
        lim = lim.expand(
            self.out_channels, self.in_channels // self.groups, self.kernel_count, -1
        ).permute(3, 0, 1, 2)
        self.register_buffer("IDX", IDX)
        self.register_buffer("lim", lim)

    def forward_vgauss(self, W, P, SIG):
        P = P + self.lim // 2
        SIG = SIG.abs() + 0.27
        X = ((self.IDX - P) / SIG).norm(2, dim=2)
        X = (-0.5 * X**2).exp()
        X = X / (X.sum((0, 1)) + 1e-7)
        K = (X * W).sum(-1)
        return K.permute(2, 3, 0, 1)

    def forward(self, W, P, SIG):
        if self.version == "gauss":
            return self.forward_vgauss(W, P, SIG)
        raise ValueError(self.version)


class Dcls2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_count, dilated_kernel_size, padding):
        super().__init__()
        self.padding = padding
        self.weight = Parameter(torch.randn(out_channels, in_channels, kernel_count) * 0.1)
        lim = dilated_kernel_size[0] // 2
        self.P = Parameter(torch.rand(2, out_channels, in_channels, kernel_count) * 2 * lim - lim)
        self.SIG = Parameter(torch.full((2, out_channels, in_channels, kernel_count), 0.23))
        self.DCK = ConstructKernel2d(out_channels, in_channels, 1, kernel_count, dilated_kernel_size, "gauss")

    def forward(self, x):
        kernel = self.DCK(self.weight, self.P, self.SIG)
        return F.conv2d(x, kernel, padding=self.padding)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = Dcls2d(3, 4, kernel_count=3, dilated_kernel_size=(5, 5), padding=2)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.conv(x).mean((2, 3)))


def main():
    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():
        model(torch.randn(2, 3, 8, 8))
    device = torch.device("meta")
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 3, 8, 8, device=device)
    y = torch.randint(0, 2, (4,), device=device)
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("trained one step on", device)


if __name__ == "__main__":
    main()
