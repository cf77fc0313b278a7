# source: written for bench/holdout17 from RULES.md AG002 (trainer class composes a low-rank transition matrix from two parameters in __init__ and reuses it in every train_step)
# symptom: Trying to backward through the graph a second time
"""Linear state-space forecaster with a low-rank transition A = U @ V, trained by a small Trainer class."""
import torch
import torch.nn as nn


class LowRankSSM(nn.Module):
    def __init__(self, state=8, rank=2):
        super().__init__()
        self.U = nn.Parameter(torch.randn(state, rank) * 0.3)
        self.V = nn.Parameter(torch.randn(rank, state) * 0.3)
        self.readout = nn.Linear(state, 1)


class Trainer:
    def __init__(self, model, lr=1e-2, horizon=5):
        self.model = model
        self.horizon = horizon
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def rollout(self, h):
        A = self.model.U @ self.model.V
        preds = []
        for _ in range(self.horizon):
            h = torch.tanh(h @ A)
            preds.append(self.model.readout(h))
        return torch.cat(preds, dim=1)

    def train_step(self, h0, target):
        self.opt.zero_grad()
        loss = nn.functional.mse_loss(self.rollout(h0), target)
        loss.backward()
        self.opt.step()
        return loss.item()


torch.manual_seed(0)
trainer = Trainer(LowRankSSM())
for step in range(4):
    h0 = torch.randn(16, 8)
    target = torch.sin(torch.linspace(0, 3, 5)).expand(16, 5)
    print("step", step, "loss", round(trainer.train_step(h0, target), 4))
