# source: https://github.com/Project-MONAI/MONAI/pull/8818
# symptom: kernel left behind by \.to\(float64\): True
"""MONAI LocalNormalizedCrossCorrelationLoss after pull request #8818: the window kernel and the kernel
volume are registered with register_buffer (the misspelled require_grads line is gone), so
loss.to(...) converts and moves them with the module."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.loss import _Loss


def make_rectangular_kernel(kernel_size: int) -> torch.Tensor:
    return torch.ones(kernel_size)


def make_triangular_kernel(kernel_size: int) -> torch.Tensor:
    fsize = (kernel_size + 1) // 2
    if fsize % 2 == 0:
        fsize -= 1
    f = torch.ones((1, 1, fsize), dtype=torch.float).div(fsize)
    padding = (kernel_size - fsize) // 2 + fsize // 2
    return F.conv1d(f, f, padding=padding).reshape(-1)


kernel_dict = {"rectangular": make_rectangular_kernel, "triangular": make_triangular_kernel}


def separable_filtering(x, kernels):
    """Stand-in for monai.networks.layers.separable_filtering (zero padding, one pass per axis)."""
    spatial_dims = x.ndim - 2
    channels = x.shape[1]
    for d, k in enumerate(kernels):
        shape = [1] * spatial_dims
        shape[d] = -1
        weight = k.reshape(1, 1, *shape).repeat(channels, 1, *([1] * spatial_dims))
        pad = [0] * spatial_dims
        pad[d] = k.numel() // 2
        x = F.conv2d(x, weight, padding=tuple(pad), groups=channels)
    return x


class LocalNormalizedCrossCorrelationLoss(_Loss):
    def __init__(self, spatial_dims=2, kernel_size=3, kernel_type="rectangular", reduction="mean",
                 smooth_nr=0.0, smooth_dr=1e-5):
        super().__init__(reduction=reduction)
        self.ndim = spatial_dims
        self.kernel_size = kernel_size
        if self.kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {self.kernel_size}")
        _kernel = kernel_dict[kernel_type]
        self.register_buffer("kernel", _kernel(self.kernel_size))
        self.register_buffer("kernel_vol", self.get_kernel_vol())
        self.smooth_nr = float(smooth_nr)
        self.smooth_dr = float(smooth_dr)

    def get_kernel_vol(self):
        vol = self.kernel
        for _ in range(self.ndim - 1):
            vol = torch.matmul(vol.unsqueeze(-1), self.kernel.unsqueeze(0))
        return torch.sum(vol)

    def forward(self, pred, target):
        t2, p2, tp = target * target, pred * pred, target * pred
        kernel, kernel_vol = self.kernel.to(pred), self.kernel_vol.to(pred)
        kernels = [kernel] * self.ndim
        t_sum = separable_filtering(target, kernels=kernels)
        p_sum = separable_filtering(pred, kernels=kernels)
        t2_sum = separable_filtering(t2, kernels=kernels)
        p2_sum = separable_filtering(p2, kernels=kernels)
        tp_sum = separable_filtering(tp, kernels=kernels)
        t_avg = t_sum / kernel_vol
        p_avg = p_sum / kernel_vol
        cross = tp_sum - p_avg * t_sum
        t_var = torch.max(t2_sum - t_avg * t_sum, torch.as_tensor(self.smooth_dr, dtype=t2_sum.dtype))
        p_var = torch.max(p2_sum - p_avg * p_sum, torch.as_tensor(self.smooth_dr, dtype=p2_sum.dtype))
        ncc = (cross * cross + self.smooth_nr) / (t_var * p_var)
        return torch.mean(ncc).neg()


class RegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, moving, fixed):
        return moving + self.body(torch.cat([moving, fixed], 1))


def main():
    torch.manual_seed(0)
    net = RegNet()
    loss_fn = LocalNormalizedCrossCorrelationLoss(spatial_dims=2, kernel_size=5, kernel_type="triangular")
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step in range(5):
        fixed = torch.rand(4, 1, 16, 16)
        moving = torch.roll(fixed, 1, dims=3) + 0.05 * torch.randn(4, 1, 16, 16)
        loss = loss_fn(net(moving, fixed), fixed)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("final loss", round(loss.item(), 4))
    # evaluation in double precision: the network and the loss module are both converted
    net.to(torch.float64)
    loss_fn.to(torch.float64)
    print(f"kernel left behind by .to(float64): {loss_fn.kernel.dtype != torch.float64}")


if __name__ == "__main__":
    main()
