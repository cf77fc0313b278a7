# source: written for holdout28 (pattern: Reptile meta-learning helper moves the meta-model's parameters toward the adapted copy with += outside no_grad)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Reptile on a family of 1-D sine regression tasks.

Each outer iteration samples a task, adapts a copy of the meta-model with a few
SGD steps, then moves the meta-parameters a fraction of the way toward the copy.
"""
import copy
import math
import random

import torch
import torch.nn as nn


def sample_task():
    amp = random.uniform(0.5, 2.0)
    phase = random.uniform(0.0, math.pi)

    def batch(n=20):
        x = torch.rand(n, 1) * 10 - 5
        return x, amp * torch.sin(x + phase)

    return batch


def inner_adapt(model, task, steps=5, lr=0.02):
    fast = copy.deepcopy(model)
    opt = torch.optim.SGD(fast.parameters(), lr=lr)
    for _ in range(steps):
        x, y = task()
        loss = ((fast(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return fast


def reptile_step(meta_model, fast_model, epsilon):
    for p_meta, p_fast in zip(meta_model.parameters(), fast_model.parameters()):
        p_meta += epsilon * (p_fast.detach() - p_meta.detach())  # expect: AG001


def evaluate(model, task):
    fast = inner_adapt(model, task, steps=5)
    x, y = task(100)
    with torch.no_grad():
        return ((fast(x) - y) ** 2).mean().item()


random.seed(0)
torch.manual_seed(0)
meta = nn.Sequential(nn.Linear(1, 40), nn.Tanh(), nn.Linear(40, 40), nn.Tanh(), nn.Linear(40, 1))
outer_steps = 50
for it in range(outer_steps):
    task = sample_task()
    adapted = inner_adapt(meta, task)
    eps = 0.1 * (1 - it / outer_steps)
    reptile_step(meta, adapted, eps)
    if it % 10 == 0:
        print(f"iter {it} eval mse {evaluate(meta, sample_task()):.3f}")
print("done")
