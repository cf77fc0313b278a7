# source: holdout13 short program (no report)
# symptom: log-variances in sync: False
"""Multi-task regression + classification with learned uncertainty weights (Kendall et al.), the weighting bound into
the criterion with functools.partial; a `while` loop with a step counter."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


def uncertainty_weighted(losses, log_vars):
    total = 0.0
    for i, task_loss in enumerate(losses):
        total = total + torch.exp(-log_vars[i]) * task_loss + log_vars[i]
    return total


torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
head_reg, head_cls = nn.Linear(32, 1), nn.Linear(32, 4)
log_var_reg = nn.Parameter(torch.zeros(()))
log_var_cls = nn.Parameter(torch.zeros(()))
params = [*trunk.parameters(), *head_reg.parameters(), *head_cls.parameters(), log_var_reg, log_var_cls]
opt = torch.optim.Adam(params, lr=0.05)
criterion = functools.partial(uncertainty_weighted, log_vars=torch.stack([log_var_reg, log_var_cls]))  # expect: AG002

x, y_reg, y_cls = torch.randn(128, 10), torch.randn(128, 1), torch.randint(0, 4, (128,))
step = 0
while step < 40:
    opt.zero_grad()
    h = trunk(x)
    task_losses = [F.mse_loss(head_reg(h), y_reg), F.cross_entropy(head_cls(h), y_cls)]
    loss = criterion(task_losses)
    loss.backward()
    with torch.no_grad():
        in_sync = torch.allclose(loss, uncertainty_weighted(task_losses, torch.stack([log_var_reg, log_var_cls])))
    opt.step()
    step += 1
print(f"loss {loss.item():.4f}")
print(f"log-variances in sync: {in_sync}")
