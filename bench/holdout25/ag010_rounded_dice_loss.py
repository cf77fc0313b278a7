# source: written for holdout25 (pattern: segmentation dice loss thresholds the sigmoid output with torch.round before computing the overlap, so every gradient is zero)
# symptom: all gradients zero: True
"""Binary segmentation of bright disks in noisy 16x16 images with a soft-dice objective."""
import torch
import torch.nn as nn


def make_images(n=32, size=16):
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    cx = torch.randint(4, size - 4, (n, 1, 1))
    cy = torch.randint(4, size - 4, (n, 1, 1))
    r = torch.randint(2, 5, (n, 1, 1))
    masks = (((xx - cx) ** 2 + (yy - cy) ** 2) <= r ** 2).float().unsqueeze(1)
    images = masks + 0.3 * torch.randn_like(masks)
    return images, masks


class SmallUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.out = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        return self.out(self.enc(x))


def dice_loss(logits, target, eps=1.0):
    pred = torch.round(torch.sigmoid(logits))
    inter = (pred * target).sum(dim=(1, 2, 3))
    union = pred.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


torch.manual_seed(0)
net = SmallUNet()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
for step in range(20):
    images, masks = make_images()
    loss = dice_loss(net(images), masks)
    optimizer.zero_grad()
    loss.backward()  # expect: AG010
    if step == 0:
        print("all gradients zero:", all(bool((p.grad == 0).all()) for p in net.parameters()))
    optimizer.step()
print("dice loss", round(loss.item(), 4))
