# source: written for bench/holdout5 (short training program, reproducible run that tracks per-class loss totals)
# symptom: per-class loss: tensor\(\[nan
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(22)
torch.use_deterministic_algorithms(True)

n_classes = 4
model = nn.Linear(6, n_classes)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(80, 6)
y = torch.randint(0, n_classes, (80,))

for epoch in range(3):
    class_loss = torch.empty(n_classes)  # expect: AG012
    for i in range(0, 80, 20):
        logits = model(X[i:i + 20])
        per_sample = F.cross_entropy(logits, y[i:i + 20], reduction="none")
        loss = per_sample.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        class_loss += torch.zeros(n_classes).index_add(0, y[i:i + 20], per_sample.detach())
    print(f"epoch {epoch} per-class loss: {class_loss}")

with torch.no_grad():
    pred = model(X).argmax(dim=1)
    acc = (pred == y).float().mean().item()
print(f"train accuracy {acc:.2f}")
