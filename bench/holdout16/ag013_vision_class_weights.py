# source: written for bench/holdout16 from RULES.md AG013 (class-imbalance weights for the loss written as torch.tensor[...] in a config-building function)
# symptom: not subscriptable
"""Defect detection on imbalanced image patches: the cross-entropy is weighted by class frequency."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def build_criterion(cfg):
    if cfg["balanced"]:
        weights = torch.tensor[1.0, 4.0, 8.0]  # expect: AG013
        return nn.CrossEntropyLoss(weight=weights)
    return nn.CrossEntropyLoss()


cfg = {"balanced": True, "lr": 1e-3}
model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 14 * 14, 3))
criterion = build_criterion(cfg)
opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
for step in range(3):
    x, y = torch.randn(16, 1, 16, 16), torch.randint(0, 3, (16,))
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
