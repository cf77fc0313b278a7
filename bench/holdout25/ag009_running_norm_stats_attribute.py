# source: written for holdout25 (pattern: observation normaliser for RL keeps running mean/var as plain tensor attributes, so they are missing from the checkpoint)
# symptom: running stats restored from checkpoint: False
"""Value regression with a running observation normaliser; checkpoint saved and reloaded for evaluation."""
import io

import torch
import torch.nn as nn


class RunningNorm(nn.Module):
    def __init__(self, dim, momentum=0.01, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.running_mean = torch.zeros(dim)  # expect: AG009
        self.running_var = torch.ones(dim)  # expect: AG009

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.running_mean.lerp_(x.mean(0), self.momentum)
                self.running_var.lerp_(x.var(0), self.momentum)
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt()


class ValueNet(nn.Module):
    def __init__(self, obs_dim=6):
        super().__init__()
        self.norm = RunningNorm(obs_dim)
        self.mlp = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 1))

    def forward(self, obs):
        return self.mlp(self.norm(obs)).squeeze(-1)


def rollout_batch(n=128):
    obs = torch.randn(n, 6) * 5.0 + 3.0
    returns = obs[:, 0] * 0.5 - obs[:, 3] * 0.2
    return obs, returns


torch.manual_seed(0)
net = ValueNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for update in range(200):
    obs, ret = rollout_batch()
    loss = (net(obs) - ret).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("value loss", round(loss.item(), 3))

buf = io.BytesIO()
torch.save(net.state_dict(), buf)
buf.seek(0)
restored = ValueNet()
restored.load_state_dict(torch.load(buf))
restored.eval()
same = torch.allclose(restored.norm.running_mean, net.norm.running_mean)
print("running stats restored from checkpoint:", same)
