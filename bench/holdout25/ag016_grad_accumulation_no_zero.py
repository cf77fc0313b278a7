# source: written for holdout25 (pattern: gradient accumulation over micro-batches steps the optimizer every ACCUM batches but never zeroes the gradients)
# symptom: grads accumulate across steps: True
"""Text-style classifier fine-tuned with gradient accumulation (effective batch = 4 micro-batches)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ACCUM = 4
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Dropout(0.1), nn.Linear(64, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)


def micro_batches(n=48, bs=8):
    for _ in range(n):
        x = torch.randn(bs, 32)
        y = (x[:, :3].sum(1) > 0).long()
        yield x, y


reported = False
for i, (x, y) in enumerate(micro_batches()):
    if i > 0 and i % ACCUM == 0 and not reported:
        # start of a new accumulation window: grads should be empty here
        print("grads accumulate across steps:",
              any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in model.parameters()))
        reported = True
    loss = F.cross_entropy(model(x), y) / ACCUM
    loss.backward()
    if (i + 1) % ACCUM == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()  # expect: AG016
        scheduler.step()
print("last loss", round(loss.item() * ACCUM, 4))
