# source: written for holdout25 (pattern: multi-task trainer backprops the first head's loss with retain_graph=True, steps, then backprops the second head through the shared trunk)
# symptom: modified by an inplace operation
"""Shared trunk with a classification head and a regression head, trained task by task."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trunk(nn.Module):
    def __init__(self, d_in=20, hidden=64):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(d_in, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
        )

    def forward(self, x):
        return self.layers(x)


class MultiTaskTrainer:
    def __init__(self):
        self.trunk = Trunk()
        self.cls_head = nn.Linear(64, 4)
        self.reg_head = nn.Linear(64, 1)
        params = list(self.trunk.parameters()) + list(self.cls_head.parameters()) + list(self.reg_head.parameters())
        self.optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)

    def train_step(self, x, labels, targets):
        feats = self.trunk(x)
        cls_loss = F.cross_entropy(self.cls_head(feats), labels)
        reg_loss = F.smooth_l1_loss(self.reg_head(feats).squeeze(-1), targets)

        self.optimizer.zero_grad()
        cls_loss.backward(retain_graph=True)  # expect: AG003
        self.optimizer.step()

        self.optimizer.zero_grad()
        reg_loss.backward()  # expect: AG003
        self.optimizer.step()
        return cls_loss.item(), reg_loss.item()


def batches(n_batches=20, bs=32):
    g = torch.Generator().manual_seed(3)
    for _ in range(n_batches):
        x = torch.randn(bs, 20, generator=g)
        labels = (x[:, :4].argmax(1))
        targets = x[:, 4:8].sum(1)
        yield x, labels, targets


if __name__ == "__main__":
    torch.manual_seed(3)
    trainer = MultiTaskTrainer()
    for i, (x, labels, targets) in enumerate(batches()):
        c, r = trainer.train_step(x, labels, targets)
        if i % 5 == 0:
            print(f"batch {i}: cls {c:.3f} reg {r:.3f}")
