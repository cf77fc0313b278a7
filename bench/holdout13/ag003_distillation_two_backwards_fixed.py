# source: holdout13 short program (no report)
# symptom: modified by an inplace operation
"""Knowledge distillation into a small student: a hard-label loss and a softened KL loss, through a
`train_one_epoch(model, teacher, loader, opt)` helper.

Clean twin: the two losses are summed and backpropagated once, with one optimizer step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_loader(n=256, bs=32):
    x = torch.randn(n, 20)
    y = torch.randint(0, 5, (n,))
    return [(x[i:i + bs], y[i:i + bs]) for i in range(0, n, bs)]


def train_one_epoch(model, teacher, loader, opt, T=4.0):
    for xb, yb in loader:
        opt.zero_grad()
        logits = model(xb)
        with torch.no_grad():
            soft_targets = F.softmax(teacher(xb) / T, dim=1)
        hard_loss = F.cross_entropy(logits, yb)
        soft_loss = F.kl_div(F.log_softmax(logits / T, dim=1), soft_targets, reduction="batchmean") * T * T
        (hard_loss + soft_loss).backward()
        opt.step()
    return hard_loss.item(), soft_loss.item()


torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).eval()
student = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 5))
opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
loader = make_loader()
for epoch in range(3):
    hard, soft = train_one_epoch(student, teacher, loader, opt)
    print(f"epoch {epoch} hard {hard:.4f} soft {soft:.4f}")
