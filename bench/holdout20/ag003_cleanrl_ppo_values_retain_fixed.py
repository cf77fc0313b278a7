# source: https://github.com/vwxyzjn/cleanrl/commit/5a3a092564a9fcf2cb748ca2ad23007989567f2e
# symptom: modified by an inplace operation
"""ppo_continuous_action: PPO with separate policy and value networks, one optimizer for both.

Fixed as in the commit: the rollout runs under `torch.no_grad()`, each update epoch recomputes
`newvalues = vf.forward(obs[:step+1]).flatten()` for the value loss, and `total_loss.backward()` no longer retains
the graph.
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions.normal import Normal

torch.manual_seed(1)
random.seed(1)

input_shape, output_shape = 3, 1
episode_length = 32
total_timesteps = 96
update_epochs = 4
gamma, clip_coef, vf_coef, ent_coef, max_grad_norm = 0.99, 0.2, 0.5, 0.01, 0.5
device = torch.device("cpu")


class ToyEnv:
    """Stand-in for a gym Box environment (random dynamics)."""
    def reset(self):
        self.t = 0
        return [random.uniform(-1, 1) for _ in range(input_shape)]

    def step(self, action):
        self.t += 1
        obs = [random.uniform(-1, 1) for _ in range(input_shape)]
        return obs, -abs(float(action[0])), self.t >= 20, {}


def preprocess_obs_fn(x):
    return torch.as_tensor(x, dtype=torch.float32, device=device)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(input_shape, 120)
        self.fc2 = nn.Linear(120, 84)
        self.mean = nn.Linear(84, output_shape)
        self.logstd = nn.Parameter(torch.zeros(1, output_shape))

    def forward(self, x):
        x = preprocess_obs_fn(x)
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        action_mean = self.mean(x)
        action_logstd = self.logstd.expand_as(action_mean)
        return action_mean, action_logstd

    def get_action(self, x):
        mean, logstd = self.forward(x)
        probs = Normal(mean, torch.exp(logstd))
        action = probs.sample()
        return action, probs.log_prob(action).sum(1)

    def get_logproba(self, x, actions):
        action_mean, action_logstd = self.forward(x)
        dist = Normal(action_mean, torch.exp(action_logstd))
        return dist.log_prob(actions).sum(1)


class Value(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(input_shape, 64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, x):
        x = preprocess_obs_fn(x)
        x = torch.tanh(self.fc1(x))
        return self.fc2(x)


env = ToyEnv()
pg = Policy().to(device)
vf = Value().to(device)
optimizer = optim.Adam(list(pg.parameters()) + list(vf.parameters()), lr=3e-4)

global_step = 0
while global_step < total_timesteps:
    next_obs = env.reset()
    actions = [[0.0] * output_shape for _ in range(episode_length)]
    rewards = [0.0] * episode_length
    dones = [0.0] * episode_length
    obs = [[0.0] * input_shape for _ in range(episode_length)]

    values = torch.zeros((episode_length), device=device)
    logprobs = [0.0] * episode_length

    for step in range(episode_length):
        global_step += 1
        obs[step] = list(next_obs)
        with torch.no_grad():
            values[step] = vf.forward(obs[step:step + 1])
            action, logproba = pg.get_action(obs[step:step + 1])
        actions[step] = action.tolist()[0]
        logprobs[step] = logproba.item()
        next_obs, rewards[step], d, _ = env.step(actions[step])
        dones[step] = float(d)
        if d:
            break

    returns = [0.0] * episode_length
    returns[step] = rewards[step]
    for t in reversed(range(step)):
        returns[t] = rewards[t] + gamma * returns[t + 1] * (1 - dones[t])
    advantages = [r - v for r, v in zip(returns, values.detach().tolist())]

    for _ in range(update_epochs):
        newlogproba = pg.get_logproba(obs[:step + 1], torch.Tensor(actions[:step + 1]))
        newvalues = vf.forward(obs[:step + 1]).flatten()
        ratio = torch.exp(newlogproba - torch.Tensor(logprobs[:step + 1]))
        surrogate1 = ratio * torch.Tensor(advantages[:step + 1])
        surrogate2 = ratio.clamp(1 - clip_coef, 1 + clip_coef) * torch.Tensor(advantages[:step + 1])
        policy_loss = -torch.mean(torch.min(surrogate1, surrogate2))
        vf_loss = torch.mean((newvalues - torch.Tensor(returns[:step + 1])).pow(2))
        entropy_loss = torch.mean(torch.exp(newlogproba) * newlogproba)
        total_loss = policy_loss + vf_coef * vf_loss + ent_coef * entropy_loss
        optimizer.zero_grad()
        total_loss.backward()
        nn.utils.clip_grad_norm_(list(pg.parameters()) + list(vf.parameters()), max_grad_norm)
        optimizer.step()

    print(f"global_step={global_step}, episode_reward={sum(rewards):.3f}, value_loss={vf_loss.item():.4f}")
