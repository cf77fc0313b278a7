"""An exponential moving average of the weights, updated through .data: the average is in no graph."""
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
ema = torch.zeros(3)
optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    ema.data.mul_(0.9).add_(0.1 * w.data)  # harmless: AG008
print(ema)
