# source: written for holdout28 (pattern: focal-loss helper for an imbalanced binary detector writes its per-class alpha as torch.tensor[...] instead of torch.tensor([...]))
# symptom: 'builtin_function_or_method' object is not subscriptable
"""Binary focal loss for a rare-positive detection problem (about 5% positives)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def focal_loss(logits, targets, gamma=2.0):
    alpha = torch.tensor[0.25, 0.75]  # expect: AG013
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    alpha_t = alpha[targets.long()]
    return (alpha_t * (1 - p_t) ** gamma * ce).mean()


class Detector(nn.Module):
    def __init__(self, d_in=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, 1))
        nn.init.constant_(self.net[2].bias, -3.0)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def make_data(n=1000):
    x = torch.randn(n, 10)
    score = x[:, 0] + 0.5 * x[:, 1] - x[:, 2]
    y = (score > 2.3).float()
    return x, y


def main():
    torch.manual_seed(0)
    x, y = make_data()
    print(f"positives: {int(y.sum())}/{len(y)}")
    model = Detector()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(5):
        for i in range(0, len(x), 100):
            loss = focal_loss(model(x[i:i + 100]), y[i:i + 100])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            pred = model(x) > 0
            recall = (pred & (y > 0)).sum() / y.sum()
        print(f"epoch {epoch} loss {loss.item():.4f} recall {recall:.3f}")


if __name__ == "__main__":
    main()
