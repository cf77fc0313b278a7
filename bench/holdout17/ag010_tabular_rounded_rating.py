# source: written for bench/holdout17 from RULES.md AG010 (recommender regression: a predict helper rounds the score to a star rating, and the L1 loss is taken on the rounded value)
# symptom: all gradients zero: True
"""Matrix-factorisation rating model trained on rounded 1-5 star predictions."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MF(nn.Module):
    def __init__(self, users=40, items=60, k=8):
        super().__init__()
        self.u = nn.Embedding(users, k)
        self.i = nn.Embedding(items, k)
        self.bias = nn.Parameter(torch.tensor(3.0))

    def forward(self, users, items):
        return (self.u(users) * self.i(items)).sum(-1) + self.bias


def predict_stars(model, users, items):
    return torch.round(model(users, items)).clamp(1, 5)


torch.manual_seed(0)
model = MF()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
users = torch.randint(0, 40, (512,))
items = torch.randint(0, 60, (512,))
ratings = torch.randint(1, 6, (512,)).float()
all_zero = True
for epoch in range(3):
    for i in range(0, 512, 128):
        pred = predict_stars(model, users[i:i + 128], items[i:i + 128])
        loss = F.l1_loss(pred, ratings[i:i + 128])
        opt.zero_grad()
        loss.backward()  # expect: AG010
        all_zero = all_zero and all(p.grad is None or not p.grad.any() for p in model.parameters())
        opt.step()
    print("epoch", epoch, "MAE", round(loss.item(), 3))
print("all gradients zero:", all_zero)
