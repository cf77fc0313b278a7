# source: holdout13 short program (no report)
# symptom: modified by an inplace operation
"""GRU forecaster on a long noisy sine wave, trained chunk by chunk (truncated BPTT) with the hidden state carried
over; a `while` loop with a step counter.

Clean twin: the carried hidden state is detached at each chunk boundary and `retain_graph=True` is gone.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Forecaster(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.gru = nn.GRU(1, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, h=None):
        y, h = self.gru(x, h)
        return self.out(y), h


torch.manual_seed(0)
t = torch.linspace(0, 40, 801)
series = (torch.sin(t) + 0.1 * torch.randn_like(t)).view(1, -1, 1)
model = Forecaster()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
chunk, step, h = 50, 0, None
while (step + 1) * chunk + 1 <= series.shape[1]:
    start = step * chunk
    inp = series[:, start:start + chunk]
    target = series[:, start + 1:start + chunk + 1]
    opt.zero_grad()
    pred, h = model(inp, None if h is None else h.detach())
    loss = F.mse_loss(pred, target)
    loss.backward()
    opt.step()
    step += 1
print(f"{step} chunks, last loss {loss.item():.4f}")
