# source: written for bench/holdout16 from RULES.md AG003 (plain loop: point-forecast loss retained, optimizer step, quantile loss backward)
# symptom: modified by an inplace operation
"""GRU forecaster with a point head and a quantile head on a shared encoder (synthetic sensor series)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Forecaster(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.enc = nn.GRU(1, hidden, batch_first=True)
        self.point = nn.Linear(hidden, 1)
        self.quant = nn.Linear(hidden, 3)

    def forward(self, x):
        _, h = self.enc(x)
        h = h[-1]
        return self.point(h), self.quant(h)


def pinball(pred, y, qs=(0.1, 0.5, 0.9)):
    q = torch.tensor(qs)
    err = y - pred
    return torch.maximum(q * err, (q - 1) * err).mean()


model = Forecaster()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
series = torch.cumsum(torch.randn(64, 25, 1), dim=1)
for epoch in range(3):
    x, y = series[:, :-1], series[:, -1]
    opt.zero_grad()
    point, quant = model(x)
    mse = nn.functional.mse_loss(point, y)
    mse.backward(retain_graph=True)  # expect: AG003
    opt.step()
    q_loss = pinball(quant, y)
    q_loss.backward()  # expect: AG003
    opt.step()
    print(f"epoch {epoch} mse {mse.item():.3f} pinball {q_loss.item():.3f}")
