# source: holdout11 short program (no report)
# symptom: history keeps graph: True
"""Trainer class for a small autoencoder whose fit() appends each batch loss tensor to a history list."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4))
        self.dec = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 32))

    def forward(self, x):
        return self.dec(self.enc(x))


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.history = []

    def training_step(self, batch):
        recon = self.model(batch)
        return F.mse_loss(recon, batch)

    def fit(self, data, epochs=3, bs=64):
        for epoch in range(epochs):
            for i in range(0, len(data), bs):
                loss = self.training_step(data[i:i + bs])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.history.append(loss)  # expect: AG015
            print(f"epoch {epoch} last loss {self.history[-1].item():.4f}")


trainer = Trainer(AutoEncoder())
trainer.fit(torch.randn(512, 32))
print("history keeps graph:", any(l.grad_fn is not None for l in trainer.history))
