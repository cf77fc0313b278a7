# source: written for holdout28 (pattern: label-smoothing loss module stores the class-frequency prior it smooths toward as a plain tensor attribute; criterion.double() leaves it in float32)
# symptom: smoothing prior left behind by \.double\(\): True
"""Imbalanced 4-class classification with prior-aware label smoothing.

Instead of smoothing toward the uniform distribution, the targets are smoothed
toward the empirical class frequencies.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PriorSmoothingLoss(nn.Module):
    def __init__(self, class_counts, smoothing=0.1):
        super().__init__()
        counts = torch.as_tensor(class_counts, dtype=torch.float32)
        self.prior = counts / counts.sum()  # expect: AG009
        self.smoothing = smoothing

    def forward(self, logits, target):
        one_hot = F.one_hot(target, logits.shape[1]).to(logits.dtype)
        soft = (1 - self.smoothing) * one_hot + self.smoothing * self.prior
        return -(soft * F.log_softmax(logits, dim=1)).sum(1).mean()


def make_data(n=500):
    y = torch.multinomial(torch.tensor([0.6, 0.25, 0.1, 0.05]), n, replacement=True)
    x = torch.randn(n, 6) + F.one_hot(y, 4).float() @ torch.randn(4, 6) * 2
    return x, y


def main():
    torch.manual_seed(0)
    x, y = make_data()
    model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 4))
    criterion = PriorSmoothingLoss(torch.bincount(y, minlength=4).tolist())
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    for epoch in range(3):
        for i in range(0, 500, 50):
            loss = criterion(model(x[i:i + 50]), y[i:i + 50])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")
    # gradient check in double precision
    model.double()
    criterion.double()
    loss64 = criterion(model(x[:20].double()), y[:20])
    print(f"float64 loss dtype {loss64.dtype}")
    print(f"smoothing prior left behind by .double(): {criterion.prior.dtype != torch.float64}")


if __name__ == "__main__":
    main()
