"""Reading .data for a log line between forward and backward: nothing backpropagated depends on it."""
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    loss = ((x @ w - y) ** 2).mean()
    norm = w.data.norm().item()  # harmless: AG008
    loss.backward()
    optimizer.step()
    print(step, loss.item(), norm)
