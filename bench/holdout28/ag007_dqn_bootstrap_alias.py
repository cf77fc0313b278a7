# source: written for holdout28 (pattern: DQN agent evaluates current and next states in one forward pass and takes the bootstrap values with a plain alias inside torch.no_grad(), so the TD target still carries gradient)
# symptom: TD target still tracked by autograd: True
"""One-network DQN on a random MDP with 6 states and 3 actions.

Current and next states are batched into a single forward pass for speed.
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class RandomMDP:
    def __init__(self, n_states=6, n_actions=3):
        self.P = torch.randint(0, n_states, (n_states, n_actions))
        self.R = torch.randn(n_states, n_actions)
        self.n_states = n_states

    def sample(self, n):
        s = torch.randint(0, self.n_states, (n,))
        a = torch.randint(0, self.R.shape[1], (n,))
        return s, a, self.R[s, a], self.P[s, a]


class Agent:
    def __init__(self, n_states=6, n_actions=3, gamma=0.9):
        self.q = nn.Sequential(nn.Linear(n_states, 32), nn.ReLU(), nn.Linear(32, n_actions))
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=5e-3)
        self.gamma, self.n_states = gamma, n_states
        self.target_tracked = False

    def learn(self, s, a, r, s2):
        both = F.one_hot(torch.cat([s, s2]), self.n_states).float()
        q_all = self.q(both)
        q_s, q_s2 = q_all.chunk(2)
        with torch.no_grad():
            bootstrap = q_s2  # expect: AG007
        td_target = r + self.gamma * bootstrap.max(1).values
        self.target_tracked |= td_target.requires_grad
        q_sa = q_s.gather(1, a[:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q_sa, td_target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
random.seed(0)
env, agent = RandomMDP(), Agent()
for step in range(100):
    loss = agent.learn(*env.sample(32))
    if step % 25 == 0:
        print(f"step {step} td loss {loss:.4f}")
print(f"TD target still tracked by autograd: {agent.target_tracked}")
