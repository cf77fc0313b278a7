# source: written for holdout28 (pattern: metric-learning helper l2-normalises the tanh projection in place with div_, overwriting the output TanhBackward saved)
# symptom: modified by an inplace operation
"""Triplet-loss metric learning on Gaussian classes.

Embeddings are projected with tanh and l2-normalised before the triplet loss.

Fixed: the helper normalises out of place (F.normalize), leaving the tanh
output that autograd saved untouched.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def l2_normalize(emb, eps=1e-8):
    """Normalise rows (out of place: the tanh output is saved for backward)."""
    return F.normalize(emb, dim=1, eps=eps)


class Embedder(nn.Module):
    def __init__(self, d_in=12, d_emb=6):
        super().__init__()
        self.fc1 = nn.Linear(d_in, 48)
        self.fc2 = nn.Linear(48, d_emb)

    def forward(self, x):
        z = torch.tanh(self.fc2(F.relu(self.fc1(x))))
        return l2_normalize(z)


def sample_triplets(centers, n=64):
    c = torch.randint(0, len(centers), (n,))
    other = (c + torch.randint(1, len(centers), (n,))) % len(centers)
    noise = lambda: 0.6 * torch.randn(n, centers.shape[1])
    return centers[c] + noise(), centers[c] + noise(), centers[other] + noise()


def main():
    torch.manual_seed(0)
    centers = torch.randn(5, 12) * 2
    model = Embedder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.TripletMarginLoss(margin=0.3)
    for step in range(60):
        a, p, n = sample_triplets(centers)
        loss = criterion(model(a), model(p), model(n))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 0:
            print(f"step {step} triplet loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
