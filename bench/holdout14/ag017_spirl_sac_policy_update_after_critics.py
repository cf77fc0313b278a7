"""SPiRL's SACAgent: the policy loss goes through both critics, the critics are stepped, then the policy update runs.

`SACAgent.update` computes `policy_loss = -min(Q1, Q2)(s, pi(s)) + alpha * log_pi` early, then updates the critic
networks with `_perform_update(critic_loss, critic_opt, critic)` (zero_grad, backward, step) and only afterwards
calls `_perform_update(policy_loss, self.policy_opt, self.policy)`. The critic steps changed, in place, the weights
the policy loss's graph saved, so the policy backward stops with "... output 0 of TBackward, is at version 2;
expected version 1".
"""
# source: https://github.com/clvrai/spirl/issues/15
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
import math

import torch
import torch.nn as nn


class TensorModule(nn.Module):
    def __init__(self, t):
        super().__init__()
        self.t = nn.Parameter(t)

    def forward(self):
        return self.t


class Policy(nn.Module):
    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, 2 * action_dim))

    def forward(self, obs):
        mean, log_std = self.net(obs).chunk(2, dim=-1)
        std = log_std.clamp(-5, 2).exp()
        eps = torch.randn_like(mean)
        pre_tanh = mean + std * eps
        action = torch.tanh(pre_tanh)
        log_prob = (-0.5 * eps ** 2 - log_std.clamp(-5, 2) - 0.5 * math.log(2 * math.pi)).sum(-1)
        log_prob = log_prob - torch.log(1 - action ** 2 + 1e-6).sum(-1)
        return {"action": action, "log_prob": log_prob}


class Critic(nn.Module):
    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + action_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs, action):
        return self.net(torch.cat([obs, action], dim=-1))


class SACAgent:
    def __init__(self, obs_dim=6, action_dim=2, discount_factor=0.99, batch_size=32):
        self.policy = Policy(obs_dim, action_dim)
        self.policy_opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.critics = nn.ModuleList([Critic(obs_dim, action_dim) for _ in range(2)])
        self.critic_targets = nn.ModuleList([Critic(obs_dim, action_dim) for _ in range(2)])
        for target, source in zip(self.critic_targets, self.critics):
            target.load_state_dict(source.state_dict())
        self.critic_opts = [torch.optim.Adam(c.parameters(), lr=3e-4) for c in self.critics]
        self._log_alpha = TensorModule(torch.zeros(1))
        self.alpha_opt = torch.optim.Adam(self._log_alpha.parameters(), lr=3e-4)
        self._target_entropy = -action_dim
        self.discount_factor, self.batch_size = discount_factor, batch_size
        self.obs_dim, self.action_dim = obs_dim, action_dim

    @property
    def alpha(self):
        return self._log_alpha().exp()

    def _perform_update(self, loss, opt, network):
        opt.zero_grad()
        loss.backward()
        opt.step()

    def _soft_update_target_network(self, target, source, tau=0.005):
        with torch.no_grad():
            for t, s in zip(target.parameters(), source.parameters()):
                t.mul_(1 - tau).add_(tau * s)

    def _sample_experience(self):
        n = self.batch_size
        return {"observation": torch.randn(n, self.obs_dim), "action": torch.rand(n, self.action_dim) * 2 - 1,
                "reward": torch.randn(n), "done": (torch.rand(n) < 0.05).float(),
                "observation_next": torch.randn(n, self.obs_dim)}

    def _update_alpha(self, policy_output):
        alpha_loss = -1 * (self.alpha * (self._target_entropy + policy_output["log_prob"]).detach()).mean()
        self._perform_update(alpha_loss, self.alpha_opt, self._log_alpha)
        return alpha_loss

    def _compute_policy_loss(self, batch, policy_output):
        q_est = torch.min(*[critic(batch["observation"], policy_output["action"]) for critic in self.critics])
        return (-1 * q_est + self.alpha * policy_output["log_prob"][:, None]).mean()

    def _compute_critic_loss(self, batch, q_target):
        qs = [critic(batch["observation"], batch["action"]).squeeze(-1) for critic in self.critics]
        return [0.5 * (q - q_target).pow(2).mean() for q in qs], qs

    def update(self, update_iterations=2):
        info = {}
        for _ in range(update_iterations):
            batch = self._sample_experience()
            policy_output = self.policy(batch["observation"])
            alpha_loss = self._update_alpha(policy_output)
            policy_loss = self._compute_policy_loss(batch, policy_output)
            with torch.no_grad():
                out_next = self.policy(batch["observation_next"])
                q_next = torch.min(*[t(batch["observation_next"], out_next["action"]) for t in self.critic_targets])
                value_next = (q_next - self.alpha * out_next["log_prob"][:, None]).squeeze(-1)
                q_target = batch["reward"] + (1 - batch["done"]) * self.discount_factor * value_next
            critic_losses, qs = self._compute_critic_loss(batch, q_target)

            [self._perform_update(critic_loss, critic_opt, critic)
             for critic_loss, critic_opt, critic in zip(critic_losses, self.critic_opts, self.critics)]
            [self._soft_update_target_network(critic_target, critic)
             for critic_target, critic in zip(self.critic_targets, self.critics)]

            self._perform_update(policy_loss, self.policy_opt, self.policy)  # expect: AG017

            info = {"policy_loss": policy_loss.item(), "alpha_loss": alpha_loss.item(),
                    "critic_loss_1": critic_losses[0].item(), "critic_loss_2": critic_losses[1].item()}
        return info


def main():
    torch.manual_seed(0)
    agent = SACAgent()
    for step in range(3):
        print(step, agent.update())


if __name__ == "__main__":
    main()
