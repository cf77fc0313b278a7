# source: written for bench/holdout17 from RULES.md AG003 (seq2seq trainer: token loss backward retains the graph, optimizer steps, then a length-prediction loss reuses the encoder graph)
# symptom: modified by an inplace operation
"""Tiny GRU seq2seq (copy task) with an auxiliary target-length head sharing the encoder."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Seq2Seq(nn.Module):
    def __init__(self, vocab=20, hid=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, hid)
        self.enc = nn.GRU(hid, hid, batch_first=True)
        self.dec = nn.GRU(hid, hid, batch_first=True)
        self.out = nn.Linear(hid, vocab)
        self.length_head = nn.Linear(hid, 1)

    def forward(self, src, tgt_in):
        _, h = self.enc(self.emb(src))
        dec_out, _ = self.dec(self.emb(tgt_in), h)
        return self.out(dec_out), self.length_head(h[-1]).squeeze(-1)


class Seq2SeqTrainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    def step(self, src, tgt):
        self.optimizer.zero_grad()
        logits, length = self.model(src, tgt[:, :-1])
        token_loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
        token_loss.backward(retain_graph=True)  # expect: AG003
        self.optimizer.step()
        length_loss = self.cfg["length_weight"] * F.mse_loss(length, (tgt != 0).sum(1).float())
        length_loss.backward()  # expect: AG003
        self.optimizer.step()
        return token_loss.item(), length_loss.item()


torch.manual_seed(0)
trainer = Seq2SeqTrainer(Seq2Seq(), {"lr": 1e-3, "length_weight": 0.1})
for it in range(3):
    src = torch.randint(1, 20, (8, 7))
    tgt = torch.cat([torch.zeros(8, 1, dtype=torch.long), src], dim=1)
    print(it, trainer.step(src, tgt))
