# source: written for bench/holdout17 from RULES.md AG010 (segmentation: a dice loss helper computed on the argmax label map)
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
"""Tiny fully-convolutional segmenter on random masks with a hard Dice loss."""
import torch
import torch.nn as nn


def dice_loss(pred_labels, target, n_cls, eps=1.0):
    total = 0.0
    for c in range(n_cls):
        p = (pred_labels == c).float()
        t = (target == c).float()
        total = total + 1 - (2 * (p * t).sum() + eps) / (p.sum() + t.sum() + eps)
    return total / n_cls


torch.manual_seed(0)
N_CLS = 3
net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, N_CLS, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)

for epoch in range(2):
    for _ in range(3):
        img = torch.randn(4, 1, 24, 24)
        mask = torch.randint(0, N_CLS, (4, 24, 24))
        logits = net(img)
        pred = logits.argmax(dim=1)
        loss = dice_loss(pred, mask, N_CLS)
        optimizer.zero_grad()
        loss.backward()  # expect: AG010
        optimizer.step()
    print("epoch", epoch, "dice loss", float(loss))
