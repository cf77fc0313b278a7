# source: written for holdout25 (pattern: advantage actor-critic takes the critic values as a baseline with a plain alias inside torch.no_grad(), so the actor loss still backpropagates into the critic)
# symptom: baseline still tracked by autograd: True
"""One-step advantage actor-critic on a contextual bandit."""
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)

N_ARMS, CTX = 5, 4
arm_means = torch.randn(CTX, N_ARMS)


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(CTX, 64), nn.ReLU())
        self.pi = nn.Linear(64, N_ARMS)
        self.v = nn.Linear(64, 1)

    def forward(self, ctx):
        h = self.body(ctx)
        return self.pi(h), self.v(h).squeeze(-1)


def pull(ctx, arms):
    mean = (ctx @ arm_means).gather(1, arms.unsqueeze(1)).squeeze(1)
    return mean + 0.1 * torch.randn_like(mean)


net = ActorCritic()
optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
checked = False

for it in range(200):
    ctx = torch.randn(64, CTX)
    logits, values = net(ctx)
    dist = Categorical(logits=logits)
    arms = dist.sample()
    rewards = pull(ctx, arms)

    with torch.no_grad():
        baseline = values  # expect: AG007
    advantage = rewards - baseline
    actor_loss = -(dist.log_prob(arms) * advantage).mean()
    critic_loss = 0.5 * (rewards - values).pow(2).mean()
    entropy = dist.entropy().mean()

    optimizer.zero_grad()
    (actor_loss + critic_loss - 0.01 * entropy).backward()
    optimizer.step()

    if not checked:
        print("baseline still tracked by autograd:", baseline.requires_grad)
        checked = True
    if it % 50 == 0:
        print(f"iter {it}: mean reward {rewards.mean().item():.3f}")
