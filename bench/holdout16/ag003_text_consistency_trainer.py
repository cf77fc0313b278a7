# source: written for bench/holdout16 from RULES.md AG003 (trainer class: supervised update retains the graph and steps, a consistency method backpropagates through it later)
# symptom: modified by an inplace operation
"""Sentiment classifier (bag of embeddings) trained with a supervised loss plus a consistency loss between two dropout views."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BagClassifier(nn.Module):
    def __init__(self, vocab=100, dim=16, n_cls=2):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(dim, n_cls)

    def forward(self, tokens):
        return self.fc(self.drop(self.emb(tokens)))


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.model = BagClassifier()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg["lr"])

    def supervised_update(self, tokens, labels):
        self.optimizer.zero_grad()
        self.logits_a = self.model(tokens)
        self.logits_b = self.model(tokens)
        loss = F.cross_entropy(self.logits_a, labels)
        loss.backward(retain_graph=True)  # expect: AG003
        self.optimizer.step()
        return loss.item()

    def consistency_update(self):
        self.optimizer.zero_grad()
        p = F.log_softmax(self.logits_a, -1)
        q = F.softmax(self.logits_b, -1)
        loss = self.cfg["cons_weight"] * F.kl_div(p, q, reduction="batchmean")
        loss.backward()  # expect: AG003
        self.optimizer.step()
        return loss.item()

    def fit(self, batches):
        for tokens, labels in batches:
            sup = self.supervised_update(tokens, labels)
            cons = self.consistency_update()
            print(f"sup {sup:.4f} cons {cons:.4f}")


batches = [(torch.randint(0, 100, (8, 12)), torch.randint(0, 2, (8,))) for _ in range(3)]
Trainer({"lr": 1e-3, "cons_weight": 0.5}).fit(batches)
