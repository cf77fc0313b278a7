# source: holdout11 short program (no report)
# symptom: torch\.range is deprecated
"""Notebook-style learning-rate sweep: log10 learning rates come from torch.arange with the end extended by one step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# %% data
X = torch.randn(200, 4)
w_true = torch.tensor([1.5, -2.0, 0.5, 3.0])
y = X @ w_true + 0.1 * torch.randn(200)

# %% sweep
log_lrs = torch.arange(-4, -1 + 0.5, 0.5)
results = {}
for log_lr in log_lrs.tolist():
    torch.manual_seed(1)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=10 ** log_lr)
    for _ in range(50):
        opt.zero_grad()
        loss = F.mse_loss(model(X).squeeze(-1), y)
        loss.backward()
        opt.step()
    results[log_lr] = loss.item()

# %% report
for log_lr, final in results.items():
    print(f"lr=1e{log_lr:+.1f}  final mse {final:.4f}")
best = min(results, key=results.get)
print(f"best lr 1e{best:+.1f}")
