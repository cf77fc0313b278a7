# source: holdout13 short program (no report)
# symptom: loss nan
"""LSTM encoder-decoder (teacher forcing) that learns to reverse short token sequences; the encoder's initial state
comes from `init_state()`. Debugging aid: deterministic mode fills uninitialised memory with NaN.

Clean twin: the initial states are `torch.zeros(...)`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)


class Seq2Seq(nn.Module):
    def __init__(self, vocab=12, dim=32):
        super().__init__()
        self.hidden = dim
        self.emb = nn.Embedding(vocab, dim)
        self.enc = nn.LSTM(dim, dim, batch_first=True)
        self.dec = nn.LSTM(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def init_state(self, batch):
        h0 = torch.zeros(1, batch, self.hidden)
        c0 = torch.zeros(1, batch, self.hidden)
        return h0, c0

    def forward(self, src, tgt_in):
        _, state = self.enc(self.emb(src), self.init_state(src.shape[0]))
        y, _ = self.dec(self.emb(tgt_in), state)
        return self.out(y)


torch.manual_seed(0)
BOS = 1
src = torch.randint(2, 12, (128, 6))
tgt = src.flip(1)
tgt_in = torch.cat([torch.full((128, 1), BOS), tgt[:, :-1]], 1)
model = Seq2Seq()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(3):
    for s, ti, to in zip(src.split(32), tgt_in.split(32), tgt.split(32)):
        opt.zero_grad()
        loss = F.cross_entropy(model(s, ti).reshape(-1, 12), to.reshape(-1))
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
