# source: written for bench/holdout5 (short training program, PPO-style clipped update of a Gaussian policy)
import torch
from torch import nn
from torch.distributions import Normal

torch.manual_seed(14)


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 32), nn.Tanh())
        self.mu = nn.Linear(32, 2)
        self.log_std = nn.Parameter(torch.zeros(2))

    def forward(self, obs):
        return self.mu(self.body(obs)), self.log_std.expand(obs.shape[0], 2)


policy = GaussianPolicy()
optim = torch.optim.Adam(policy.parameters(), lr=3e-4)
obs = torch.randn(64, 4)
advantages = torch.randn(64)

mean, log_std = policy(obs)
with torch.no_grad():
    old_mean, old_log_std = mean.detach(), log_std.detach()
    actions = Normal(old_mean, old_log_std.exp()).sample()
    old_logp = Normal(old_mean, old_log_std.exp()).log_prob(actions).sum(-1)
print("old policy tracked:", old_mean.requires_grad)

for epoch in range(4):
    mean, log_std = policy(obs)
    logp = Normal(mean, log_std.exp()).log_prob(actions).sum(-1)
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 0.8, 1.2)
    kl_penalty = ((mean - old_mean) ** 2).sum(-1).mean()
    loss = -torch.min(ratio * advantages, clipped * advantages).mean() + 0.1 * kl_penalty
    optim.zero_grad()
    loss.backward()
    optim.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
