# source: holdout11 short program (no report)
# symptom: all grads zero: True
"""Object-count regressor in a trainer class: predictions are rounded to whole counts before the L1 loss, so every gradient is zero."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CountTrainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 1))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def predict_counts(self, x):
        return self.model(x).squeeze(-1).round()

    def step(self, x, counts):
        self.opt.zero_grad()
        pred = self.predict_counts(x)
        loss = F.l1_loss(pred, counts)
        loss.backward()  # expect: AG010
        zero = all(p.grad is None or not p.grad.any() for p in self.model.parameters())
        self.opt.step()
        return loss.item(), zero


trainer = CountTrainer()
for epoch in range(3):
    x = torch.rand(64, 20)
    counts = (x > 0.7).sum(dim=1).float()
    loss, zero = trainer.step(x, counts)
    print(f"epoch {epoch} l1 {loss:.3f}")
print("all grads zero:", zero)
