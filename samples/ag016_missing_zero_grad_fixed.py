"""AG016 fixed: optimizer.zero_grad() at the top of every iteration, before backward().
Observed in torch 2.13: runs clean; each step applies exactly that step's gradient."""
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(64, 3)
y = x @ torch.tensor([[1.0], [-1.0], [2.0]])
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
mse = nn.MSELoss()

for step in range(3):
    optimizer.zero_grad()
    loss = mse(model(x), y)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
