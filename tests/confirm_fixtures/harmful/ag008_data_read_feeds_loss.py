"""A .data read whose value the loss is computed from: w gets no gradient through it."""
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    pred = x @ w.data + b  # harmful: AG008
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    optimizer.step()
