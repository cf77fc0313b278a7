# source: written for holdout25 (pattern: REINFORCE finish_episode builds the policy loss as a vector of -log_prob * return and calls backward on it)
# symptom: grad can be implicitly created only for scalar outputs
"""REINFORCE on a tiny corridor environment (stand-in for CartPole)."""
import random

import torch
import torch.nn as nn
from torch.distributions import Categorical


class Corridor:
    """Walk right to reach the goal at position 5; 20 steps max."""

    def reset(self):
        self.pos, self.t = 0, 0
        return self._obs()

    def _obs(self):
        return torch.tensor([self.pos / 5.0, self.t / 20.0])

    def step(self, action):
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        self.t += 1
        done = self.pos >= 5 or self.t >= 20
        return self._obs(), (1.0 if self.pos >= 5 else -0.05), done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 2))
        self.saved_log_probs, self.rewards = [], []

    def act(self, obs):
        dist = Categorical(logits=self.net(obs))
        action = dist.sample()
        self.saved_log_probs.append(dist.log_prob(action))
        return action.item()


def finish_episode(policy, optimizer, gamma=0.99):
    returns, R = [], 0.0
    for r in reversed(policy.rewards):
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    policy_loss = -torch.stack(policy.saved_log_probs) * returns
    optimizer.zero_grad()
    policy_loss.backward()  # expect: AG005
    optimizer.step()
    policy.saved_log_probs.clear()
    policy.rewards.clear()


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    env, policy = Corridor(), Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for episode in range(30):
        obs, done = env.reset(), False
        while not done:
            obs, reward, done = env.step(policy.act(obs))
            policy.rewards.append(reward)
        finish_episode(policy, optimizer)
        if episode % 10 == 0:
            print("episode", episode, "length", env.t)
