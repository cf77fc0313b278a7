# source: written for bench/holdout17 from RULES.md AG006 (text classifier with attention pooling: exp scores normalised with an in-place /= before pooling)
# symptom: modified by an inplace operation
"""Bag-of-embeddings sentiment classifier with a hand-written masked softmax attention pool."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AttnPoolClassifier(nn.Module):
    def __init__(self, vocab=500, dim=32, n_cls=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.score = nn.Linear(dim, 1)
        self.out = nn.Linear(dim, n_cls)

    def pool(self, h, pad_mask):
        scores = torch.exp(self.score(h).squeeze(-1).masked_fill(pad_mask == 0, -30.0))
        scores = scores / (scores.sum(-1, keepdim=True) + 1e-9)
        return (scores.unsqueeze(-1) * h).sum(1)

    def forward(self, tokens):
        h = self.emb(tokens)
        return self.out(self.pool(h, (tokens != 0).float()))


def train_epoch(model, batches, optimizer):
    model.train()
    for tokens, labels in batches:
        loss = F.cross_entropy(model(tokens), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = AttnPoolClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.randint(0, 500, (8, 12)), torch.randint(0, 2, (8,))) for _ in range(4)]
print("loss", train_epoch(model, batches, optimizer))
