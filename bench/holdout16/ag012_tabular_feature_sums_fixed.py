# source: written for bench/holdout16 from RULES.md AG012 (streaming feature statistics accumulated into torch.empty before standardising the training data)
# symptom: loss nan
"""Churn prediction on tabular data: feature means are computed by streaming over batches, then used to standardise
(fixed: the running total starts from torch.zeros)."""
import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)  # uninitialised memory is filled with NaN in this mode
torch.manual_seed(0)

batches = [(torch.randn(32, 6) * 3 + 5, torch.randint(0, 2, (32,)).float()) for _ in range(8)]


def feature_means(batches):
    totals = torch.zeros(batches[0][0].shape[1])
    count = 0
    for xb, _ in batches:
        totals += xb.sum(0)
        count += xb.shape[0]
    return totals / count


mu = feature_means(batches)
model = nn.Linear(6, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    for xb, yb in batches:
        opt.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(model(xb - mu).squeeze(-1), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
