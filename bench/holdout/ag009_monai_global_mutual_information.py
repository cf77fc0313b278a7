# source: https://github.com/Project-MONAI/MONAI/pull/8872
# symptom: bin_centers after \.to\(torch\.float64\): torch\.float32
# monai/losses/image_dissimilarity.py's GlobalMutualInformationLoss.__init__ keeps bin_centers and preterm as plain
# tensor attributes, so loss.to(device) leaves them behind ("loss.preterm still reporting cpu"); the PR registers
# them as non-persistent buffers. On CPU the same shows with a dtype move.
import torch
from torch.nn.modules.loss import _Loss


class GlobalMutualInformationLoss(_Loss):
    def __init__(self, kernel_type="gaussian", num_bins=23, sigma_ratio=0.5, smooth_nr=1e-7, smooth_dr=1e-7):
        super().__init__()
        if num_bins <= 0:
            raise ValueError("num_bins must > 0, got {num_bins}")
        bin_centers = torch.linspace(0.0, 1.0, num_bins)
        sigma = torch.mean(bin_centers[1:] - bin_centers[:-1]) * sigma_ratio
        self.kernel_type = kernel_type
        self.num_bins = num_bins
        if self.kernel_type == "gaussian":
            self.preterm = 1 / (2 * sigma**2)  # expect: AG009
            self.bin_centers = bin_centers[None, None, ...]  # expect: AG009
        self.smooth_nr = float(smooth_nr)
        self.smooth_dr = float(smooth_dr)

    def parzen_windowing_gaussian(self, img):
        img = torch.clamp(img, 0, 1)
        img = img.reshape(img.shape[0], -1, 1)
        weight = torch.exp(-self.preterm.to(img) * (img - self.bin_centers.to(img)) ** 2)
        weight = weight / torch.sum(weight, dim=-1, keepdim=True)
        probability = torch.mean(weight, dim=-2, keepdim=True)
        return weight, probability

    def forward(self, pred, target):
        wa, pa = self.parzen_windowing_gaussian(pred)
        wb, pb = self.parzen_windowing_gaussian(target)
        pab = torch.bmm(wa.permute(0, 2, 1), wb.to(wa)).div(wa.shape[1])
        papb = torch.bmm(pa.permute(0, 2, 1), pb.to(pa))
        mi = torch.sum(pab * torch.log((pab + self.smooth_nr) / (papb + self.smooth_dr) + self.smooth_dr), dim=(1, 2))
        return torch.mean(mi).neg()


torch.manual_seed(0)
loss = GlobalMutualInformationLoss().to(torch.float64)
print("bin_centers after .to(torch.float64):", loss.bin_centers.dtype, "| preterm:", loss.preterm.dtype)
pred = torch.rand(2, 1, 8, 8, dtype=torch.float64, requires_grad=True)
value = loss(pred, torch.rand(2, 1, 8, 8, dtype=torch.float64))
value.backward()
print("loss", value.item())
