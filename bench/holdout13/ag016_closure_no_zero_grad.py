# source: holdout13 short program (no report)
# symptom: grad matches this step's: False
"""Univariate forecaster trained with a closure passed to `optimizer.step`, `for epoch ... for batch` loops; a final
check compares the gradient left by the closure with a freshly computed one."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
t = torch.arange(0, 500) * 0.05
series = torch.sin(t) * torch.exp(-0.002 * torch.arange(0, 500)) + 0.05 * torch.randn(500)
X = torch.stack([series[i:i + 10] for i in range(489)])
Y = series[10:499].unsqueeze(1)
batches = list(zip(X.split(64), Y.split(64)))

model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(3):
    for xb, yb in batches:
        def closure():
            loss = F.mse_loss(model(xb), yb)
            loss.backward()
            return loss

        loss = opt.step(closure)  # expect: AG016
    print(f"epoch {epoch} loss {loss.item():.4f}")

fresh = torch.autograd.grad(F.mse_loss(model(xb), yb), list(model.parameters()))
closure()
print(f"grad matches this step's: {all(torch.allclose(p.grad, g) for p, g in zip(model.parameters(), fresh))}")
