# source: written for holdout25 (pattern: fine-tuning trainer unfreezes the pretrained backbone inside the batch loop, after the forward and before backward)
# symptom: backbone grad is None after unfreezing: True
"""Two-stage fine-tuning: train the head on a frozen backbone, then unfreeze the backbone at epoch 2."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten())
        self.head = nn.Linear(8 * 16, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


class FineTuner:
    def __init__(self, model, unfreeze_epoch=2):
        self.model = model
        self.unfreeze_epoch = unfreeze_epoch
        for p in model.backbone.parameters():
            p.requires_grad = False
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def train_epoch(self, epoch, loader):
        for i, (x, y) in enumerate(loader):
            loss = F.cross_entropy(self.model(x), y)
            if epoch == self.unfreeze_epoch and i == 0:
                for p in self.model.backbone.parameters():
                    p.requires_grad = True  # expect: AG014
                unfreeze_check = True
            else:
                unfreeze_check = False
            self.optimizer.zero_grad()
            loss.backward()
            if unfreeze_check:
                print("backbone grad is None after unfreezing:", self.model.backbone[0].weight.grad is None)
            self.optimizer.step()
        return loss.item()


def make_loader(n_batches=6, bs=16):
    g = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(n_batches):
        y = torch.randint(0, 3, (bs,), generator=g)
        x = torch.randn(bs, 1, 8, 8, generator=g) + y.view(-1, 1, 1, 1).float()
        batches.append((x, y))
    return batches


if __name__ == "__main__":
    torch.manual_seed(0)
    tuner = FineTuner(Classifier())
    loader = make_loader()
    for epoch in range(4):
        print(f"epoch {epoch}: loss {tuner.train_epoch(epoch, loader):.4f}")
