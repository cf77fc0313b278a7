# source: written for holdout28 (pattern: actor-critic agent with separate optimizers zeroes the critic's gradients before its backward but never the actor's, so actor gradients accumulate across updates)
# symptom: grads accumulate across steps: True
"""Actor-critic with separate actor and critic networks on a contextual bandit
whose 5 contexts each have one rewarding arm out of 4.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Agent:
    def __init__(self, n_ctx=5, n_arms=4):
        self.actor = nn.Sequential(nn.Linear(n_ctx, 32), nn.Tanh(), nn.Linear(32, n_arms))
        self.critic = nn.Sequential(nn.Linear(n_ctx, 32), nn.Tanh(), nn.Linear(32, 1))
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=3e-3)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-2)
        self.accumulated = False

    def act(self, states):
        with torch.no_grad():
            return Categorical(logits=self.actor(states)).sample()

    def update(self, states, actions, rewards):
        values = self.critic(states).squeeze(-1)
        critic_loss = F.mse_loss(values, rewards)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()

        advantage = rewards - values.detach()
        log_probs = Categorical(logits=self.actor(states)).log_prob(actions)
        actor_loss = -(log_probs * advantage).mean()
        self.accumulated |= any(p.grad is not None and bool(p.grad.any()) for p in self.actor.parameters())
        actor_loss.backward()
        self.actor_opt.step()  # expect: AG016
        return actor_loss.item(), critic_loss.item()


torch.manual_seed(0)
best_arm = torch.randint(0, 4, (5,))
agent = Agent()
for it in range(60):
    ctx = torch.randint(0, 5, (32,))
    states = F.one_hot(ctx, 5).float()
    actions = agent.act(states)
    rewards = (actions == best_arm[ctx]).float()
    a_loss, c_loss = agent.update(states, actions, rewards)
    if it % 20 == 0:
        print(f"iter {it} reward {rewards.mean():.2f} actor {a_loss:.3f} critic {c_loss:.3f}")
print(f"grads accumulate across steps: {agent.accumulated}")
