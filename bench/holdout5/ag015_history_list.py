# source: written for bench/holdout5 (short training program, trainer class keeping a loss history for plotting)
# symptom: history keeps graphs: True
import torch
from torch import nn

torch.manual_seed(28)


class Trainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.opt = torch.optim.RMSprop(model.parameters(), lr=lr)
        self.history = []

    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = nn.functional.smooth_l1_loss(self.model(x), y)
        loss.backward()
        self.opt.step()
        return loss

    def fit(self, x, y, epochs):
        for epoch in range(epochs):
            loss = self.train_step(x, y)
            self.history.append(loss)  # expect: AG015
        return self.history


x = torch.rand(100, 2) * 4 - 2
y = (x[:, :1] * x[:, 1:]).tanh()
trainer = Trainer(nn.Sequential(nn.Linear(2, 32), nn.SiLU(), nn.Linear(32, 1)))
hist = trainer.fit(x, y, 40)
print("first / last:", float(hist[0]), float(hist[-1]))
print("history keeps graphs:", any(h.requires_grad for h in hist))
