# source: https://github.com/pytorch/pytorch/issues/46811
# symptom: torch\.range is deprecated
"""pytorch/pytorch#46811 "Mismatch between torch.range() and Python's range()": the reporter expected
`torch.range(start=0, end=3, step=1)` to give `[0, 1, 2]` like `range(0, 3, 1)` and got four values; the
answer is that `torch.range` is deprecated in favour of `torch.arange`. Here the positions of a
sinusoidal encoding are built that way, one row too many for the sequence.

Fixed as the thread answers: `torch.arange(start=0, end=seq_len, step=1)` (as float positions)."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model=8):
        super().__init__()
        self.d_model = d_model

    def forward(self, x):
        seq_len = x.size(1)
        positions = torch.arange(start=0, end=seq_len, step=1).float().unsqueeze(1)
        div_term = torch.exp(torch.arange(0, self.d_model, 2) * (-math.log(10000.0) / self.d_model))
        pe = torch.zeros(positions.size(0), self.d_model)
        pe[:, 0::2] = torch.sin(positions * div_term)
        pe[:, 1::2] = torch.cos(positions * div_term)
        return x + pe.unsqueeze(0)


def main():
    model = nn.Sequential(nn.Linear(4, 8), PositionalEncoding(8), nn.Linear(8, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(6, 3, 4)
    y = torch.randn(6, 3, 1)
    for step in range(3):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
