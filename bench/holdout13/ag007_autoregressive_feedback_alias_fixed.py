# source: holdout13 short program (no report)
# symptom: feedback requires grad: True
"""Multi-step time-series forecasting: an MLP on a sliding window, rolled out autoregressively in a helper called
from the loop; the fed-back prediction is meant to be a constant (no backprop through the feedback).

Clean twin: the fed-back prediction is `pred.detach()`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def rollout_loss(model, window, future):
    preds, inp = [], window
    for k in range(future.shape[1]):
        pred = model(inp)
        preds.append(pred)
        with torch.no_grad():
            feedback = pred.detach()
        inp = torch.cat([inp[:, 1:], feedback], dim=1)
    return F.mse_loss(torch.cat(preds, 1), future), feedback


torch.manual_seed(0)
t = torch.arange(0, 600) * 0.1
series = torch.sin(t) + 0.5 * torch.sin(0.3 * t) + 0.05 * torch.randn(600)
win, horizon = 16, 4
starts = torch.arange(0, 600 - win - horizon)
windows = torch.stack([series[s:s + win] for s in starts])
futures = torch.stack([series[s + win:s + win + horizon] for s in starts])

model = nn.Sequential(nn.Linear(win, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for wb, fb in zip(windows.split(64), futures.split(64)):
        opt.zero_grad()
        loss, feedback = rollout_loss(model, wb, fb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
print(f"feedback requires grad: {feedback.requires_grad}")
