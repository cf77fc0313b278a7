# source: holdout13 short program (no report)
# symptom: [Oo]nly Tensors of floating point
"""Pruning experiment: learn a soft importance score per weight of a pretrained MLP (weights frozen), with an L1
pressure on the masks; the scores are created by a helper and start at one."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_scores(model):
    scores = {}
    for name, p in model.named_parameters():
        if name.endswith("weight"):
            scores[name] = torch.ones(p.shape, dtype=torch.long, requires_grad=True)  # expect: AG004
    return scores


def masked_forward(model, scores, x):
    h = F.relu(F.linear(x, model[0].weight * torch.sigmoid(scores["0.weight"]), model[0].bias))
    return F.linear(h, model[2].weight * torch.sigmoid(scores["2.weight"]), model[2].bias)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
for p in model.parameters():
    p.requires_grad_(False)
scores = make_scores(model)
opt = torch.optim.Adam(scores.values(), lr=0.05)
x, y = torch.randn(200, 12), torch.randint(0, 3, (200,))
for epoch in range(4):
    for xb, yb in zip(x.split(50), y.split(50)):
        opt.zero_grad()
        sparsity = sum(torch.sigmoid(s).mean() for s in scores.values())
        loss = F.cross_entropy(masked_forward(model, scores, xb), yb) + 0.1 * sparsity
        loss.backward()
        opt.step()
kept = sum(int((torch.sigmoid(s) > 0.5).sum()) for s in scores.values())
print(f"loss {loss.item():.4f}, weights kept {kept}")
