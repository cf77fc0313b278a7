# source: holdout13 short program (no report)
# symptom: all grads zero: True
"""Demand forecasting in whole units from the last week of sales; a `while` loop with a step counter samples
mini-batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
days = torch.arange(0, 400).float()
sales = 20 + 8 * torch.sin(2 * torch.pi * days / 7) + 2 * torch.randn(400)
X = torch.stack([sales[i:i + 7] for i in range(393)]) / 30.0
Y = torch.floor(sales[7:400]).unsqueeze(1)

model = nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
step = 0
while step < 30:
    idx = torch.randint(0, X.shape[0], (32,))
    xb, yb = X[idx], Y[idx]
    opt.zero_grad()
    units = torch.floor(model(xb))
    loss = F.l1_loss(units, yb)
    loss.backward()  # expect: AG010
    all_zero = all(bool((p.grad == 0).all()) for p in model.parameters())
    opt.step()
    step += 1
print(f"step {step} loss {loss.item():.3f}")
print(f"all grads zero: {all_zero}")
