"""A module class nobody instantiates here; confirming must build one and call the method."""
import torch
import torch.nn as nn


class Scaler(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.scale = nn.Parameter(torch.ones(width))
        self.offset = torch.zeros(width)  # AG009: a plain tensor attribute

    def forward(self, x):
        return self.lin(x) * self.scale + self.offset

    def fit_step(self, x, target, optimizer):
        optimizer.zero_grad()
        loss = (self(x) - target) ** 2
        loss.backward()  # AG005: the loss is not a scalar
        optimizer.step()

    def reset(self):
        self.scale += 1.0  # AG001: in-place on a parameter outside no_grad
