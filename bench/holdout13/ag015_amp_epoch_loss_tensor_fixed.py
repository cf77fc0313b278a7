# source: holdout13 short program (no report)
# symptom: epoch loss keeps graph: True
"""Mixed-precision training on CPU (bfloat16 autocast, GradScaler) of an image-patch classifier, through a
`train_one_epoch(model, loader, opt, scaler)` helper that returns the mean epoch loss.

Clean twin: the epoch loss accumulates `loss.item()`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_one_epoch(model, loader, opt, scaler):
    model.train()
    epoch_loss = 0.0
    for xb, yb in loader:
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(xb), yb)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        epoch_loss += loss.item()
    return epoch_loss / len(loader)


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(128, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(96, 1, 12, 12), torch.randint(0, 4, (96,))
loader = list(zip(x.split(16), y.split(16)))
for epoch in range(3):
    avg = train_one_epoch(model, loader, opt, scaler)
    print(f"epoch {epoch} loss {float(avg):.4f}")
print(f"epoch loss keeps graph: {isinstance(avg, torch.Tensor) and avg.grad_fn is not None}")
