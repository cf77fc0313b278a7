# source: written for bench/holdout17 from RULES.md AG007 (A2C agent class: the critic's values aliased as the baseline under no_grad, then used in the actor's advantage)
# symptom: baseline still tracked by autograd: True
"""Advantage actor-critic on a random contextual bandit, with an agent class."""
import torch
import torch.nn as nn


class A2CAgent:
    def __init__(self, obs_dim=8, n_actions=4, lr=3e-3):
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.optimizer = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()), lr=lr)
        self.tracked = []

    def update(self, obs, actions, rewards):
        values = self.critic(obs).squeeze(-1)
        with torch.no_grad():
            baseline = values  # expect: AG007
        advantage = rewards - baseline
        self.tracked.append(advantage.requires_grad)
        logp = torch.log_softmax(self.actor(obs), -1).gather(1, actions[:, None]).squeeze(1)
        actor_loss = -(logp * advantage).mean()
        critic_loss = (rewards - values).pow(2).mean()
        self.optimizer.zero_grad()
        (actor_loss + 0.5 * critic_loss).backward()
        self.optimizer.step()
        return actor_loss.item(), critic_loss.item()


torch.manual_seed(0)
agent = A2CAgent()
true_w = torch.randn(8, 4)
for it in range(10):
    obs = torch.randn(32, 8)
    actions = torch.randint(0, 4, (32,))
    rewards = (obs @ true_w).gather(1, actions[:, None]).squeeze(1)
    a_loss, c_loss = agent.update(obs, actions, rewards)
print("baseline still tracked by autograd:", any(agent.tracked))
