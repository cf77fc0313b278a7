"""AG015: summing the loss tensor for the epoch log keeps every iteration's graph alive.
Observed in torch 2.13: silent; total_loss has a grad_fn and reaches one MseLossBackward0 node per iteration."""
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(64, 3)
y = x @ torch.tensor([[1.0], [-1.0], [2.0]])
model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
mse = nn.MSELoss()

total_loss = 0.0
for xb, yb in zip(x.split(16), y.split(16)):
    optimizer.zero_grad()
    loss = mse(model(xb), yb)
    loss.backward()
    optimizer.step()
    total_loss += loss  # expect: AG015
print("epoch loss", total_loss / 4)
