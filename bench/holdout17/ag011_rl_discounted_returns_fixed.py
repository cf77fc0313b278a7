# source: written for bench/holdout17 from RULES.md AG011 (RL helper computes discount factors as gamma ** torch.range over the episode)
# symptom: torch.range is deprecated
"""Monte-Carlo value regression on random episodes; discounted returns from a vectorised helper."""
import torch
import torch.nn as nn


def discounted_returns(rewards, gamma):
    T = rewards.shape[0]
    discounts = gamma ** torch.arange(0, T, dtype=torch.float32)
    returns = torch.empty(T)
    for t in range(T):
        returns[t] = (rewards[t:] * discounts[: T - t]).sum()
    return returns


torch.manual_seed(0)
value_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
optim = torch.optim.Adam(value_net.parameters(), lr=1e-3)
for episode in range(5):
    states = torch.randn(25, 4)
    rewards = torch.rand(25)
    target = discounted_returns(rewards, gamma=0.95)
    assert target.shape == (25,)
    loss = (value_net(states).squeeze(-1) - target).pow(2).mean()
    optim.zero_grad()
    loss.backward()
    optim.step()
    print("episode", episode, "value loss", round(loss.item(), 3))
