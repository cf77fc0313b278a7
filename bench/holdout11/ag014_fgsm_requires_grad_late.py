# source: holdout11 short program (no report)
# symptom: 'NoneType' object has no attribute 'sign'
"""FGSM adversarial training: the helper asks the input batch to require grad after the model's forward has already run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fgsm_examples(model, x, y, eps=0.1):
    logits = model(x)
    x.requires_grad_(True)  # expect: AG014
    loss = F.cross_entropy(logits, y)
    grad_x, = torch.autograd.grad(loss, x, allow_unused=True)
    return (x + eps * grad_x.sign()).clamp(0, 1).detach()


def train_epoch(model, optimizer, batches):
    for x, y in batches:
        x_adv = fgsm_examples(model, x.clone(), y)
        optimizer.zero_grad()
        loss = 0.5 * (F.cross_entropy(model(x), y) + F.cross_entropy(model(x_adv), y))
        loss.backward()
        optimizer.step()
    return loss.item()


model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.rand(16, 1, 8, 8), torch.randint(0, 10, (16,))) for _ in range(4)]
for epoch in range(2):
    print(f"epoch {epoch} loss {train_epoch(model, optimizer, batches):.4f}")
