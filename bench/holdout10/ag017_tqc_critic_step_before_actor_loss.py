# source: https://github.com/SamsungLabs/tqc_pytorch/issues/8
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""TQC `Trainer.train`: the critic loss, the actor loss (built through `self.critic(state, new_action)`) and the alpha
loss are all computed first; then the critic is stepped, and `actor_loss.backward()` goes back through critic weights
that `critic_optimizer.step()` has just changed in place (PyTorch >= 1.5)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)
DEVICE = torch.device("cpu")
LOG_STD_MIN_MAX = (-20, 2)


class Mlp(nn.Module):
    def __init__(self, input_size, hidden_sizes, output_size):
        super().__init__()
        self.fcs = nn.ModuleList()
        in_size = input_size
        for next_size in hidden_sizes:
            self.fcs.append(nn.Linear(in_size, next_size))
            in_size = next_size
        self.last_fc = nn.Linear(in_size, output_size)

    def forward(self, input):
        h = input
        for fc in self.fcs:
            h = F.relu(fc(h))
        return self.last_fc(h)


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim, n_quantiles, n_nets):
        super().__init__()
        self.nets = nn.ModuleList([Mlp(state_dim + action_dim, [32, 32], n_quantiles) for _ in range(n_nets)])
        self.n_quantiles, self.n_nets = n_quantiles, n_nets

    def forward(self, state, action):
        sa = torch.cat((state, action), dim=1)
        return torch.stack(tuple(net(sa) for net in self.nets), dim=1)


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.action_dim = action_dim
        self.net = Mlp(state_dim, [32, 32], 2 * action_dim)

    def forward(self, obs):
        mean, log_std = self.net(obs).split([self.action_dim, self.action_dim], dim=1)
        log_std = log_std.clamp(*LOG_STD_MIN_MAX)
        normal = Normal(mean, log_std.exp())
        pre_tanh = normal.rsample()
        action = torch.tanh(pre_tanh)
        log_prob = (normal.log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)).sum(dim=1, keepdim=True)
        return action, log_prob


def quantile_huber_loss_f(quantiles, samples):
    pairwise_delta = samples[:, None, None, :] - quantiles[:, :, :, None]
    abs_pairwise_delta = torch.abs(pairwise_delta)
    huber_loss = torch.where(abs_pairwise_delta > 1, abs_pairwise_delta - 0.5, pairwise_delta ** 2 * 0.5)
    n_quantiles = quantiles.shape[2]
    tau = torch.arange(n_quantiles, device=DEVICE).float() / n_quantiles + 1 / 2 / n_quantiles
    return (torch.abs(tau[None, None, :, None] - (pairwise_delta < 0).float()) * huber_loss).mean()


class ReplayBuffer:
    def __init__(self, state_dim, action_dim, size=256):
        self.state = torch.randn(size, state_dim)
        self.action = torch.rand(size, action_dim) * 2 - 1
        self.next_state = torch.randn(size, state_dim)
        self.reward = torch.randn(size, 1)
        self.not_done = torch.ones(size, 1)

    def sample(self, batch_size):
        ind = torch.randint(0, self.state.shape[0], (batch_size,))
        return self.state[ind], self.action[ind], self.next_state[ind], self.reward[ind], self.not_done[ind]


class Trainer(object):
    def __init__(self, *, actor, critic, critic_target, discount, tau, top_quantiles_to_drop, target_entropy):
        self.actor, self.critic, self.critic_target = actor, critic, critic_target
        self.log_alpha = torch.zeros((1,), requires_grad=True, device=DEVICE)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=3e-4)
        self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=3e-4)
        self.discount, self.tau = discount, tau
        self.top_quantiles_to_drop = top_quantiles_to_drop
        self.target_entropy = target_entropy
        self.quantiles_total = critic.n_quantiles * critic.n_nets
        self.total_it = 0

    def train(self, replay_buffer, batch_size=64):
        state, action, next_state, reward, not_done = replay_buffer.sample(batch_size)
        alpha = torch.exp(self.log_alpha)

        # --- Q loss ---
        with torch.no_grad():
            new_next_action, next_log_pi = self.actor(next_state)
            next_z = self.critic_target(next_state, new_next_action)
            sorted_z, _ = torch.sort(next_z.reshape(batch_size, -1))
            sorted_z_part = sorted_z[:, :self.quantiles_total - self.top_quantiles_to_drop]
            target = reward + not_done * self.discount * (sorted_z_part - alpha * next_log_pi)
        cur_z = self.critic(state, action)
        critic_loss = quantile_huber_loss_f(cur_z, target)

        # --- Policy and alpha loss ---
        new_action, log_pi = self.actor(state)
        alpha_loss = -self.log_alpha * (log_pi + self.target_entropy).detach().mean()
        actor_loss = (alpha * log_pi - self.critic(state, new_action).mean(2).mean(1, keepdim=True)).mean()

        # --- Update ---
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()

        with torch.no_grad():
            for param, target_param in zip(self.critic.parameters(), self.critic_target.parameters()):
                target_param.mul_(1 - self.tau).add_(self.tau * param)

        self.actor_optimizer.zero_grad()
        actor_loss.backward()  # expect: AG017
        self.actor_optimizer.step()

        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.alpha_optimizer.step()
        self.total_it += 1
        return critic_loss.item(), actor_loss.item()


state_dim, action_dim = 6, 2
actor = Actor(state_dim, action_dim)
critic = Critic(state_dim, action_dim, n_quantiles=5, n_nets=2)
critic_target = Critic(state_dim, action_dim, n_quantiles=5, n_nets=2)
critic_target.load_state_dict(critic.state_dict())
trainer = Trainer(actor=actor, critic=critic, critic_target=critic_target, discount=0.99, tau=0.005,
                  top_quantiles_to_drop=2, target_entropy=-float(action_dim))
replay_buffer = ReplayBuffer(state_dim, action_dim)
for t in range(20):
    critic_loss, actor_loss = trainer.train(replay_buffer)
print(f"critic_loss {critic_loss:.4f} actor_loss {actor_loss:.4f}")
