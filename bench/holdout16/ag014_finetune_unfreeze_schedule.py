# source: written for bench/holdout16 from RULES.md AG014 (fine-tuning trainer unfreezes the backbone in a callback that runs after the forward, before backward)
# symptom: backbone got no gradient in the unfreeze step: True
"""Sentence-pair classification fine-tuning: the encoder is frozen for the first epochs, then unfrozen by a schedule."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PairClassifier(nn.Module):
    def __init__(self, vocab=200, dim=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.EmbeddingBag(vocab, dim), nn.Linear(dim, dim), nn.Tanh())
        self.head = nn.Linear(2 * dim, 3)

    def forward(self, a, b):
        return self.head(torch.cat([self.encoder(a), self.encoder(b)], -1))


class FineTuneTrainer:
    def __init__(self, model, unfreeze_epoch=1):
        self.model = model
        self.unfreeze_epoch = unfreeze_epoch
        for p in model.encoder.parameters():
            p.requires_grad = False
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def on_step(self, epoch, step):
        if epoch == self.unfreeze_epoch and step == 0:
            for p in self.model.encoder.parameters():
                p.requires_grad = True  # expect: AG014

    def train(self, batches, epochs=2):
        missed = False
        for epoch in range(epochs):
            for step, (a, b, y) in enumerate(batches):
                self.opt.zero_grad()
                loss = F.cross_entropy(self.model(a, b), y)
                self.on_step(epoch, step)
                loss.backward()
                if epoch == self.unfreeze_epoch and step == 0:
                    missed = all(p.grad is None for p in self.model.encoder.parameters())
                self.opt.step()
            print(f"epoch {epoch} loss {loss.item():.4f}")
        return missed


batches = [(torch.randint(0, 200, (8, 6)), torch.randint(0, 200, (8, 6)), torch.randint(0, 3, (8,))) for _ in range(3)]
missed = FineTuneTrainer(PairClassifier()).train(batches)
print(f"backbone got no gradient in the unfreeze step: {missed}")
