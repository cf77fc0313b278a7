# source: written for holdout25 (pattern: hand-written SGD-with-momentum helper updates parameters with -= outside no_grad)
# symptom: leaf Variable that requires grad is being used in an in-place operation
"""Tiny regression net trained with a hand-rolled momentum SGD (course exercise style)."""
import torch
import torch.nn as nn


def make_data(n=256):
    x = torch.linspace(-3, 3, n).unsqueeze(1)
    y = torch.sin(x) + 0.1 * torch.randn_like(x)
    return x, y


class MLP(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def momentum_sgd(params, velocities, lr=0.05, beta=0.9):
    for p, v in zip(params, velocities):
        if p.grad is None:
            continue
        v.mul_(beta).add_(p.grad)
        p -= lr * v  # expect: AG001
        p.grad.zero_()


def train(epochs=20, batch_size=32):
    torch.manual_seed(1)
    x, y = make_data()
    model = MLP()
    params = list(model.parameters())
    velocities = [torch.zeros_like(p) for p in params]
    for epoch in range(epochs):
        perm = torch.randperm(x.size(0))
        total = 0.0
        for i in range(0, x.size(0), batch_size):
            idx = perm[i:i + batch_size]
            pred = model(x[idx])
            loss = ((pred - y[idx]) ** 2).mean()
            loss.backward()
            momentum_sgd(params, velocities)
            total += loss.item()
        if epoch % 5 == 0:
            print(f"epoch {epoch} mse {total:.4f}")
    return model


if __name__ == "__main__":
    train()
