# source: holdout13 short program (no report)
# symptom: meta grad matches this task's: False
"""First-order MAML on sine-wave regression: a functional MLP, the inner step with `torch.autograd.grad`, the outer
update with a meta-optimizer in a `while` loop with a step counter."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def forward(params, x):
    return torch.tanh(x @ params[0] + params[1]) @ params[2] + params[3]


def adapt(params, x, y, inner_lr=0.01):
    grads = torch.autograd.grad(F.mse_loss(forward(params, x), y), params)
    return [p - inner_lr * g for p, g in zip(params, grads)]


def sample_task(n=10):
    amp, phase = torch.rand(1) * 4 + 0.1, torch.rand(1) * 3.14
    x = torch.rand(2 * n, 1) * 10 - 5
    y = amp * torch.sin(x + phase)
    return (x[:n], y[:n]), (x[n:], y[n:])


torch.manual_seed(0)
params = [nn.Parameter(torch.randn(1, 40) * 0.5), nn.Parameter(torch.zeros(40)),
          nn.Parameter(torch.randn(40, 1) * 0.1), nn.Parameter(torch.zeros(1))]
meta_opt = torch.optim.Adam(params, lr=1e-3)
step = 0
while step < 50:
    (xs, ys), (xq, yq) = sample_task()
    reference = torch.autograd.grad(F.mse_loss(forward(adapt(params, xs, ys), xq), yq), params)
    meta_loss = F.mse_loss(forward(adapt(params, xs, ys), xq), yq)
    meta_loss.backward()
    meta_opt.step()  # expect: AG016
    step += 1
print(f"meta loss {meta_loss.item():.4f}")
print(f"meta grad matches this task's: {all(torch.allclose(p.grad, g) for p, g in zip(params, reference))}")
