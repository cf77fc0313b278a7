# source: holdout11 short program (no report)
# symptom: modified by an inplace operation
"""A2C-style update with a shared trunk: actor and critic losses are summed and backpropagated once before both optimizers step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=6, n_actions=3, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return self.pi(h), self.v(h).squeeze(-1)


net = ActorCritic()
critic_opt = torch.optim.Adam(list(net.trunk.parameters()) + list(net.v.parameters()), lr=1e-3)
actor_opt = torch.optim.Adam(net.pi.parameters(), lr=1e-3)

for update in range(3):
    obs = torch.randn(32, 6)
    returns = torch.randn(32)
    logits, values = net(obs)
    dist = torch.distributions.Categorical(logits=logits)
    actions = dist.sample()
    advantage = (returns - values).detach()

    critic_loss = F.mse_loss(values, returns)
    actor_loss = -(dist.log_prob(actions) * advantage).mean() - 0.01 * dist.entropy().mean()

    critic_opt.zero_grad()
    actor_opt.zero_grad()
    (critic_loss + actor_loss).backward()
    critic_opt.step()
    actor_opt.step()
    print(f"update {update} critic {critic_loss.item():.4f} actor {actor_loss.item():.4f}")
