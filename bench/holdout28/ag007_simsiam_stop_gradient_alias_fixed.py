# source: written for holdout28 (pattern: SimSiam trainer method takes the stop-gradient target with a plain alias of the projection inside torch.no_grad(), so the target branch still backpropagates)
# symptom: target still tracked by autograd: True
"""SimSiam on random feature vectors with two augmentations per sample.

The predictor output of one view is regressed onto the (stop-gradient)
projection of the other view.

Fixed: the stop-gradient target is z.detach(), not an alias taken under no_grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def augment(x):
    return x * (1 + 0.2 * torch.randn_like(x)) + 0.1 * torch.randn_like(x)


class SimSiam(nn.Module):
    def __init__(self, d_in=20, d_proj=16):
        super().__init__()
        self.projector = nn.Sequential(nn.Linear(d_in, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, d_proj))
        self.predictor = nn.Sequential(nn.Linear(d_proj, 8), nn.ReLU(), nn.Linear(8, d_proj))


class SimSiamTrainer:
    def __init__(self):
        self.model = SimSiam()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        self.target_tracked = False

    def neg_cosine(self, p, z):
        target = z.detach()
        self.target_tracked |= target.requires_grad
        return -F.cosine_similarity(p, target, dim=-1).mean()

    def step(self, x):
        z1 = self.model.projector(augment(x))
        z2 = self.model.projector(augment(x))
        p1, p2 = self.model.predictor(z1), self.model.predictor(z2)
        loss = 0.5 * self.neg_cosine(p1, z2) + 0.5 * self.neg_cosine(p2, z1)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


torch.manual_seed(0)
data = torch.randn(256, 20)
trainer = SimSiamTrainer()
for epoch in range(3):
    for i in range(0, 256, 64):
        loss = trainer.step(data[i:i + 64])
    print(f"epoch {epoch} loss {loss:.4f}")
print(f"target still tracked by autograd: {trainer.target_tracked}")
