# source: written for bench/holdout5 (short training program, imbalanced classification with a weighted loss)
import torch
from torch import nn

torch.manual_seed(24)

X = torch.randn(150, 5)
y = torch.cat([torch.zeros(120), torch.ones(20), torch.full((10,), 2.0)]).long()
class_weights = torch.tensor([0.3, 1.5, 3.0])

model = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 3))
criterion = nn.CrossEntropyLoss(weight=class_weights)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)


@torch.no_grad()
def per_class_recall(model, X, y):
    pred = model(X).argmax(dim=1)
    return [((pred == c) & (y == c)).sum().item() / max((y == c).sum().item(), 1) for c in range(3)]


for epoch in range(20):
    perm = torch.randperm(150)
    for i in range(0, 150, 30):
        idx = perm[i:i + 30]
        optimizer.zero_grad()
        loss = criterion(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()

print("loss", round(loss.item(), 3))
print("recall per class:", [round(r, 2) for r in per_class_recall(model, X, y)])
