# source: written for bench/holdout5 (short training program, importance-weighted regression with a DataLoader)
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(9)

X = torch.randn(256, 5)
y = X.sum(dim=1, keepdim=True) + 0.1 * torch.randn(256, 1)
importance = torch.rand(256, 1)
loader = DataLoader(TensorDataset(X, y, importance), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
criterion = nn.MSELoss(reduction="none")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(5):
    total = 0.0
    for xb, yb, wb in loader:
        optimizer.zero_grad()
        per_sample = criterion(model(xb), yb) * wb
        per_sample.sum().backward()
        optimizer.step()
        total += per_sample.sum().item()
    print(f"epoch {epoch}: weighted mse {total / len(X):.4f}")

model.eval()
with torch.no_grad():
    test_x = torch.randn(64, 5)
    test_err = (model(test_x) - test_x.sum(dim=1, keepdim=True)).pow(2).mean()
print(f"test mse: {test_err.item():.4f}")
