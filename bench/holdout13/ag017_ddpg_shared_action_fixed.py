# source: holdout13 short program (no report)
# symptom: backward through the graph a second time|modified by an inplace operation
"""DDPG-style actor-critic on a one-step continuous bandit, notebook cells: the critic regresses the reward of the
actor's action, then the actor climbs the critic.

Clean twin: the critic's loss sees `action.detach()`.
"""
# %% setup
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 1), nn.Tanh())
critic = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
states = torch.randn(256, 3)


def reward(s, a):
    return -(a - torch.tanh(s.sum(1, keepdim=True))) ** 2


# %% update loop
for it in range(20):
    s = states[torch.randint(0, 256, (32,))]
    action = actor(s)
    with torch.no_grad():
        r = reward(s, action)
    critic_loss = F.mse_loss(critic(torch.cat([s, action.detach()], 1)), r)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()

    actor_loss = -critic(torch.cat([s, action], 1)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()

# %% report
print(f"critic {critic_loss.item():.4f} actor {actor_loss.item():.4f}")
