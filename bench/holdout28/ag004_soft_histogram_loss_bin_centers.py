# source: written for holdout28 (pattern: histogram-matching loss module makes its bin centres learnable with torch.arange over integer bounds and requires_grad=True)
# symptom: [Oo]nly Tensors of floating point (and complex )?dtype can require gradients
"""Train a generator so that its output distribution matches a target histogram.

The soft histogram uses Gaussian kernels around bin centres; the centres are
allowed to move during training.
"""
import torch
import torch.nn as nn


class SoftHistogram(nn.Module):
    def __init__(self, lo=-4, hi=5, bandwidth=0.5):
        super().__init__()
        centers = torch.arange(lo, hi, requires_grad=True)  # expect: AG004
        self.centers = nn.Parameter(centers)
        self.bandwidth = bandwidth

    def forward(self, values):
        d = values.reshape(-1, 1) - self.centers.reshape(1, -1)
        weights = torch.exp(-0.5 * (d / self.bandwidth) ** 2)
        hist = weights.sum(0)
        return hist / hist.sum()


def histogram_loss(hist_fn, samples, target_samples):
    p = hist_fn(samples)
    with torch.no_grad():
        q = hist_fn(target_samples)
    return torch.sum((p - q) ** 2)


def main():
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
    hist = SoftHistogram()
    opt = torch.optim.Adam(list(generator.parameters()) + list(hist.parameters()), lr=1e-2)
    for step in range(100):
        z = torch.randn(256, 4)
        target = torch.randn(256) * 0.7 + 1.5
        loss = histogram_loss(hist, generator(z), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 25 == 0:
            print(f"step {step} hist loss {loss.item():.5f}")
    print("generated mean", generator(torch.randn(1000, 4)).mean().item())


if __name__ == "__main__":
    main()
