# source: written for holdout28 (pattern: manifold-mixup classifier mixes its hidden sigmoid activations in place inside forward, overwriting the output SigmoidBackward saved)
# symptom: modified by an inplace operation
"""Manifold mixup: mix hidden representations (and labels) of shuffled pairs.

Mixing happens after the first hidden layer during training only.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Beta


class MixupMLP(nn.Module):
    def __init__(self, d_in=8, d_h=32, n_cls=3, alpha=0.4):
        super().__init__()
        self.l1 = nn.Linear(d_in, d_h)
        self.l2 = nn.Linear(d_h, d_h)
        self.out = nn.Linear(d_h, n_cls)
        self.beta = Beta(torch.tensor(alpha), torch.tensor(alpha))

    def forward(self, x, y_onehot=None):
        h = torch.sigmoid(self.l1(x))
        if self.training and y_onehot is not None:
            lam = self.beta.sample().item()
            perm = torch.randperm(x.shape[0])
            mixed_partner = h[perm].detach() * (1 - lam)
            h.mul_(lam).add_(mixed_partner)  # expect: AG006
            y_onehot = lam * y_onehot + (1 - lam) * y_onehot[perm]
        h = F.relu(self.l2(h))
        return self.out(h), y_onehot


def soft_ce(logits, soft_targets):
    return -(soft_targets * F.log_softmax(logits, dim=1)).sum(1).mean()


torch.manual_seed(0)
W = torch.randn(8, 3)
X = torch.randn(600, 8)
Y = (X @ W).argmax(1)
model = MixupMLP()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(3):
    model.train()
    for i in range(0, 600, 50):
        xb, yb = X[i:i + 50], F.one_hot(Y[i:i + 50], 3).float()
        logits, targets = model(xb, yb)
        loss = soft_ce(logits, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(X)[0].argmax(1) == Y).float().mean()
    print(f"epoch {epoch} loss {loss.item():.3f} acc {acc:.3f}")
