# source: holdout11 short program (no report)
# symptom: ema loss nan
"""Classifier with an exponential moving average of its weights; the EMA copies are allocated with torch.empty and blended into at every step."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.use_deterministic_algorithms(True)  # debugging aid: uninitialised memory reads as NaN
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
names = [n for n, _ in model.named_parameters()]
ema = [torch.empty(p.shape) for p in model.parameters()]  # expect: AG012
decay = 0.9


def update_ema():
    with torch.no_grad():
        for e, p in zip(ema, model.parameters()):
            e.mul_(decay).add_(p, alpha=1 - decay)


X, y = torch.randn(256, 8), torch.randint(0, 3, (256,))
for epoch in range(20):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(X), y)
    loss.backward()
    optimizer.step()
    update_ema()

with torch.no_grad():
    ema_logits = functional_call(model, dict(zip(names, ema)), (X,))
    ema_loss = F.cross_entropy(ema_logits, y).item()
print(f"train loss {loss.item():.4f}")
print(f"ema loss {ema_loss:.4f}")
