# source: holdout13 short program (no report)
# symptom: logged losses keep graph: True
"""Unsupervised domain adaptation by entropy minimisation: labelled source and unlabelled target batches come from
two loaders zipped together; the epoch's losses are kept for a summary.

Clean twin: the logged losses are `loss.detach()`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
xs, ys = torch.randn(192, 10), torch.randint(0, 3, (192,))
xt = torch.randn(192, 10) + 0.5
source_loader = list(zip(xs.split(32), ys.split(32)))
target_loader = list(xt.split(32))
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(3):
    losses = []
    for (xb_s, yb_s), xb_t in zip(source_loader, target_loader):
        p_t = F.softmax(model(xb_t), dim=1)
        entropy = -(p_t * torch.log(p_t + 1e-8)).sum(1).mean()
        loss = F.cross_entropy(model(xb_s), yb_s) + 0.1 * entropy
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    print(f"epoch {epoch} mean loss {torch.stack(losses).mean().item():.4f}")
print(f"logged losses keep graph: {losses[0].requires_grad}")
