# source: written for holdout28 (pattern: multi-label tagging collate helper allocates the target matrix as torch.zeros[batch, n_tags] with square brackets)
# symptom: 'builtin_function_or_method' object is not subscriptable
"""Multi-label tagging: each document (bag of word ids) carries 1-3 of 8 tags.

The collate function turns lists of tag ids into a multi-hot target matrix.
"""
import random

import torch
import torch.nn as nn

N_WORDS, N_TAGS = 100, 8


def make_corpus(n_docs=300, seed=0):
    rng = random.Random(seed)
    tag_words = {t: rng.sample(range(N_WORDS), 6) for t in range(N_TAGS)}
    docs = []
    for _ in range(n_docs):
        tags = rng.sample(range(N_TAGS), rng.randint(1, 3))
        words = [w for t in tags for w in rng.sample(tag_words[t], 3)] + rng.sample(range(N_WORDS), 4)
        docs.append((words, tags))
    return docs


def collate(batch):
    words = [torch.tensor(w) for w, _ in batch]
    offsets = torch.tensor([0] + [len(w) for w in words[:-1]]).cumsum(0)
    targets = torch.zeros[len(batch), N_TAGS]  # expect: AG013
    for row, (_, tags) in enumerate(batch):
        targets[row, tags] = 1.0
    return torch.cat(words), offsets, targets


class Tagger(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.bag = nn.EmbeddingBag(N_WORDS, dim, mode="mean")
        self.head = nn.Linear(dim, N_TAGS)

    def forward(self, words, offsets):
        return self.head(self.bag(words, offsets))


torch.manual_seed(0)
corpus = make_corpus()
model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.BCEWithLogitsLoss()
for epoch in range(3):
    random.shuffle(corpus)
    for i in range(0, len(corpus), 32):
        words, offsets, targets = collate(corpus[i:i + 32])
        loss = criterion(model(words, offsets), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} bce {loss.item():.4f}")
