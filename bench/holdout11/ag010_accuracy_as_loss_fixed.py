# source: holdout11 short program (no report)
# symptom: does not require grad and does not have a grad_fn
"""A classifier trained with cross-entropy; accuracy (argmax, ==) is only logged."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 5))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
X = torch.randn(500, 10)
y = (X[:, :5]).argmax(dim=1)


def batches(bs=50):
    perm = torch.randperm(len(X))
    for i in range(0, len(X), bs):
        idx = perm[i:i + bs]
        yield X[idx], y[idx]


for epoch in range(3):
    for xb, yb in batches():
        logits = model(xb)
        acc = (logits.argmax(dim=1) == yb).float().mean()
        loss = F.cross_entropy(logits, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} acc {acc.item():.3f}")
