# source: written for holdout25 (pattern: hand-written attention pooling normalises exp(scores) in place with /=, overwriting the output ExpBackward saved)
# symptom: modified by an inplace operation
"""Attention-pooled sequence classifier with a hand-written masked softmax.

Fixed: the normalisation is written out of place."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, h, mask):
        scores = self.score(h).squeeze(-1)
        scores = scores.masked_fill(mask == 0, -1e4)
        scores = scores - scores.max(dim=1, keepdim=True).values.detach()
        weights = scores.exp()
        weights = weights / (weights.sum(dim=1, keepdim=True) + 1e-9)
        return (weights.unsqueeze(-1) * h).sum(dim=1), weights


class GRUClassifier(nn.Module):
    def __init__(self, d_in=8, hidden=32, n_classes=3):
        super().__init__()
        self.rnn = nn.GRU(d_in, hidden, batch_first=True)
        self.pool = AttentionPool(hidden)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x, mask):
        h, _ = self.rnn(x)
        pooled, _ = self.pool(h, mask)
        return self.head(pooled)


def make_batch(bs=16, max_len=12):
    lengths = torch.randint(4, max_len + 1, (bs,))
    mask = (torch.arange(max_len)[None, :] < lengths[:, None]).float()
    x = torch.randn(bs, max_len, 8) * mask.unsqueeze(-1)
    y = (x[..., 0].sum(1) > 0).long() + (x[..., 1].sum(1) > 1).long()
    return x, mask, y


if __name__ == "__main__":
    torch.manual_seed(0)
    model = GRUClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for step in range(25):
        x, mask, y = make_batch()
        loss = F.cross_entropy(model(x, mask), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", round(loss.item(), 4))
