# source: written for holdout28 (pattern: tied-embedding language-model trainer freezes the embedding matrix in a callback between forward and backward and then renormalises its rows in place, which the pending graph saved)
# symptom: modified by an inplace operation
"""Bigram language model with tied input/output embeddings on a synthetic corpus.

After FREEZE_AT steps the embeddings are frozen (and renormalised to unit rows,
which suits the tied softmax); only the projection keeps training.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

V, D, FREEZE_AT = 40, 16, 15


class TiedBigramLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.proj = nn.Linear(D, D)

    def forward(self, tokens):
        h = torch.tanh(self.proj(self.emb(tokens)))
        return h @ self.emb.weight.t()


def freeze_and_normalise(embedding):
    embedding.weight.requires_grad_(False)  # expect: AG014
    embedding.weight.div_(embedding.weight.norm(dim=1, keepdim=True))


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=5e-3)
        self.callbacks = {FREEZE_AT: lambda: freeze_and_normalise(model.emb)}

    def fit(self, corpus, steps=30, batch=64):
        for step in range(steps):
            idx = torch.randint(0, len(corpus) - 1, (batch,))
            logits = self.model(corpus[idx])
            loss = F.cross_entropy(logits, corpus[idx + 1])
            if step in self.callbacks:
                self.callbacks[step]()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if step % 10 == 0:
                print(f"step {step} loss {loss.item():.3f}")


torch.manual_seed(0)
transition = torch.softmax(torch.randn(V, V) * 3, dim=1)
corpus = [0]
for _ in range(2000):
    corpus.append(torch.multinomial(transition[corpus[-1]], 1).item())
Trainer(TiedBigramLM()).fit(torch.tensor(corpus))
