# source: https://github.com/vwxyzjn/cleanrl/commit/ba93aafbb0c2bbd2b47f5e07b98d91f2cd016db0
# symptom: action_scale left behind by \.double\(\): True
"""cleanrl td3_continuous_action.py after the commit "action_scale and action_bias in TD3 / DDPG and SAC
finally using register_buffer" (with its follow-up 0e20bac, which dropped the stray
`self.action_scale =` in front of register_buffer): the rescaling constants are registered buffers
and the hand-written `to(device)` override is gone."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Box:
    def __init__(self, low, high, shape):
        self.low, self.high, self.shape = low, high, shape

    def sample(self):
        return [random.uniform(l, h) for l, h in zip(self.low, self.high)]


class PendulumLikeEnv:
    """Stand-in for the gym vector env: 3-d observation, 1-d action in [-2, 2]."""

    def __init__(self):
        self.single_observation_space = Box([-1.0] * 3, [1.0] * 3, (3,))
        self.single_action_space = Box([-2.0], [2.0], (1,))
        self.action_space = self.single_action_space
        self.num_envs = 1

    def reset(self):
        return [[random.uniform(-1, 1) for _ in range(3)]]

    def step(self, actions):
        obs = self.reset()
        reward = [-(actions[0][0] - 0.5) ** 2]
        return obs, reward, [False], [{}]


class QNetwork(nn.Module):
    def __init__(self, env):
        super().__init__()
        self.fc1 = nn.Linear(env.single_observation_space.shape[0] + env.single_action_space.shape[0], 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class Actor(nn.Module):
    def __init__(self, env):
        super().__init__()
        self.fc1 = nn.Linear(env.single_observation_space.shape[0], 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc_mu = nn.Linear(64, env.single_action_space.shape[0])
        high = torch.tensor(env.action_space.high)
        low = torch.tensor(env.action_space.low)
        # action rescaling
        self.register_buffer("action_scale", torch.FloatTensor((high - low) / 2.0))
        self.register_buffer("action_bias", torch.FloatTensor((high + low) / 2.0))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = torch.tanh(self.fc_mu(x))
        return x * self.action_scale + self.action_bias


def main():
    random.seed(1)
    torch.manual_seed(1)
    device = torch.device("cpu")
    envs = PendulumLikeEnv()
    actor = Actor(envs).to(device)
    qf1 = QNetwork(envs).to(device)
    qf1_target = QNetwork(envs).to(device)
    target_actor = Actor(envs).to(device)
    target_actor.load_state_dict(actor.state_dict())
    qf1_target.load_state_dict(qf1.state_dict())
    q_optimizer = optim.Adam(qf1.parameters(), lr=3e-4)
    actor_optimizer = optim.Adam(actor.parameters(), lr=3e-4)
    rb = []
    obs = envs.reset()
    for global_step in range(60):
        if global_step < 20:
            actions = [envs.single_action_space.sample()]
        else:
            with torch.no_grad():
                actions = actor(torch.tensor(obs)).tolist()
        next_obs, rewards, dones, infos = envs.step(actions)
        rb.append((obs[0], next_obs[0], actions[0], rewards[0]))
        obs = next_obs
        if global_step > 20:
            batch = random.sample(rb, 16)
            o, no, a, r = (torch.tensor([b[i] for b in batch]) for i in range(4))
            with torch.no_grad():
                next_q = r + 0.99 * qf1_target(no, target_actor(no)).view(-1)
            qf1_loss = F.mse_loss(qf1(o, a).view(-1), next_q)
            q_optimizer.zero_grad()
            qf1_loss.backward()
            q_optimizer.step()
            actor_loss = -qf1(o, actor(o)).mean()
            actor_optimizer.zero_grad()
            actor_loss.backward()
            actor_optimizer.step()
    # evaluate the trained policy in double precision
    actor.double()
    with torch.no_grad():
        act = actor(torch.tensor(envs.reset(), dtype=torch.float64))
    print("eval action", act.dtype, [round(v, 3) for v in act.view(-1).tolist()])
    print(f"action_scale left behind by .double(): {actor.action_scale.dtype != torch.float64}")


if __name__ == "__main__":
    main()
