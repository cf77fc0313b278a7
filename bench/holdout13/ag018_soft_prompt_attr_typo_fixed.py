# source: holdout13 short program (no report)
# symptom: prompt changed: False
"""Soft prompt tuning of a frozen bag-of-embeddings text classifier: a few learned prompt vectors are prepended to the
token embeddings; the optimizer factory is bound with functools.partial.

Clean twin: the attribute is spelled `requires_grad`.
"""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
embedding = nn.Embedding(100, 24).requires_grad_(False)
head = nn.Linear(24, 2)
prompt = torch.randn(4, 24) * 0.02
prompt.requires_grad = True
initial = prompt.clone()
make_opt = functools.partial(torch.optim.Adam, lr=1e-2)
opt = make_opt([prompt, *head.parameters()])


def classify(ids):
    tokens = embedding(ids)
    seq = torch.cat([prompt.expand(ids.shape[0], -1, -1), tokens], dim=1)
    return head(seq.mean(1))


ids, labels = torch.randint(0, 100, (128, 8)), torch.randint(0, 2, (128,))
for epoch in range(3):
    for xb, yb in zip(ids.split(32), labels.split(32)):
        opt.zero_grad()
        loss = F.cross_entropy(classify(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
print(f"prompt changed: {not torch.equal(prompt, initial)}")
