# source: written for holdout28 (pattern: hand-written AverageMeter accumulates the loss tensor passed to update() into self.sum, keeping every batch's graph alive)
# symptom: loss keeps graph of every batch: True
"""Training a small CNN-free image classifier (flattened 6x6 "images") with the
classic AverageMeter helper for logging.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n  # expect: AG015
        self.count += n

    @property
    def avg(self):
        return self.sum / max(1, self.count)


def train_one_epoch(model, opt, xs, ys, meter, batch=32):
    meter.reset()
    for i in range(0, len(xs), batch):
        x, y = xs[i:i + batch], ys[i:i + batch]
        x = x + 0.1 * torch.randn_like(x)  # light augmentation
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        meter.update(loss, n=len(x))
    return meter.avg


torch.manual_seed(0)
templates = torch.randn(4, 36)
ys = torch.randint(0, 4, (384,))
xs = templates[ys] + 0.8 * torch.randn(384, 36)
model = nn.Sequential(nn.Linear(36, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
meter = AverageMeter("loss")
for epoch in range(3):
    avg = train_one_epoch(model, opt, xs, ys, meter)
    print(f"epoch {epoch} {meter.name} {float(avg):.4f}")
print(f"loss keeps graph of every batch: {getattr(meter.sum, 'grad_fn', None) is not None}")
