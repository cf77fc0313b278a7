# source: https://github.com/rail-berkeley/rlkit/pull/109
# symptom: modified by an inplace operation
"""rlkit's `SACTrainer.train_from_torch` (rlkit/torch/sac/sac.py) before the pull request: the policy loss is built
through both Q-functions, `min(qf1(obs, new_obs_actions), qf2(obs, new_obs_actions))`, then the Q-function losses
are backpropagated and `qf1_optimizer.step()` / `qf2_optimizer.step()` update the critics in place, and only then is
`policy_loss.backward()` called: its graph still needs the critic weights the steps have just changed ("The latter
will create an error in pytorch 1.5.0").
"""

import torch
import torch.optim as optim
from torch import nn as nn
from torch.distributions import Normal

torch.manual_seed(0)

class FlattenMlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_sizes=(32, 32)):
        super().__init__()
        layers, in_size = [], input_size
        for h in hidden_sizes:
            layers += [nn.Linear(in_size, h), nn.ReLU()]
            in_size = h
        layers.append(nn.Linear(in_size, output_size))
        self.net = nn.Sequential(*layers)

    def forward(self, *inputs):
        return self.net(torch.cat(inputs, dim=1))

class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden_sizes=(32, 32)):
        super().__init__()
        self.body = FlattenMlp(obs_dim, 2 * action_dim, hidden_sizes)

    def forward(self, obs, reparameterize=True, return_log_prob=False):
        mean, log_std = self.body(obs).chunk(2, dim=1)
        log_std = torch.clamp(log_std, -20, 2)
        std = log_std.exp()
        normal = Normal(mean, std)
        pre_tanh_value = normal.rsample() if reparameterize else normal.sample()
        action = torch.tanh(pre_tanh_value)
        log_prob = None
        if return_log_prob:
            log_prob = normal.log_prob(pre_tanh_value) - torch.log(1 - action.pow(2) + 1e-6)
            log_prob = log_prob.sum(dim=1, keepdim=True)
        return action, mean, log_std, log_prob, std, pre_tanh_value

def soft_update_from_to(source, target, tau):
    with torch.no_grad():
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.mul_(1.0 - tau).add_(param, alpha=tau)

class SACTrainer:
    def __init__(self, action_dim, policy, qf1, qf2, target_qf1, target_qf2, discount=0.99, reward_scale=1.0,
                 policy_lr=1e-3, qf_lr=1e-3, optimizer_class=optim.Adam, soft_target_tau=1e-2,
                 target_update_period=1, use_automatic_entropy_tuning=True):
        self.policy = policy
        self.qf1 = qf1
        self.qf2 = qf2
        self.target_qf1 = target_qf1
        self.target_qf2 = target_qf2
        self.soft_target_tau = soft_target_tau
        self.target_update_period = target_update_period
        self.use_automatic_entropy_tuning = use_automatic_entropy_tuning
        if self.use_automatic_entropy_tuning:
            self.target_entropy = -float(action_dim)  # heuristic value from Tuomas
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optimizer = optimizer_class([self.log_alpha], lr=policy_lr)
        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = optimizer_class(self.policy.parameters(), lr=policy_lr)
        self.qf1_optimizer = optimizer_class(self.qf1.parameters(), lr=qf_lr)
        self.qf2_optimizer = optimizer_class(self.qf2.parameters(), lr=qf_lr)
        self.discount = discount
        self.reward_scale = reward_scale
        self._n_train_steps_total = 0

    def train_from_torch(self, batch):
        rewards = batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        # Policy and Alpha Loss
        new_obs_actions, policy_mean, policy_log_std, log_pi, *_ = self.policy(
            obs, reparameterize=True, return_log_prob=True)
        if self.use_automatic_entropy_tuning:
            alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
            self.alpha_optimizer.zero_grad()
            alpha_loss.backward()
            self.alpha_optimizer.step()
            alpha = self.log_alpha.exp()
        else:
            alpha_loss = 0
            alpha = 1

        q_new_actions = torch.min(self.qf1(obs, new_obs_actions), self.qf2(obs, new_obs_actions))
        policy_loss = (alpha * log_pi - q_new_actions).mean()

        # QF Loss
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, _, _, new_log_pi, *_ = self.policy(next_obs, reparameterize=True, return_log_prob=True)
        target_q_values = torch.min(
            self.target_qf1(next_obs, new_next_actions),
            self.target_qf2(next_obs, new_next_actions),
        ) - alpha * new_log_pi
        q_target = self.reward_scale * rewards + (1. - terminals) * self.discount * target_q_values
        qf1_loss = self.qf_criterion(q1_pred, q_target.detach())
        qf2_loss = self.qf_criterion(q2_pred, q_target.detach())

        # Update networks
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()  # expect: AG017
        self.policy_optimizer.step()

        # Soft Updates
        if self._n_train_steps_total % self.target_update_period == 0:
            soft_update_from_to(self.qf1, self.target_qf1, self.soft_target_tau)
            soft_update_from_to(self.qf2, self.target_qf2, self.soft_target_tau)
        self._n_train_steps_total += 1
        return qf1_loss.item(), policy_loss.item()

def random_batch(batch_size, obs_dim, action_dim):
    return {
        'observations': torch.randn(batch_size, obs_dim),
        'actions': torch.rand(batch_size, action_dim) * 2 - 1,
        'rewards': torch.randn(batch_size, 1),
        'terminals': (torch.rand(batch_size, 1) < 0.05).float(),
        'next_observations': torch.randn(batch_size, obs_dim),
    }

if __name__ == "__main__":
    obs_dim, action_dim = 5, 2
    qf1, qf2 = FlattenMlp(obs_dim + action_dim, 1), FlattenMlp(obs_dim + action_dim, 1)
    target_qf1, target_qf2 = FlattenMlp(obs_dim + action_dim, 1), FlattenMlp(obs_dim + action_dim, 1)
    target_qf1.load_state_dict(qf1.state_dict())
    target_qf2.load_state_dict(qf2.state_dict())
    trainer = SACTrainer(action_dim, TanhGaussianPolicy(obs_dim, action_dim), qf1, qf2, target_qf1, target_qf2)
    for step in range(3):
        qf1_loss, policy_loss = trainer.train_from_torch(random_batch(32, obs_dim, action_dim))
        print("step %d qf1 loss %.4f policy loss %.4f" % (step, qf1_loss, policy_loss))
