# source: written for bench/holdout16 from RULES.md AG006 (helper attention function zeroes padded positions in place on the softmax output)
# symptom: modified by an inplace operation
"""Single-head self-attention encoder for a padded batch of token sequences (next-token style toy task)
(fixed: the padded positions are zeroed out of place)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def masked_attention(q, k, v, pad_mask):
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    weights = scores.softmax(dim=-1)
    weights = weights.masked_fill(pad_mask[:, None, :], 0.0)
    return weights @ v


class TinyEncoder(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.emb(tokens)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        return self.out(masked_attention(q, k, v, tokens == 0))


model = TinyEncoder()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
tokens = torch.randint(1, 50, (4, 10))
tokens[:, 7:] = 0
for step in range(3):
    opt.zero_grad()
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 50), tokens[:, 1:].reshape(-1), ignore_index=0)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
