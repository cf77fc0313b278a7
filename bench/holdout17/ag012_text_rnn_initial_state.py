# source: written for bench/holdout17 from RULES.md AG012 (LSTM tagger: init_hidden returns torch.empty states that the LSTM reads)
# symptom: loss nan
"""POS-tagger-like LSTM on random token ids. Deterministic mode fills uninitialised memory with NaN, so the bug shows on every run."""
import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)


class Tagger(nn.Module):
    def __init__(self, vocab=300, emb=32, hid=48, tags=12, layers=2):
        super().__init__()
        self.layers, self.hid = layers, hid
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hid, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hid, tags)

    def init_hidden(self, batch):
        h = torch.empty(self.layers, batch, self.hid)  # expect: AG012
        c = torch.zeros(self.layers, batch, self.hid)
        return h, c

    def forward(self, tokens):
        out, _ = self.lstm(self.emb(tokens), self.init_hidden(tokens.size(0)))
        return self.out(out)


torch.manual_seed(0)
model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    tokens = torch.randint(0, 300, (6, 15))
    tags = torch.randint(0, 12, (6, 15))
    logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 12), tags.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
