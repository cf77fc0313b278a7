# source: written for holdout25 (pattern: behaviour-cloning batch helper casts discrete expert actions to long and then calls requires_grad_() on them)
# symptom: [Oo]nly Tensors of floating point (and complex )?dtype can require gradients
"""Behaviour cloning of a scripted expert on a toy grid world (discrete actions)."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

N_ACTIONS = 4
OBS_DIM = 6


def expert_policy(obs):
    # move toward the goal along the larger axis
    dx, dy = obs[4] - obs[0], obs[5] - obs[1]
    if abs(dx) > abs(dy):
        return 0 if dx > 0 else 1
    return 2 if dy > 0 else 3


def collect_demos(n=600):
    data = []
    for _ in range(n):
        obs = [random.uniform(-1, 1) for _ in range(OBS_DIM)]
        data.append((obs, expert_policy(obs)))
    return data


def prepare_batch(samples):
    obs = torch.tensor([o for o, _ in samples], dtype=torch.float32)
    actions = torch.tensor([a for _, a in samples], dtype=torch.float32)
    actions = actions.long().requires_grad_()  # expect: AG004
    return obs, actions


policy = nn.Sequential(nn.Linear(OBS_DIM, 64), nn.ReLU(), nn.Linear(64, N_ACTIONS))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)


def train(demos, epochs=5, bs=50):
    for epoch in range(epochs):
        random.shuffle(demos)
        correct = 0
        for i in range(0, len(demos), bs):
            obs, actions = prepare_batch(demos[i:i + bs])
            logits = policy(obs)
            loss = F.cross_entropy(logits, actions)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            correct += (logits.argmax(1) == actions).sum().item()
        print(f"epoch {epoch} loss {loss.item():.3f} acc {correct / len(demos):.2f}")


if __name__ == "__main__":
    random.seed(1)
    torch.manual_seed(1)
    train(collect_demos())
