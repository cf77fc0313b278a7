# source: written for bench/holdout16 from RULES.md AG013 (continuous-control actor class builds its action bounds with torch.ones[...] in __init__)
# symptom: not subscriptable
"""Deterministic actor for a continuous-control task, squashing to the action bounds; trained by behaviour cloning."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, max_action=2.0):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, act_dim))
        self.register_buffer("scale", torch.ones[act_dim] * max_action)  # expect: AG013

    def forward(self, obs):
        return torch.tanh(self.body(obs)) * self.scale


actor = Actor(obs_dim=8, act_dim=2)
opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
expert_obs = torch.randn(256, 8)
expert_act = torch.tanh(expert_obs[:, :2]) * 2.0
for epoch in range(3):
    opt.zero_grad()
    loss = ((actor(expert_obs) - expert_act) ** 2).mean()
    loss.backward()
    opt.step()
    print(f"epoch {epoch} bc loss {loss.item():.4f}")
