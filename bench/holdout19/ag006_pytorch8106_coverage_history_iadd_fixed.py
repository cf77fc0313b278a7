# source: https://github.com/pytorch/pytorch/issues/8106
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""An attention model with a history (coverage) vector: the reporter accumulates the attention weights into
the history with `self.history += w.view_as(self.history).detach()` and gets "one of the variables needed for
gradient computation has been modified by an inplace operation", while
`self.history = self.history + w.view_as(self.history).detach()` works. The history is read by the attention
itself (here through the coverage projection, whose Linear saves its input for the weight gradient), so the
in-place update rewrites a tensor the pending graph saved.

Written for this set: a GRU encoder / GRUCell decoder with coverage attention over random token sequences;
the history starts as zeros at each batch (the report builds it with `torch.zeros(...)` in `__init__`; here
it is a registered buffer, in both files, so that the twin carries no second pattern).

Fixed as the report's own working line and the answer in the thread: the history is accumulated out of
place, `self.history = self.history + w.view_as(self.history).detach()`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HIDDEN, SRC_LEN, TGT_LEN, BATCH = 20, 32, 7, 5, 4


class Attention(nn.Module):
    def __init__(self, hidden, batch, src_len):
        super().__init__()
        self.W_h = nn.Linear(hidden, hidden, bias=False)
        self.W_s = nn.Linear(hidden, hidden)
        self.w_c = nn.Linear(1, hidden, bias=False)
        self.v = nn.Linear(hidden, 1, bias=False)
        self.register_buffer("history", torch.zeros(batch, src_len))

    def reset(self):
        self.history = torch.zeros_like(self.history)

    def forward(self, hidden, enc_out):
        coverage_feat = self.w_c(self.history.unsqueeze(-1))
        e = self.v(torch.tanh(self.W_h(enc_out) + self.W_s(hidden).unsqueeze(1) + coverage_feat)).squeeze(-1)
        w = F.softmax(e, dim=-1)
        self.history = self.history + w.view_as(self.history).detach()
        context = torch.bmm(w.unsqueeze(1), enc_out).squeeze(1)
        return context, w


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, HIDDEN)
        self.encoder = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.attention = Attention(HIDDEN, BATCH, SRC_LEN)
        self.decoder = nn.GRUCell(2 * HIDDEN, HIDDEN)
        self.out = nn.Linear(2 * HIDDEN, VOCAB)

    def forward(self, src, tgt):
        self.attention.reset()
        enc_out, h = self.encoder(self.embedding(src))
        hidden = h.squeeze(0)
        logits = []
        for t in range(tgt.size(1)):
            context, _ = self.attention(hidden, enc_out)
            hidden = self.decoder(torch.cat([self.embedding(tgt[:, t]), context], -1), hidden)
            logits.append(self.out(torch.cat([hidden, context], -1)))
        return torch.stack(logits, 1)


def main():
    model = Seq2Seq()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        src = torch.randint(0, VOCAB, (BATCH, SRC_LEN))
        tgt = torch.randint(0, VOCAB, (BATCH, TGT_LEN + 1))
        logits = model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
