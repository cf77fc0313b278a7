"""A .data read as a regression target (a constant on purpose, like detach()): no gradient was meant to flow."""
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
w = torch.randn(3, requires_grad=True)
target_net = torch.randn(3, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    target = x @ target_net.data  # harmless: AG008
    loss = ((x @ w - target) ** 2).mean()
    loss.backward()
    optimizer.step()
