# source: written for holdout25 (pattern: nn.Module __init__ zeroes the padding row of a trainable embedding with an index assignment outside no_grad)
# symptom: leaf Variable that requires grad is being used in an in-place operation
"""Bag-of-embeddings text classifier; the padding row is zeroed at construction time."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0
VOCAB = 50


class BagClassifier(nn.Module):
    def __init__(self, vocab_size, dim, n_classes, pad_idx=PAD):
        super().__init__()
        self.pad_idx = pad_idx
        self.embed = nn.Embedding(vocab_size, dim)
        nn.init.normal_(self.embed.weight, std=0.1)
        self.embed.weight[pad_idx] = 0.0  # expect: AG001
        self.out = nn.Linear(dim, n_classes)

    def forward(self, tokens):
        mask = (tokens != self.pad_idx).float().unsqueeze(-1)
        emb = self.embed(tokens) * mask
        pooled = emb.sum(1) / mask.sum(1).clamp(min=1.0)
        return self.out(pooled)


def make_batch(batch_size=16, max_len=12):
    rows, labels = [], []
    for _ in range(batch_size):
        n = random.randint(3, max_len)
        ids = [random.randint(1, VOCAB - 1) for _ in range(n)] + [PAD] * (max_len - n)
        rows.append(ids)
        labels.append(sum(ids) % 3)
    return torch.tensor(rows), torch.tensor(labels)


def main():
    random.seed(0)
    torch.manual_seed(0)
    model = BagClassifier(VOCAB, 32, 3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(30):
        tokens, labels = make_batch()
        loss = F.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("final loss", round(loss.item(), 4))


if __name__ == "__main__":
    main()
