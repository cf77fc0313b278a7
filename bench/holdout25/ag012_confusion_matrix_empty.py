# source: written for holdout25 (pattern: evaluation helper accumulates a confusion matrix into torch.empty and reads it back as counts)
# symptom: per-class recall: .*nan
"""Train a classifier, then report per-class recall from a confusion matrix."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)  # reproducible runs
N_CLASSES = 4


def make_split(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 10, generator=g)
    y = (x[:, :N_CLASSES] + 0.5 * torch.randn(n, N_CLASSES, generator=g)).argmax(1)
    return x, y


def confusion_matrix(model, x, y):
    conf = torch.empty(N_CLASSES, N_CLASSES)  # expect: AG012
    with torch.no_grad():
        preds = model(x).argmax(1)
    for t, p in zip(y.tolist(), preds.tolist()):
        conf[t, p] += 1
    return conf


model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, N_CLASSES))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x_train, y_train = make_split(800, 0)
x_val, y_val = make_split(200, 1)

for epoch in range(5):
    for i in range(0, 800, 100):
        loss = F.cross_entropy(model(x_train[i:i + 100]), y_train[i:i + 100])
        opt.zero_grad()
        loss.backward()
        opt.step()

conf = confusion_matrix(model, x_val, y_val)
recall = conf.diag() / conf.sum(1)
print("per-class recall:", [round(r, 3) for r in recall.tolist()])
