# source: written for holdout28 (pattern: hand-written autograd.Function for a log-cosh loss returns the elementwise loss and the regression loop calls backward on it directly)
# symptom: grad can be implicitly created only for scalar outputs
"""Robust regression with a custom log-cosh loss written as an autograd.Function.

log(cosh(r)) is computed stably as |r| + softplus(-2|r|) - log 2; its
derivative is tanh(r).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LogCosh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, pred, target):
        r = pred - target
        ctx.save_for_backward(r)
        return r.abs() + F.softplus(-2.0 * r.abs()) - math.log(2.0)

    @staticmethod
    def backward(ctx, grad_out):
        (r,) = ctx.saved_tensors
        g = grad_out * torch.tanh(r)
        return g, -g


def log_cosh(pred, target):
    return LogCosh.apply(pred, target)


torch.manual_seed(0)
x = torch.randn(300, 3)
y = x @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.1 * torch.randn(300, 1)
y[::25] += 8.0  # a few outliers

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    for i in range(0, 300, 30):
        xb, yb = x[i:i + 30], y[i:i + 30]
        loss = log_cosh(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()  # expect: AG005
        optimizer.step()
    print(f"epoch {epoch} weight {model.weight.detach().squeeze().tolist()}")
