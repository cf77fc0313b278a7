# source: holdout11 short program (no report)
# symptom: modified by an inplace operation
"""Custom gated residual layer: forward adds the bias out of place to the tanh output."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GatedResidual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        h = torch.tanh(self.proj(x))
        h = h + self.bias
        return x + torch.sigmoid(self.gate(x)) * h


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(5, 24)
        self.blocks = nn.Sequential(GatedResidual(24), GatedResidual(24))
        self.out = nn.Linear(24, 1)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x)))


model = Regressor()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
X = torch.randn(200, 5)
y = X.sum(dim=1, keepdim=True).sin()
for epoch in range(5):
    optimizer.zero_grad()
    loss = F.mse_loss(model(X), y)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch} mse {loss.item():.4f}")
