# source: written for holdout28 (pattern: weight-noise regularisation trainer restores the clean weights through .data right after the noisy forward, before backward, so the saved weights no longer match the forward)
# symptom: grads differ from clean backward: True
"""Regression with weight-noise injection (a cheap Bayesian-ish regulariser).

Each step: add Gaussian noise to the weights, run the forward pass, restore the
clean weights, backpropagate, and step.
"""
import copy

import torch
import torch.nn as nn


class NoisyWeightTrainer:
    def __init__(self, model, std=0.1, lr=1e-2):
        self.model = model
        self.std = std
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)
        self.checked = False

    def add_noise(self):
        noise = []
        with torch.no_grad():
            for p in self.model.parameters():
                n = torch.randn_like(p) * self.std
                p.add_(n)
                noise.append(n)
        return noise

    def remove_noise(self, noise):
        for p, n in zip(self.model.parameters(), noise):
            p.data.sub_(n)  # expect: AG008

    def train_step(self, x, y):
        noise = self.add_noise()
        noisy_copy = copy.deepcopy(self.model) if not self.checked else None
        loss = ((self.model(x) - y) ** 2).mean()
        self.remove_noise(noise)
        self.opt.zero_grad()
        loss.backward()
        if noisy_copy is not None:
            ((noisy_copy(x) - y) ** 2).mean().backward()
            differ = any(not torch.allclose(p.grad, q.grad, atol=1e-6)
                         for p, q in zip(self.model.parameters(), noisy_copy.parameters()))
            print(f"grads differ from clean backward: {differ}")
            self.checked = True
        self.opt.step()
        return loss.item()


torch.manual_seed(0)
X = torch.randn(256, 4)
Y = torch.sin(X.sum(1, keepdim=True))
trainer = NoisyWeightTrainer(nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)))
for epoch in range(4):
    for i in range(0, 256, 32):
        loss = trainer.train_step(X[i:i + 32], Y[i:i + 32])
    print(f"epoch {epoch} mse {loss:.4f}")
