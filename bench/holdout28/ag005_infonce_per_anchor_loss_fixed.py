# source: written for holdout28 (pattern: SimCLR-style trainer's InfoNCE helper returns the per-anchor cross-entropy (reduction='none') and the train step calls backward on it)
# symptom: grad can be implicitly created only for scalar outputs
"""Contrastive pre-training of a small encoder with two noisy "views" per sample.

The InfoNCE helper keeps per-anchor losses so that hard anchors can be logged.

Fixed: the train step backpropagates the mean of the per-anchor losses.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def augment(x):
    mask = (torch.rand_like(x) > 0.1).float()
    return x * mask + 0.1 * torch.randn_like(x)


def info_nce(z1, z2, temperature=0.2):
    z1, z2 = F.normalize(z1, dim=1), F.normalize(z2, dim=1)
    logits = z1 @ z2.t() / temperature
    labels = torch.arange(z1.shape[0])
    return F.cross_entropy(logits, labels, reduction="none")


class ContrastiveTrainer:
    def __init__(self, d_in=16, d_out=8):
        self.encoder = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU(), nn.Linear(64, d_out))
        self.opt = torch.optim.SGD(self.encoder.parameters(), lr=0.05, momentum=0.9)

    def train_step(self, x):
        per_anchor = info_nce(self.encoder(augment(x)), self.encoder(augment(x)))
        hardest = per_anchor.detach().max().item()
        self.opt.zero_grad()
        per_anchor.mean().backward()
        self.opt.step()
        return per_anchor.detach().mean().item(), hardest


def main():
    torch.manual_seed(0)
    data = torch.randn(256, 16)
    trainer = ContrastiveTrainer()
    for epoch in range(3):
        for i in range(0, 256, 32):
            loss, hardest = trainer.train_step(data[i:i + 32])
        print(f"epoch {epoch} loss {loss:.3f} hardest anchor {hardest:.3f}")


if __name__ == "__main__":
    main()
