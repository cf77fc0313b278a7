# source: written for holdout25 (pattern: trainer class appends each step's loss tensor to self.losses for later plotting)
# symptom: loss keeps graph of every batch: True
"""Sequence regression with an LSTM; the trainer keeps a loss history for a plot."""
import torch
import torch.nn as nn


class Forecaster(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.out(h[:, -1])


class Trainer:
    def __init__(self, model, lr=5e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.loss_fn = nn.MSELoss()
        self.losses = []

    def step(self, x, y):
        self.model.train()
        loss = self.loss_fn(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.losses.append(loss)  # expect: AG015
        return loss

    def smoothed(self, k=5):
        recent = self.losses[-k:]
        return sum(recent) / len(recent)


def windows(n=40, length=20):
    t = torch.linspace(0, 20, 400)
    series = torch.sin(t) + 0.05 * torch.randn_like(t)
    starts = torch.randint(0, 400 - length - 1, (n,))
    x = torch.stack([series[s:s + length] for s in starts]).unsqueeze(-1)
    y = torch.stack([series[s + length] for s in starts]).unsqueeze(-1)
    return x, y


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = Trainer(Forecaster())
    for it in range(30):
        trainer.step(*windows())
        if it % 10 == 9:
            print(f"iter {it}: smoothed loss {float(trainer.smoothed()):.4f}")
    print("loss keeps graph of every batch:", all(l.grad_fn is not None for l in trainer.losses))
