"""open-retina Spatial Contrast model: the contrast weight is clamped in place after every optimizer step.

The spatial contrast (SC) model predicts a ganglion cell's rate as `a * softplus(b * (imean + w * lsc) + c)` from
frozen STA filters; only `w, a, b, c` are learned. Its `optimizer_step` hook runs `optimizer.step(closure)` and then
keeps the contrast weight non-negative with `self.nonlinearity.w.clamp_(min=0.0)`, an in-place op on a parameter
(a leaf that requires grad) outside `torch.no_grad()`, so the first training step raises.

Clean twin: the clamp runs under `torch.no_grad()`; the pull request's review (and the merged file) write it
`self.nonlinearity.w.data.clamp_(min=0.0)`, the same update, written here without `.data`.
"""
# source: https://github.com/open-retina/open-retina/pull/180
# symptom: a leaf Variable that requires grad is being used in an in-place operation
import math

import torch
import torch.nn.functional as F
from torch import nn


def gaussian_spatial_filter(h, w, center_y, center_x, sigma, sigma_contour=3.0):
    ys = torch.arange(h, dtype=torch.float32)[:, None]
    xs = torch.arange(w, dtype=torch.float32)[None, :]
    d2 = ((ys - center_y) ** 2 + (xs - center_x) ** 2) / sigma ** 2
    g = torch.exp(-0.5 * d2)
    return g * (d2 <= sigma_contour ** 2).float()


class SpatialContrastNonlinearity(nn.Module):
    def __init__(self, w_init=0.0, a_init=1.0, b_init=1.0, c_init=0.0):
        super().__init__()
        self.w = nn.Parameter(torch.tensor(w_init, dtype=torch.float32))
        self.a = nn.Parameter(torch.tensor(a_init, dtype=torch.float32))
        self.b = nn.Parameter(torch.tensor(b_init, dtype=torch.float32))
        self.c = nn.Parameter(torch.tensor(c_init, dtype=torch.float32))

    def forward(self, imean, lsc):
        return self.a * F.softplus(self.b * (imean + self.w * lsc) + self.c)


class SingleCellSpatialContrast(nn.Module):
    def __init__(self, in_shape, temporal_length=8, learning_rate=0.05):
        super().__init__()
        _, _, h, w = in_shape
        t = torch.arange(temporal_length, dtype=torch.float32)
        self.register_buffer("spatial_filter", gaussian_spatial_filter(h, w, h / 2, w / 2, sigma=2.0))
        self.register_buffer("temporal_filter", torch.sin(t / temporal_length * math.pi) * torch.exp(-(temporal_length - 1 - t) / 3))
        self.register_buffer("spatial_filter_sum", self.spatial_filter.sum())
        self.nonlinearity = SpatialContrastNonlinearity(w_init=0.5)
        self.learning_rate = learning_rate

    def temporal_filter_stimulus(self, x):
        b, c, t, h, w = x.shape
        x = x.permute(0, 3, 4, 1, 2).reshape(b * h * w, c, t)
        filtered = F.conv1d(x, self.temporal_filter.view(1, 1, -1))
        return filtered.reshape(b, h, w, -1).permute(0, 3, 1, 2)

    def forward(self, x):
        temp_filtered = self.temporal_filter_stimulus(x)
        imean = (self.spatial_filter * temp_filtered).sum(dim=(-2, -1)) / (self.spatial_filter_sum + 1e-8)
        deviation_sq = (temp_filtered - imean[:, :, None, None]) ** 2
        lsc = torch.sqrt((self.spatial_filter * deviation_sq).sum(dim=(-2, -1)) / (self.spatial_filter_sum + 1e-8))
        return self.nonlinearity(imean, lsc).unsqueeze(-1)

    def training_step(self, batch):
        inputs, targets = batch
        output = self(inputs)
        return (output - targets * torch.log(output + 1e-8)).mean()

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):
        optimizer.step(closure=optimizer_closure)
        # keep the contrast weight non-negative
        with torch.no_grad():
            self.nonlinearity.w.clamp_(min=0.0)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.learning_rate)


def main():
    torch.manual_seed(0)
    model = SingleCellSpatialContrast(in_shape=(1, 40, 12, 12))
    optimizer = model.configure_optimizers()
    stimuli = torch.randn(16, 1, 40, 12, 12)
    with torch.no_grad():
        rates = F.softplus(model(stimuli) * 2.0 - 0.5)
    targets = torch.poisson(rates)
    batches = [(stimuli[i:i + 4], targets[i:i + 4]) for i in range(0, 16, 4)]
    for epoch in range(3):
        losses = []
        for batch_idx, batch in enumerate(batches):
            def closure(batch=batch):
                optimizer.zero_grad()
                loss = model.training_step(batch)
                loss.backward()
                losses.append(loss.item())
                return loss
            model.optimizer_step(epoch, batch_idx, optimizer, closure)
        print(f"epoch {epoch} loss {sum(losses) / len(losses):.4f} w {model.nonlinearity.w.item():.4f}")


if __name__ == "__main__":
    main()
