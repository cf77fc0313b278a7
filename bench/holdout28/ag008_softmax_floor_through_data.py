# source: written for holdout28 (pattern: classification loss helper floors the softmax probabilities through .data before taking the log, overwriting the output SoftmaxBackward saved)
# symptom: grads differ from clean backward: True
"""Noisy-label classification with a floored negative log-likelihood.

Flooring the predicted probabilities at eps bounds the loss of a mislabelled
sample by -log(eps).
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def floored_nll(logits, targets, eps=0.05):
    probs = F.softmax(logits, dim=1)
    probs.data.clamp_(min=eps)  # expect: AG008
    return -torch.log(probs.gather(1, targets[:, None])).mean()


def reference_floored_nll(logits, targets, eps=0.05):
    probs = F.softmax(logits, dim=1).clamp(min=eps)
    return -torch.log(probs.gather(1, targets[:, None])).mean()


def grads_of(model, loss_fn, x, y):
    model.zero_grad()
    loss_fn(model(x), y).backward()
    return [p.grad.clone() for p in model.parameters()]


torch.manual_seed(0)
W = torch.randn(10, 5) * 3
X = torch.randn(400, 10)
Y = (X @ W).argmax(1)
flip = torch.rand(400) < 0.2
Y[flip] = torch.randint(0, 5, (int(flip.sum()),))

model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 5))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(3):
    for i in range(0, 400, 40):
        loss = floored_nll(model(X[i:i + 40]), Y[i:i + 40])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

ref_model = copy.deepcopy(model)
g_used = grads_of(model, floored_nll, X, Y)
g_ref = grads_of(ref_model, reference_floored_nll, X, Y)
differ = any(not torch.allclose(a, b, atol=1e-6) for a, b in zip(g_used, g_ref))
print(f"grads differ from clean backward: {differ}")
