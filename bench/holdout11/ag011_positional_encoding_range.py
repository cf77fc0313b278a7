# source: holdout11 short program (no report)
# symptom: torch\.range is deprecated
"""Sinusoidal positional encoding helper for a tiny transformer regressor; positions come from torch.range."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def sinusoidal_encoding(seq_len, dim):
    pos = torch.range(0, seq_len - 1).unsqueeze(1)  # expect: AG011
    div = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


class TinyTransformer(nn.Module):
    def __init__(self, dim=16, seq_len=12):
        super().__init__()
        self.inp = nn.Linear(1, dim)
        self.register_buffer("pe", sinusoidal_encoding(seq_len, dim))
        layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.inp(x.unsqueeze(-1)) + self.pe
        return self.head(self.encoder(h).mean(dim=1)).squeeze(-1)


model = TinyTransformer()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(10):
    x = torch.randn(32, 12)
    y = x.cumsum(dim=1)[:, -1]
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")
