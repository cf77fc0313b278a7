# source: https://github.com/jocpae/clDice/issues/17
# symptom: segmentation network received no gradient: True
"""A vessel-segmentation training run with the clDice loss used alone: the user's `soft_cldice.forward` first
binarises the prediction with `(y_pred > 0.5).contiguous().to(float).requires_grad_()`, so the soft skeletons, the
topology precision/sensitivity and the loss hang off a fresh leaf; `loss.backward()` runs but never reaches the
network ("clloss ... keeps 0 all the time")."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def soft_erode(img):
    p1 = -F.max_pool2d(-img, (3, 1), (1, 1), (1, 0))
    p2 = -F.max_pool2d(-img, (1, 3), (1, 1), (0, 1))
    return torch.min(p1, p2)


def soft_dilate(img):
    return F.max_pool2d(img, (3, 3), (1, 1), (1, 1))


def soft_open(img):
    return soft_dilate(soft_erode(img))


def soft_skel(img, iter_):
    img1 = soft_open(img)
    skel = F.relu(img - img1)
    for _ in range(iter_):
        img = soft_erode(img)
        img1 = soft_open(img)
        delta = F.relu(img - img1)
        skel = skel + F.relu(delta - skel * delta)
    return skel


class soft_cldice(nn.Module):
    def __init__(self, iter_=3, smooth=1.0):
        super().__init__()
        self.iter = iter_
        self.smooth = smooth

    def forward(self, y_pred, y_true):
        y_true = y_true.contiguous().to(torch.float64)
        y_pred = (y_pred > 0.5).contiguous().to(torch.float64).requires_grad_()
        skel_pred = soft_skel(y_pred, self.iter)
        skel_true = soft_skel(y_true, self.iter)
        tprec = (torch.sum(torch.multiply(skel_pred, y_true)[:, 1:, ...]) + self.smooth) / (
            torch.sum(skel_pred[:, 1:, ...]) + self.smooth)
        tsens = (torch.sum(torch.multiply(skel_true, y_pred)[:, 1:, ...]) + self.smooth) / (
            torch.sum(skel_true[:, 1:, ...]) + self.smooth)
        return 1.0 - 2.0 * (tprec * tsens) / (tprec + tsens)


class VesselNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        return torch.softmax(self.head(self.enc(x)), dim=1)


def make_batch(n=2, size=24):
    img = torch.rand(n, 1, size, size)
    mask = torch.zeros(n, 2, size, size)
    mask[:, 1, size // 2 - 1:size // 2 + 1, :] = 1.0
    mask[:, 0] = 1.0 - mask[:, 1]
    return img + mask[:, 1:] * 0.5, mask


model = VesselNet()
criterion = soft_cldice()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
no_gradient = True
for it in range(3):
    img, mask = make_batch()
    optimizer.zero_grad()
    pred = model(img)
    loss = criterion(pred, mask)
    loss.backward()  # expect: AG010
    got = [p.grad for p in model.parameters() if p.grad is not None and p.grad.abs().sum() > 0]
    no_gradient = no_gradient and not got
    optimizer.step()
    print(f"iter {it} | cldice loss {loss.item():.4f}")
print(f"segmentation network received no gradient: {no_gradient}")
