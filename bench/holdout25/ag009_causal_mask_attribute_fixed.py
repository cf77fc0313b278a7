# source: written for holdout25 (pattern: causal self-attention stores its triangular mask as a plain tensor attribute in __init__; model.to(dtype) leaves it behind)
# symptom: buffer left behind by \.to\(\): True
"""Character-level tiny transformer block trained on a repeating string, then converted to float64 for a gradcheck-style test.

Fixed: the mask is registered with register_buffer, so .to() converts it and state_dict holds it."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = "hello autograd, " * 40
chars = sorted(set(TEXT))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in TEXT])
BLOCK = 16


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, block_size):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        att = (q @ k.transpose(1, 2)) / math.sqrt(C)
        att = att.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        return self.proj(F.softmax(att, dim=-1) @ v)


class TinyLM(nn.Module):
    def __init__(self, vocab, dim=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(BLOCK, dim)
        self.attn = CausalSelfAttention(dim, BLOCK)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        pos = torch.arange(idx.size(1))
        x = self.tok(idx) + self.pos(pos)
        return self.head(x + self.attn(x))


def get_batch(bs=8):
    ix = torch.randint(0, len(data) - BLOCK - 1, (bs,))
    x = torch.stack([data[i:i + BLOCK] for i in ix])
    y = torch.stack([data[i + 1:i + BLOCK + 1] for i in ix])
    return x, y


torch.manual_seed(0)
model = TinyLM(len(chars))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(60):
    x, y = get_batch()
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
print("loss", round(loss.item(), 3))

model = model.to(torch.float64)
print("buffer left behind by .to():", model.attn.mask.dtype != torch.float64)
print("mask in state_dict:", any(k.endswith("mask") for k in model.state_dict()))
