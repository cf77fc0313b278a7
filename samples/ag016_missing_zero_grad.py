"""AG016: a training loop with backward() and step() but no zero_grad(); reported at the optimizer.step() line.
Observed in torch 2.13: silent; from the second step on, each step applies the sum of all gradients so far."""
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(64, 3)
y = x @ torch.tensor([[1.0], [-1.0], [2.0]])
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
mse = nn.MSELoss()

for step in range(3):
    loss = mse(model(x), y)
    loss.backward()  # expect: AG016
    optimizer.step()  # expect: AG016
    print(step, loss.item())
