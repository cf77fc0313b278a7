# source: https://github.com/Project-MONAI/research-contributions/issues/392
# symptom: gradients carried over from the previous step: True
"""MONAI research-contributions tutorial `train_epoch` with `optimizer.zero_grad()` before each forward, as the issue asks
(the issue is unanswered)."""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")
max_epochs = 2
batch_size = 2


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class TinySegNet(nn.Module):
    def __init__(self, in_channels=1, out_channels=3, feature_size=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv3d(in_channels, feature_size, 3, padding=1), nn.InstanceNorm3d(feature_size),
                                 nn.LeakyReLU())
        self.out = nn.Conv3d(feature_size, out_channels, 1)

    def forward(self, x):
        return self.out(self.enc(x))


class DiceCELoss(nn.Module):
    def forward(self, logits, target):
        ce = F.cross_entropy(logits, target)
        probs = logits.softmax(1)
        onehot = F.one_hot(target, logits.shape[1]).permute(0, 4, 1, 2, 3).float()
        inter = (probs * onehot).sum(dim=(2, 3, 4))
        dice = 1 - (2 * inter + 1e-5) / (probs.sum(dim=(2, 3, 4)) + onehot.sum(dim=(2, 3, 4)) + 1e-5)
        return ce + dice.mean()


loader = [{"image": torch.randn(batch_size, 1, 8, 8, 8), "label": torch.randint(0, 3, (batch_size, 8, 8, 8))}
          for _ in range(4)]
model = TinySegNet().to(device)
loss_func = DiceCELoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-5)
stale_grads = []


def train_epoch(model, loader, optimizer, epoch, loss_func):
    model.train()
    start_time = time.time()
    run_loss = AverageMeter()
    for idx, batch_data in enumerate(loader):
        data, target = batch_data["image"].to(device), batch_data["label"].to(device)
        optimizer.zero_grad()
        logits = model(data)
        loss = loss_func(logits, target)
        stale_grads.append(any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in model.parameters()))
        loss.backward()
        optimizer.step()
        run_loss.update(loss.item(), n=batch_size)
        print(
            "Epoch {}/{} {}/{}".format(epoch, max_epochs, idx, len(loader)),
            "loss: {:.4f}".format(run_loss.avg),
            "time {:.2f}s".format(time.time() - start_time),
        )
        start_time = time.time()
    return run_loss.avg


for epoch in range(max_epochs):
    train_loss = train_epoch(model, loader, optimizer, epoch=epoch, loss_func=loss_func)
print(f"gradients carried over from the previous step: {any(stale_grads)}")
