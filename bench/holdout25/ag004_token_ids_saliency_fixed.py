# source: written for holdout25 (pattern: input-saliency helper asks for gradients on the integer token ids instead of on their embeddings)
# symptom: [Oo]nly Tensors of floating point (and complex )?dtype can require gradients
"""Train a small sentiment-style classifier, then compute a gradient saliency map per token.

Fixed: the saliency gradient is taken on the (float) token embeddings, one norm per token."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, DIM = 40, 16
POSITIVE = set(range(1, 10))


class TokenCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.conv = nn.Conv1d(DIM, 32, kernel_size=3, padding=1)
        self.fc = nn.Linear(32, 2)

    def forward_embeddings(self, emb):
        h = F.relu(self.conv(emb.transpose(1, 2)))
        return self.fc(h.max(dim=2).values)

    def forward(self, ids):
        return self.forward_embeddings(self.embed(ids))


def sample(n=64, length=10):
    seqs = [[random.randrange(1, VOCAB) for _ in range(length)] for _ in range(n)]
    labels = [int(sum(t in POSITIVE for t in s) >= 3) for s in seqs]
    return seqs, labels


def saliency(model, seq):
    ids = torch.tensor([seq])
    emb = model.embed(ids).detach().requires_grad_(True)
    logits = model.forward_embeddings(emb)
    logits[0, logits.argmax()].backward()
    return emb.grad.norm(dim=-1).squeeze(0)


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    model = TokenCNN()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(40):
        seqs, labels = sample()
        loss = F.cross_entropy(model(torch.tensor(seqs)), torch.tensor(labels))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("train loss", round(loss.item(), 3))
    seqs, _ = sample(1)
    print("saliency", saliency(model, seqs[0]))
