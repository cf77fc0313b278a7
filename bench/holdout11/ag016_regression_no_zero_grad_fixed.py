# source: holdout11 short program (no report)
# symptom: grad matches this step's: False
"""Linear-regression style MLP loop at top level: optimizer.zero_grad() before each backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
X = torch.randn(160, 5)
y = X @ torch.tensor([[1.0], [-1.0], [2.0], [0.5], [0.0]]) + 0.1


def fresh_grad(xb, yb):
    return torch.autograd.grad(F.mse_loss(model(xb), yb), model[0].weight)[0]


matches = []
for epoch in range(2):
    for i in range(0, 160, 32):
        xb, yb = X[i:i + 32], y[i:i + 32]
        optimizer.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        matches.append(torch.allclose(model[0].weight.grad, fresh_grad(xb, yb)))
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
print("grad matches this step's:", all(matches))
