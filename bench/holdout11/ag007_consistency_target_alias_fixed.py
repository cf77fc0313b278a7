# source: holdout11 short program (no report)
# symptom: target requires grad: True
"""Semi-supervised consistency training: the weak-augmentation logits are detached as the target."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def weak_aug(x):
    return x + 0.05 * torch.randn_like(x)


def strong_aug(x):
    return x * (torch.rand_like(x) > 0.2).float() + 0.3 * torch.randn_like(x)


def consistency_step(model, opt, x_lab, y_lab, x_unlab, lam=1.0):
    logits_weak = model(weak_aug(x_unlab))
    with torch.no_grad():
        target = logits_weak.detach()
    logits_strong = model(strong_aug(x_unlab))
    sup = F.cross_entropy(model(x_lab), y_lab)
    cons = F.mse_loss(logits_strong.softmax(-1), target.softmax(-1))
    loss = sup + lam * cons
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item(), target.requires_grad


model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(5):
    x_lab, y_lab = torch.randn(16, 12), torch.randint(0, 3, (16,))
    loss, tracked = consistency_step(model, opt, x_lab, y_lab, torch.randn(64, 12))
    print(f"iter {it} loss {loss:.4f}")
print("target requires grad:", tracked)
