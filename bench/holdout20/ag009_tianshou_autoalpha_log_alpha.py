# source: https://github.com/thu-ml/tianshou/commit/8e593e53b60f108e451ac3bf36c4fe8084ece88d
# symptom: alpha changed during training: False
"""tianshou SAC: the automatically tuned entropy coefficient `AutoAlpha` (an `nn.Module`).

`AutoAlpha.__init__` stores `self._log_alpha = torch.tensor(log_alpha, requires_grad=True)`, a plain tensor
attribute, and builds its optimizer from `ParameterList([self._log_alpha])`. The ParameterList wraps the tensor
in a new `Parameter`, so the optimizer steps a parameter that never receives a gradient (the loss is built
from the plain tensor), and `_log_alpha` is neither a parameter nor in the policy's `state_dict()`: alpha never
moves from its initial value and is not checkpointed.
"""
import torch
import torch.nn as nn
from torch.distributions import Independent, Normal
from torch.nn import ParameterList

torch.manual_seed(0)


class OptimizerFactory:
    def __init__(self, lr=3e-3):
        self.lr = lr

    def create_instances(self, module):
        return torch.optim.Adam(module.parameters(), lr=self.lr), None


class Alpha:
    @property
    def value(self):
        raise NotImplementedError

    def update(self, entropy):
        raise NotImplementedError


class AutoAlpha(torch.nn.Module, Alpha):
    """Represents an entropy regularization coefficient alpha that is automatically tuned."""

    def __init__(self, target_entropy: float, log_alpha: float, optim: OptimizerFactory):
        super().__init__()
        self._target_entropy = target_entropy
        self._log_alpha = torch.tensor(log_alpha, requires_grad=True)  # expect: AG009
        self._optim, lr_scheduler = optim.create_instances(ParameterList([self._log_alpha]))
        if lr_scheduler is not None:
            raise ValueError("Learning rate schedulers are not supported")

    @property
    def value(self) -> float:
        return self._log_alpha.detach().exp().item()

    def update(self, entropy: torch.Tensor) -> float:
        entropy_deficit = self._target_entropy - entropy
        alpha_loss = -(self._log_alpha * entropy_deficit).mean()
        self._optim.zero_grad()
        alpha_loss.backward()
        self._optim.step()
        return alpha_loss.item()


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, 2 * act_dim))

    def forward(self, obs):
        mu, log_std = self.net(obs).chunk(2, dim=-1)
        return Independent(Normal(mu, log_std.clamp(-5, 2).exp()), 1)


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], dim=-1))


class SACPolicy(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2):
        super().__init__()
        self.actor = Actor(obs_dim, act_dim)
        self.critic = Critic(obs_dim, act_dim)
        self.alpha = AutoAlpha(target_entropy=-float(act_dim), log_alpha=0.0, optim=OptimizerFactory())
        self.actor_optim = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.critic_optim = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def learn(self, obs, act, rew):
        q = self.critic(obs, act).squeeze(-1)
        critic_loss = ((q - rew) ** 2).mean()
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()

        dist = self.actor(obs)
        new_act = dist.rsample()
        log_prob = dist.log_prob(new_act)
        actor_loss = (self.alpha.value * log_prob - self.critic(obs, new_act).squeeze(-1)).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()

        entropy = -log_prob.detach()
        alpha_loss = self.alpha.update(entropy)
        return critic_loss.item(), actor_loss.item(), alpha_loss


policy = SACPolicy()
start_alpha = policy.alpha.value
for it in range(200):
    obs = torch.randn(64, 6)
    act = torch.rand(64, 2) * 2 - 1
    rew = -(act ** 2).sum(-1)
    c, a, al = policy.learn(obs, act, rew)
    if it % 50 == 0:
        print(f"it {it} critic {c:.3f} actor {a:.3f} alpha_loss {al:.3f} alpha {policy.alpha.value:.4f}")

print("alpha changed during training:", abs(policy.alpha.value - start_alpha) > 1e-6)
print("log_alpha in state_dict:", any("log_alpha" in k for k in policy.state_dict()))
