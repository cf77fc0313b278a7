# source: written for bench/holdout5 (short training program, tiny causal self-attention language model)
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(17)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("mask", torch.tril(torch.ones(max_len, max_len)))

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5
        att = att.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        return self.proj(F.softmax(att, dim=-1) @ v)


class TinyLM(nn.Module):
    def __init__(self, vocab=20, dim=16, max_len=12):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.attn = CausalSelfAttention(dim, max_len)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        return self.head(self.attn(self.tok(idx)))


model = TinyLM()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
seqs = torch.randint(0, 20, (8, 12))
for step in range(20):
    logits = model(seqs[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 20), seqs[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", round(loss.item(), 3))

# move to double precision for a finite-difference check later
model.double()
print("mask dtype after double():", model.attn.mask.dtype)
