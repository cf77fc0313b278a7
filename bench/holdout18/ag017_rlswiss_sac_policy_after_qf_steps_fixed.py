# source: https://github.com/KamyarGh/rl_swiss/issues/3
# symptom: modified by an inplace operation
"""rl_swiss `SoftActorCritic.train_step` (SAC with two Q functions and a V function): `q_new_actions` is computed
through `qf1`/`qf2` on the reparameterised policy actions and enters both the V target and the policy loss. The
update block then steps `qf1_optimizer`, `qf2_optimizer` and `vf_optimizer` before `policy_loss.backward()`, which
backpropagates through the Q networks whose weights were just updated in place (the demo fails on torch >= 1.5).

Fixed as the thread's answer suggests: the policy is updated before the Q (and V) networks. The answer also adds
`retain_graph=True`; it is left out here because no later backward goes through the policy graph."""
import math

import torch
import torch.nn as nn
import torch.optim as optim


class FlattenMlp(nn.Module):
    def __init__(self, in_dim, out_dim=1, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, out_dim))

    def forward(self, *inputs):
        return self.net(torch.cat(inputs, dim=1))

    def copy(self):
        clone = FlattenMlp(self.net[0].in_features, self.net[-1].out_features, self.net[0].out_features)
        clone.load_state_dict(self.state_dict())
        return clone


class ReparamTanhMultivariateGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.mean = nn.Linear(hidden, action_dim)
        self.log_std = nn.Linear(hidden, action_dim)

    def forward(self, obs, return_log_prob=False):
        h = self.body(obs)
        mean = self.mean(h)
        log_std = self.log_std(h).clamp(-20, 2)
        std = log_std.exp()
        pre_tanh = mean + std * torch.randn_like(mean)
        action = torch.tanh(pre_tanh)
        log_prob = None
        if return_log_prob:
            log_prob = (-0.5 * ((pre_tanh - mean) / std) ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(1, True)
            log_prob = log_prob - torch.log(1 - action ** 2 + 1e-6).sum(1, keepdim=True)
        return action, mean, log_std, log_prob


def soft_update_from_to(source, target, tau):
    with torch.no_grad():
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.mul_(1.0 - tau).add_(param, alpha=tau)


class SoftActorCritic:
    def __init__(self, policy, qf1, qf2, vf, reward_scale=1.0, discount=0.99, policy_lr=1e-3, qf_lr=1e-3,
                 vf_lr=1e-3, soft_target_tau=1e-2, policy_mean_reg_weight=1e-3, policy_std_reg_weight=1e-3):
        self.policy = policy
        self.qf1 = qf1
        self.qf2 = qf2
        self.vf = vf
        self.reward_scale = reward_scale
        self.discount = discount
        self.soft_target_tau = soft_target_tau
        self.policy_mean_reg_weight = policy_mean_reg_weight
        self.policy_std_reg_weight = policy_std_reg_weight
        self.target_vf = vf.copy()
        self.policy_optimizer = optim.Adam(self.policy.parameters(), lr=policy_lr)
        self.qf1_optimizer = optim.Adam(self.qf1.parameters(), lr=qf_lr)
        self.qf2_optimizer = optim.Adam(self.qf2.parameters(), lr=qf_lr)
        self.vf_optimizer = optim.Adam(self.vf.parameters(), lr=vf_lr)

    def train_step(self, batch):
        rewards = self.reward_scale * batch["rewards"]
        terminals = batch["terminals"]
        obs = batch["observations"]
        actions = batch["actions"]
        next_obs = batch["next_observations"]

        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        v_pred = self.vf(obs)
        new_actions, policy_mean, policy_log_std, log_pi = self.policy(obs, return_log_prob=True)

        # QF Loss
        target_v_values = self.target_vf(next_obs)
        q_target = rewards + (1.0 - terminals) * self.discount * target_v_values
        qf1_loss = 0.5 * torch.mean((q1_pred - q_target.detach()) ** 2)
        qf2_loss = 0.5 * torch.mean((q2_pred - q_target.detach()) ** 2)

        # VF Loss
        q1_new_acts = self.qf1(obs, new_actions)
        q2_new_acts = self.qf2(obs, new_actions)
        q_new_actions = torch.min(q1_new_acts, q2_new_acts)
        v_target = q_new_actions - log_pi
        vf_loss = 0.5 * torch.mean((v_pred - v_target.detach()) ** 2)

        # Policy Loss
        policy_loss = torch.mean(log_pi - q_new_actions)
        mean_reg_loss = self.policy_mean_reg_weight * (policy_mean ** 2).mean()
        std_reg_loss = self.policy_std_reg_weight * (policy_log_std ** 2).mean()
        policy_loss = policy_loss + mean_reg_loss + std_reg_loss

        # Update networks
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        self.vf_optimizer.zero_grad()
        vf_loss.backward()
        self.vf_optimizer.step()

        soft_update_from_to(self.vf, self.target_vf, self.soft_target_tau)
        return qf1_loss.item(), vf_loss.item(), policy_loss.item()


torch.manual_seed(0)
obs_dim, act_dim, n = 6, 2, 32
trainer = SoftActorCritic(ReparamTanhMultivariateGaussianPolicy(obs_dim, act_dim), FlattenMlp(obs_dim + act_dim),
                          FlattenMlp(obs_dim + act_dim), FlattenMlp(obs_dim))
for it in range(3):
    batch = {"rewards": torch.randn(n, 1), "terminals": torch.zeros(n, 1), "observations": torch.randn(n, obs_dim),
             "actions": torch.rand(n, act_dim) * 2 - 1, "next_observations": torch.randn(n, obs_dim)}
    print("iter", it, "losses", ["{:.4f}".format(v) for v in trainer.train_step(batch)])
