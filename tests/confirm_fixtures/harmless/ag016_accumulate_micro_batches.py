"""Gradient accumulation over two micro-batches per step, cleared after each step: nothing stale is added."""
import torch

torch.manual_seed(0)
x = torch.randn(64, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for i, (xb, yb) in enumerate(zip(x.split(16), y.split(16))):
    loss = ((xb @ w - yb) ** 2).mean() / 2
    loss.backward()
    if i % 2 == 1:
        optimizer.step()  # harmless: AG016
        optimizer.zero_grad()
