# source: written for holdout25 (pattern: DQN agent's learn() method computes the TD loss, calls backward and optimizer.step() but never clears gradients)
# symptom: grads accumulate across steps: True
"""DQN with a replay buffer and a target network on a random-walk chain environment."""
import random
from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F


class Chain:
    def __init__(self, n=6):
        self.n = n

    def reset(self):
        self.s = 0
        return self.obs()

    def obs(self):
        return F.one_hot(torch.tensor(self.s), self.n).float()

    def step(self, a):
        self.s = min(self.n - 1, self.s + 1) if a == 1 else max(0, self.s - 1)
        done = self.s == self.n - 1
        return self.obs(), float(done), done


class Agent:
    def __init__(self, n_obs, n_act, gamma=0.9):
        self.q = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU(), nn.Linear(32, n_act))
        self.target = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU(), nn.Linear(32, n_act))
        self.target.load_state_dict(self.q.state_dict())
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=1e-3)
        self.buffer = deque(maxlen=1000)
        self.gamma = gamma
        self.updates = 0

    def act(self, obs, eps):
        if random.random() < eps:
            return random.randrange(2)
        with torch.no_grad():
            return int(self.q(obs).argmax())

    def learn(self, batch_size=32):
        s, a, r, s2, d = zip(*random.sample(self.buffer, batch_size))
        s, s2 = torch.stack(s), torch.stack(s2)
        a, r, d = torch.tensor(a), torch.tensor(r), torch.tensor(d)
        q = self.q(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = r + self.gamma * (1 - d) * self.target(s2).max(1).values
        loss = F.smooth_l1_loss(q, target)
        if self.updates == 1:
            print("grads accumulate across steps:", self.q[0].weight.grad is not None)
        loss.backward()
        self.optimizer.step()  # expect: AG016
        self.updates += 1
        if self.updates % 50 == 0:
            self.target.load_state_dict(self.q.state_dict())


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    env, agent = Chain(), Agent(6, 2)
    for episode in range(20):
        obs, done, t = env.reset(), False, 0
        while not done and t < 30:
            a = agent.act(obs, eps=max(0.1, 1 - episode / 10))
            obs2, r, done = env.step(a)
            agent.buffer.append((obs, a, r, obs2, float(done)))
            obs, t = obs2, t + 1
            if len(agent.buffer) >= 32:
                agent.learn()
    print("updates", agent.updates)
