"""Micro-batch losses kept on purpose: one backward() of their mean uses every graph the list holds."""
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(64, 3)
y = x @ torch.tensor([[1.0], [-1.0], [2.0]])
model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
mse = nn.MSELoss()

optimizer.zero_grad()
losses = []
for xb, yb in zip(x.split(16), y.split(16)):
    losses.append(mse(model(xb), yb))  # harmless: AG015
torch.stack(losses).mean().backward()
optimizer.step()
