# source: https://github.com/facebookresearch/fairseq/pull/5213
# symptom: weights follow the module to float64: False
"""fairseq `modules/sinusoidal_positional_embedding.py`: `SinusoidalPositionalEmbedding.__init__` keeps the table as a
plain attribute, `self.weights = SinusoidalPositionalEmbedding.get_embedding(...)`, and relies on a dummy
`_float_tensor` buffer to re-cast it inside `forward`; moving or casting the module (`.to(...)`, `.double()`) leaves
`weights` behind (the problem the pull request describes)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_positions(tensor, padding_idx: int):
    mask = tensor.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


class SinusoidalPositionalEmbedding(nn.Module):
    """This module produces sinusoidal positional embeddings of any length. Padding symbols are ignored."""

    def __init__(self, embedding_dim, padding_idx, init_size=1024):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx if padding_idx is not None else 0
        self.weights = SinusoidalPositionalEmbedding.get_embedding(init_size, embedding_dim, padding_idx)  # expect: AG009
        self.register_buffer("_float_tensor", torch.FloatTensor(1))
        self.max_positions = int(1e5)

    @staticmethod
    def get_embedding(num_embeddings: int, embedding_dim: int, padding_idx=None):
        half_dim = embedding_dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
        emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
        if embedding_dim % 2 == 1:
            emb = torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)
        if padding_idx is not None:
            emb[padding_idx, :] = 0
        return emb

    def forward(self, input):
        bsz, seq_len = input.shape
        max_pos = self.padding_idx + 1 + seq_len
        if self.weights is None or max_pos > self.weights.size(0):
            self.weights = SinusoidalPositionalEmbedding.get_embedding(max_pos, self.embedding_dim, self.padding_idx)
        self.weights = self.weights.to(self._float_tensor)
        positions = make_positions(input, self.padding_idx)
        return self.weights.index_select(0, positions.view(-1)).view(bsz, seq_len, -1).detach()


class TransformerEncoder(nn.Module):
    def __init__(self, vocab=30, embed_dim=16, padding_idx=1):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, embed_dim, padding_idx=padding_idx)
        self.embed_scale = math.sqrt(embed_dim)
        self.embed_positions = SinusoidalPositionalEmbedding(embed_dim, padding_idx, init_size=64)
        layer = nn.TransformerEncoderLayer(embed_dim, 2, 32, dropout=0.0, batch_first=True)
        self.layers = nn.TransformerEncoder(layer, 1)
        self.output_projection = nn.Linear(embed_dim, vocab)

    def forward(self, src_tokens):
        x = self.embed_scale * self.embed_tokens(src_tokens) + self.embed_positions(src_tokens)
        return self.output_projection(self.layers(x))


model = TransformerEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    tokens = torch.randint(2, 30, (2, 9))
    logits = model(tokens)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), tokens.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} | loss {loss.item():.4f}")

model.double()
print(f"weights follow the module to float64: {model.embed_positions.weights.dtype == torch.float64}")
