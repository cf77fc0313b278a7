# source: holdout13 short program (no report)
# symptom: object is not subscriptable
"""Advantage actor-critic on a toy task (reward when the action matches the sign of the first feature); the
discounted returns come from a helper called once per episode.

Clean twin: the returns buffer is `torch.zeros(len(rewards))`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def discounted_returns(rewards, gamma=0.9):
    returns = torch.zeros(len(rewards))
    running = 0.0
    for i in reversed(range(len(rewards))):
        running = rewards[i] + gamma * running
        returns[i] = running
    return returns


def run_episode(policy, value, steps=16):
    log_probs, values, rewards = [], [], []
    for _ in range(steps):
        s = torch.randn(4)
        dist = torch.distributions.Categorical(logits=policy(s))
        a = dist.sample()
        log_probs.append(dist.log_prob(a))
        values.append(value(s).squeeze())
        rewards.append(1.0 if a.item() == int(s[0] > 0) else 0.0)
    return torch.stack(log_probs), torch.stack(values), rewards


torch.manual_seed(0)
policy, value = nn.Linear(4, 2), nn.Linear(4, 1)
opt = torch.optim.Adam([*policy.parameters(), *value.parameters()], lr=1e-2)
for episode in range(30):
    log_probs, values, rewards = run_episode(policy, value)
    returns = discounted_returns(rewards)
    advantage = returns - values.detach()
    loss = -(log_probs * advantage).mean() + F.mse_loss(values, returns)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"last episode reward {sum(rewards):.0f}")
