# source: written for holdout28 (pattern: advantage actor-critic on an n-step rollout sums policy and value terms per time step into a vector loss and calls backward on it)
# symptom: grad can be implicitly created only for scalar outputs
"""A2C with n-step returns on a toy 1-D corridor environment.

State: position in [0, 9]; actions: left/right; reward 1 on reaching 9.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Corridor:
    def __init__(self, size=10):
        self.size = size
        self.pos = 0

    def reset(self):
        self.pos = 0
        return self.obs()

    def obs(self):
        return torch.nn.functional.one_hot(torch.tensor(self.pos), self.size).float()

    def step(self, action):
        self.pos = max(0, min(self.size - 1, self.pos + (1 if action == 1 else -1)))
        done = self.pos == self.size - 1
        return self.obs(), float(done), done


class ActorCritic(nn.Module):
    def __init__(self, n_obs=10, n_act=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU())
        self.pi = nn.Linear(32, n_act)
        self.v = nn.Linear(32, 1)

    def forward(self, obs):
        h = self.body(obs)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


torch.manual_seed(0)
env, net = Corridor(), ActorCritic()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
gamma, n_steps = 0.95, 8
obs = env.reset()
for update in range(30):
    log_probs, values, rewards, dones = [], [], [], []
    for _ in range(n_steps):
        dist, value = net(obs)
        action = dist.sample()
        obs, reward, done = env.step(action.item())
        log_probs.append(dist.log_prob(action)); values.append(value)
        rewards.append(reward); dones.append(done)
        if done:
            obs = env.reset()
    with torch.no_grad():
        ret = net(obs)[1]
    returns = []
    for r, d in zip(reversed(rewards), reversed(dones)):
        ret = r + gamma * ret * (1.0 - float(d))
        returns.insert(0, ret)
    returns, values, log_probs = torch.stack(returns), torch.stack(values), torch.stack(log_probs)
    advantage = returns - values
    loss = -log_probs * advantage.detach() + 0.5 * advantage.pow(2)
    opt.zero_grad()
    loss.backward()  # expect: AG005
    opt.step()
    if update % 10 == 0:
        print(f"update {update} mean return {returns.mean():.3f}")
