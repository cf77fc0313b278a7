# source: written for holdout28 (pattern: notebook-style stacking script softmaxes learnable mixture logits once before the loop and reuses the mixture weights at every step)
# symptom: backward through the graph a second time
"""Learn how to mix three frozen base regressors (a stacking ensemble).

The base models are fixed; only the mixture logits and a bias are trained.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

# --- data and three "pretrained" base models (frozen) ---
x = torch.randn(400, 6)
true_w = torch.randn(6, 1)
y = x @ true_w + 0.1 * torch.randn(400, 1)

base_models = [nn.Linear(6, 1) for _ in range(3)]
for i, m in enumerate(base_models):
    with torch.no_grad():
        m.weight.copy_(true_w.t() + 0.3 * (i + 1) * torch.randn(1, 6))
    m.requires_grad_(False)

with torch.no_grad():
    base_preds = torch.cat([m(x) for m in base_models], dim=1)  # (400, 3)

# --- the stacker ---
mix_logits = nn.Parameter(torch.zeros(3))
bias = nn.Parameter(torch.zeros(1))
optimizer = torch.optim.Adam([mix_logits, bias], lr=0.05)

mix = torch.softmax(mix_logits, dim=0)  # expect: AG002

for epoch in range(4):
    perm = torch.randperm(400)
    running = 0.0
    for i in range(0, 400, 40):
        idx = perm[i:i + 40]
        pred = base_preds[idx] @ mix + bias
        loss = ((pred - y[idx, 0]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
    print(f"epoch {epoch}: mse {running / 10:.4f}")

print("mixture weights:", torch.softmax(mix_logits, 0).detach())
