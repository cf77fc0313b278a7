# source: https://github.com/kornia/kornia/pull/4079
# symptom: gk left behind by \.to\(float64\): True
"""kornia SIFTDescriptor after pull request #4079: the Gaussian weighting kernel is registered with
register_buffer(..., persistent=False), so module.to(...) converts and moves it (state_dict keys
unchanged); forward() keeps only the cast to the input dtype and no longer reassigns the pooling conv."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

pi = torch.tensor(math.pi)


def get_gaussian_kernel1d(ksize, sigma):
    x = torch.arange(ksize).float() - (ksize - 1) / 2
    g = torch.exp(-(x**2) / (2 * sigma**2))
    return g / g.sum()


def get_gaussian_kernel2d(ksize, sigma, force_even=False):
    kx = get_gaussian_kernel1d(ksize[0], sigma[0])
    ky = get_gaussian_kernel1d(ksize[1], sigma[1])
    return torch.outer(kx, ky)


def spatial_gradient(x):
    """Stand-in for kornia.filters.spatial_gradient(x, 'diff'): (B, C, 2, H, W)."""
    gx = F.pad(x[..., :, 2:] - x[..., :, :-2], (1, 1, 0, 0), mode="replicate") / 2
    gy = F.pad(x[..., 2:, :] - x[..., :-2, :], (0, 0, 1, 1), mode="replicate") / 2
    return torch.stack([gx, gy], 2)


def get_sift_pooling_kernel(ksize=25):
    ks_2 = float(ksize) / 2.0
    xc2 = ks_2 - (torch.arange(ksize).float() + 0.5 - ks_2).abs()
    return torch.ger(xc2, xc2) / (ks_2**2)


def get_sift_bin_ksize_stride_pad(patch_size, num_spatial_bins):
    ksize = 2 * int(patch_size / (num_spatial_bins + 1))
    stride = patch_size // num_spatial_bins
    pad = ksize // 4
    return ksize, stride, pad


class SIFTDescriptor(nn.Module):
    def __init__(self, patch_size=41, num_ang_bins=8, num_spatial_bins=4, rootsift=True, clipval=0.2):
        super().__init__()
        self.eps = 1e-10
        self.num_ang_bins = num_ang_bins
        self.num_spatial_bins = num_spatial_bins
        self.clipval = clipval
        self.rootsift = rootsift
        self.patch_size = patch_size
        ks = self.patch_size
        sigma = float(ks) / math.sqrt(2.0)
        self.register_buffer("gk", get_gaussian_kernel2d((ks, ks), (sigma, sigma), True), persistent=False)
        (self.bin_ksize, self.bin_stride, self.pad) = get_sift_bin_ksize_stride_pad(patch_size, num_spatial_bins)
        nw = get_sift_pooling_kernel(ksize=self.bin_ksize).float()
        self.pk = nn.Conv2d(1, 1, kernel_size=(nw.size(0), nw.size(1)), stride=(self.bin_stride, self.bin_stride),
                            padding=(self.pad, self.pad), bias=False)
        with torch.no_grad():
            self.pk.weight.copy_(nw.reshape(1, 1, nw.size(0), nw.size(1)))

    def get_weighting_kernel(self):
        return self.gk.detach()

    def forward(self, input):
        B = input.shape[0]
        grads = spatial_gradient(input)
        gx = grads[:, :, 0]
        gy = grads[:, :, 1]
        mag = torch.sqrt(gx * gx + gy * gy + self.eps)
        ori = torch.atan2(gy, gx + self.eps) + 2.0 * pi
        mag = mag * self.gk.expand_as(mag).type_as(mag)
        o_big = float(self.num_ang_bins) * ori / (2.0 * pi)
        bo0_big_ = torch.floor(o_big)
        wo1_big_ = o_big - bo0_big_
        bo0_big = bo0_big_ % self.num_ang_bins
        bo1_big = (bo0_big + 1) % self.num_ang_bins
        wo0_big = (1.0 - wo1_big_) * mag
        wo1_big = wo1_big_ * mag
        ang_bins = []
        for i in range(0, self.num_ang_bins):
            out = self.pk((bo0_big == i).to(input.dtype) * wo0_big + (bo1_big == i).to(input.dtype) * wo1_big)
            ang_bins.append(out)
        ang_bins = torch.cat(ang_bins, 1).view(B, -1)
        ang_bins = F.normalize(ang_bins, p=2)
        ang_bins = torch.clamp(ang_bins, 0.0, float(self.clipval))
        ang_bins = F.normalize(ang_bins, p=2)
        if self.rootsift:
            ang_bins = torch.sqrt(F.normalize(ang_bins, p=1) + self.eps)
        return ang_bins


class PatchMatcher(nn.Module):
    """SIFT descriptor followed by a learned projection (a small descriptor-learning setup)."""

    def __init__(self):
        super().__init__()
        self.sift = SIFTDescriptor(patch_size=32, num_ang_bins=8, num_spatial_bins=4)
        self.proj = nn.Linear(128, 32)

    def forward(self, patches):
        return F.normalize(self.proj(self.sift(patches)), dim=1)


def main():
    torch.manual_seed(0)
    model = PatchMatcher()
    opt = torch.optim.SGD(model.proj.parameters(), lr=0.1)
    for step in range(4):
        anchor = torch.rand(8, 1, 32, 32)
        positive = anchor + 0.02 * torch.randn_like(anchor)
        loss = (1 - (model(anchor) * model(positive)).sum(1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("matching loss", round(loss.item(), 4))
    model.to(torch.float64)
    desc = model(torch.rand(2, 1, 32, 32, dtype=torch.float64))
    print("descriptor dtype", desc.dtype)
    print(f"gk left behind by .to(float64): {model.sift.get_weighting_kernel().dtype != torch.float64}")


if __name__ == "__main__":
    main()
