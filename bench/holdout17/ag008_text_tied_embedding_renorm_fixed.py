# source: written for bench/holdout17 from RULES.md AG008 (language-model trainer: a max-norm helper renormalises the tied embedding through .data after the loss, before backward)
# symptom: encoder gradient differs from the graph's own weights: True
"""Tiny GRU language model with tied input/output embeddings and max-norm rows, trained by a Trainer class."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F


class TiedLM(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)

    def forward(self, tokens):
        h, _ = self.rnn(self.emb(tokens))
        return h @ self.emb.weight.t()


class LMTrainer:
    def __init__(self, model, max_norm=1.0, lr=1e-2):
        self.model = model
        self.max_norm = max_norm
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)
        self.mismatch = []

    def _loss(self, model, batch):
        logits = model(batch[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch[:, 1:].reshape(-1))

    def _renorm(self):
        w = self.model.emb.weight
        with torch.no_grad():
            norms = w.norm(dim=1, keepdim=True).clamp(min=self.max_norm)
            w.div_(norms / self.max_norm)

    def train_step(self, batch):
        ref = copy.deepcopy(self.model)
        self._loss(ref, batch).backward()
        self.opt.zero_grad()
        loss = self._loss(self.model, batch)
        loss.backward()
        self.mismatch.append(not torch.allclose(self.model.rnn.weight_hh_l0.grad, ref.rnn.weight_hh_l0.grad))
        self.opt.step()
        self._renorm()
        return loss.item()


torch.manual_seed(0)
model = TiedLM()
with torch.no_grad():
    model.emb.weight.mul_(3.0)
trainer = LMTrainer(model)
for step in range(3):
    print("step", step, "loss", round(trainer.train_step(torch.randint(0, 100, (8, 10))), 4))
print("encoder gradient differs from the graph's own weights:", any(trainer.mismatch))
