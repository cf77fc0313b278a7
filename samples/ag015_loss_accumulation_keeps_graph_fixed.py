"""AG015 fixed: accumulate `loss.item()`, a plain float, for logging.
Observed in torch 2.13: runs clean; total_loss is a float and no graph outlives its iteration."""
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
    total_loss += loss.item()
print("epoch loss", total_loss / 4)
