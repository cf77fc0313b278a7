# source: holdout11 short program (no report)
# symptom: bias grad is None: True
"""Platt scaling of a trained classifier's scores: both scale and bias are marked trainable with requires_grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

scorer = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
X = torch.randn(300, 10)
y = (X[:, 0] + 0.5 * torch.randn(300) > 0.8).float()
for epoch in range(30):
    opt.zero_grad()
    loss = F.binary_cross_entropy_with_logits(scorer(X).squeeze(-1), y)
    loss.backward()
    opt.step()

# calibrate on held-out scores
with torch.no_grad():
    scores = scorer(X[200:]).squeeze(-1)
a = torch.ones(1, requires_grad=True)
b = torch.zeros(1)
b.requires_grad = True
cal_opt = torch.optim.Adam([a, b], lr=0.05)
for it in range(100):
    cal_opt.zero_grad()
    nll = F.binary_cross_entropy_with_logits(a * scores + b, y[200:])
    nll.backward()
    cal_opt.step()
print(f"calibrated nll {nll.item():.4f} a={a.item():.3f} b={b.item():.3f}")
print("bias grad is None:", b.grad is None)
