# source: https://github.com/thu-ml/tianshou/commit/70290346eaf7aade89a60ff7cfb0f7d11d02d918
# symptom: modified by an inplace operation
"""tianshou `SACPolicy.learn` (early 2020): twin critics and a squashed Gaussian actor.

To save a forward, each critic is run once on `cat([batch.act, a])` and the result split into the critic's Q and
the actor's Q. `critic1_loss.backward(retain_graph=True)` and `critic2_loss.backward(retain_graph=True)` keep that
graph, each followed by its optimizer's `step()`, and the actor loss then backpropagates through the same critic
forwards whose weights the steps have changed in place: it raises (torch >= 1.5).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)


class Batch:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, max_action=1.0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.mu = nn.Linear(64, act_dim)
        self.sigma = nn.Linear(64, act_dim)
        self._max = max_action

    def forward(self, s):
        logits = self.net(s)
        return self.mu(logits), self.sigma(logits).clamp(-20, 2).exp()


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                 nn.Linear(64, 1))

    def forward(self, s, a):
        s = torch.as_tensor(s, dtype=torch.float32)
        return self.net(torch.cat([s, a], dim=1))


class SACPolicy(nn.Module):
    def __init__(self, obs_dim=8, act_dim=2, tau=0.005, gamma=0.99, alpha=0.2):
        super().__init__()
        self.actor = Actor(obs_dim, act_dim)
        self.actor_optim = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic1, self.critic1_old = Critic(obs_dim, act_dim), Critic(obs_dim, act_dim)
        self.critic2, self.critic2_old = Critic(obs_dim, act_dim), Critic(obs_dim, act_dim)
        self.critic1_old.load_state_dict(self.critic1.state_dict())
        self.critic2_old.load_state_dict(self.critic2.state_dict())
        self.critic1_optim = torch.optim.Adam(self.critic1.parameters(), lr=3e-4)
        self.critic2_optim = torch.optim.Adam(self.critic2.parameters(), lr=3e-4)
        self._tau, self._gamma, self._alpha = tau, gamma, alpha
        self.__eps = 1e-6

    def sync_weight(self):
        for o, n in ((self.critic1_old, self.critic1), (self.critic2_old, self.critic2)):
            for p_old, p in zip(o.parameters(), n.parameters()):
                p_old.data.copy_(p_old.data * (1 - self._tau) + p.data * self._tau)

    def forward(self, batch, input='obs'):
        obs = getattr(batch, input)
        mu, sigma = self.actor(obs)
        dist = Normal(mu, sigma)
        x = dist.rsample()
        y = torch.tanh(x)
        act = y
        log_prob = dist.log_prob(x) - torch.log(1 - y.pow(2) + self.__eps)
        return Batch(act=act, log_prob=log_prob.sum(-1, keepdim=True))

    def learn(self, batch):
        with torch.no_grad():
            obs_next_result = self(batch, input='obs_next')
            a_ = obs_next_result.act
            target_q = torch.min(self.critic1_old(batch.obs_next, a_),
                                 self.critic2_old(batch.obs_next, a_)) - self._alpha * obs_next_result.log_prob
            rew = batch.rew[:, None]
            done = batch.done[:, None]
            target_q = (rew + (1. - done) * self._gamma * target_q)
        obs_result = self(batch)
        a = obs_result.act
        current_q1, current_q1a = self.critic1(
            torch.cat([batch.obs, batch.obs]), torch.cat([batch.act, a])
        ).split(batch.obs.shape[0])
        current_q2, current_q2a = self.critic2(
            torch.cat([batch.obs, batch.obs]), torch.cat([batch.act, a])
        ).split(batch.obs.shape[0])
        actor_loss = (self._alpha * obs_result.log_prob - torch.min(current_q1a, current_q2a)).mean()
        # critic 1
        critic1_loss = F.mse_loss(current_q1, target_q)
        self.critic1_optim.zero_grad()
        critic1_loss.backward(retain_graph=True)  # expect: AG003
        self.critic1_optim.step()
        # critic 2
        critic2_loss = F.mse_loss(current_q2, target_q)
        self.critic2_optim.zero_grad()
        critic2_loss.backward(retain_graph=True)  # expect: AG003
        self.critic2_optim.step()
        # actor
        self.actor_optim.zero_grad()
        actor_loss.backward()  # expect: AG003
        self.actor_optim.step()
        self.sync_weight()
        return {'loss/actor': actor_loss.item(), 'loss/critic1': critic1_loss.item(),
                'loss/critic2': critic2_loss.item()}


policy = SACPolicy()
for it in range(5):
    batch = Batch(obs=torch.randn(64, 8), act=torch.rand(64, 2) * 2 - 1, rew=torch.randn(64),
                  done=(torch.rand(64) < 0.1).float(), obs_next=torch.randn(64, 8))
    print(it, policy.learn(batch))
