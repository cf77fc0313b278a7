# source: written for holdout28 (pattern: rotary position embedding module builds its inverse frequencies from torch.range(0, dim - 2, 2) in __init__)
# symptom: torch\.range is deprecated
"""A one-layer attention model with rotary position embeddings (RoPE) on a toy
"predict the previous token" task.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Rotary(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.range(0, dim - 2, 2) / dim))  # expect: AG011
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x):
        t = torch.arange(x.shape[1], dtype=x.dtype)
        freqs = torch.outer(t, self.inv_freq)
        cos, sin = freqs.cos(), freqs.sin()
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class TinyAttention(nn.Module):
    def __init__(self, vocab=12, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.rope = Rotary(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        q, k, v = self.qkv(self.emb(tokens)).chunk(3, dim=-1)
        q, k = self.rope(q), self.rope(k)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(att)


torch.manual_seed(0)
model = TinyAttention()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(60):
    tokens = torch.randint(0, 12, (16, 10))
    logits = model(tokens)[:, 1:]
    loss = F.cross_entropy(logits.reshape(-1, 12), tokens[:, :-1].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
