"""A tensor composed from parameters and used once, before they train: staying stale harms nothing."""
import torch

torch.manual_seed(0)
a = torch.randn(2, requires_grad=True)
b = torch.randn(2, requires_grad=True)
x = torch.randn(8, 4)
optimizer = torch.optim.SGD([a, b], lr=0.1)
w = torch.cat([a, b])  # harmless: AG002
print("initial output norm", (x @ w).norm().item())
for step in range(3):
    optimizer.zero_grad()
    loss = (x @ torch.cat([a, b])).pow(2).mean()
    loss.backward()
    optimizer.step()
