# source: written for holdout25 (pattern: structured-pruning experiment silences hidden units by writing through .data into the tanh output that TanhBackward saved)
# symptom: pruned units still get gradient: True
"""Magnitude-based unit pruning of a tanh MLP, then fine-tuning with the pruned units masked."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PrunableMLP(nn.Module):
    def __init__(self, d_in=10, hidden=48, d_out=3):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, d_out)
        self.register_buffer("keep", torch.ones(hidden))

    def prune_smallest(self, fraction):
        scores = self.fc1.weight.detach().norm(dim=1) * self.fc2.weight.detach().norm(dim=0)
        k = int(fraction * scores.numel())
        self.keep.fill_(1.0)
        self.keep[scores.argsort()[:k]] = 0.0

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        h.data.mul_(self.keep)  # expect: AG008
        return self.fc2(h)


def make_data(n=512, d_in=10):
    x = torch.randn(n, d_in)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    return x, y


def fit(model, x, y, steps, lr=1e-2):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for step in range(steps):
        idx = torch.randint(0, x.size(0), (64,))
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = make_data()
    model = PrunableMLP()
    print("dense loss", round(fit(model, x, y, 100), 4))
    model.prune_smallest(0.5)
    loss = F.cross_entropy(model(x[:64]), y[:64])
    model.zero_grad()
    loss.backward()
    pruned = model.keep == 0
    print("pruned units still get gradient:", bool(model.fc1.weight.grad[pruned].abs().sum() > 0))
    print("fine-tuned loss", round(fit(model, x, y, 50), 4))
