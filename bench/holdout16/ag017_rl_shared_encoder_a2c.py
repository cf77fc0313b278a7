# source: written for bench/holdout16 from RULES.md AG017 (advantage actor-critic with a shared observation encoder: the critic update steps before the actor loss is backpropagated through the same features)
# symptom: backward through the graph a second time|modified by an inplace operation
"""A2C-style update on random grid-world batches: a shared encoder feeds a policy head and a value head."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
policy_head = nn.Linear(32, 4)
value_head = nn.Linear(32, 1)
critic_opt = torch.optim.Adam(list(encoder.parameters()) + list(value_head.parameters()), lr=1e-3)
actor_opt = torch.optim.Adam(policy_head.parameters(), lr=1e-3)


def rollout_batch(n=32):
    obs = torch.randn(n, 10)
    actions = torch.randint(0, 4, (n,))
    returns = obs[:, 0] + (actions == 2).float()
    return obs, actions, returns


for update in range(3):
    obs, actions, returns = rollout_batch()
    features = encoder(obs)
    values = value_head(features).squeeze(-1)
    critic_loss = F.mse_loss(values, returns)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()

    advantage = (returns - values).detach()
    log_probs = Categorical(logits=policy_head(features)).log_prob(actions)
    actor_loss = -(log_probs * advantage).mean()
    actor_opt.zero_grad()
    actor_loss.backward()  # expect: AG017
    actor_opt.step()
    print(f"update {update} critic {critic_loss.item():.4f} actor {actor_loss.item():.4f}")
