# source: written for bench/holdout17 from RULES.md AG005 (REINFORCE: a finish_episode helper stacks log-probs times returns and backpropagates the per-step vector)
# symptom: grad can be implicitly created only for scalar outputs
"""REINFORCE on a toy 1-D corridor environment (no gym)."""
import torch
import torch.nn as nn


class Corridor:
    def __init__(self, length=6):
        self.length = length

    def reset(self):
        self.pos = 0
        return self._obs()

    def _obs(self):
        o = torch.zeros(self.length)
        o[self.pos] = 1.0
        return o

    def step(self, action):
        self.pos = max(0, min(self.length - 1, self.pos + (1 if action == 1 else -1)))
        done = self.pos == self.length - 1
        return self._obs(), (1.0 if done else -0.05), done


policy = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)


def finish_episode(log_probs, rewards, gamma=0.99):
    R, returns = 0.0, []
    for r in reversed(rewards):
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    policy_loss = -torch.stack(log_probs) * returns
    optimizer.zero_grad()
    policy_loss.backward()  # expect: AG005
    optimizer.step()


torch.manual_seed(0)
env = Corridor()
for episode in range(3):
    obs, log_probs, rewards = env.reset(), [], []
    for t in range(30):
        dist = torch.distributions.Categorical(logits=policy(obs))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        obs, reward, done = env.step(action.item())
        rewards.append(reward)
        if done:
            break
    finish_episode(log_probs, rewards)
    print("episode", episode, "return", sum(rewards))
