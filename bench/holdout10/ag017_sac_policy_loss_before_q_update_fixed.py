# source: https://github.com/toshikwa/soft-actor-critic.pytorch/issues/1
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""soft-actor-critic.pytorch `SacAgent.learn`, fixed as the thread fixed it: "calculate `policy_loss` after updating
`Q1`, `Q2`"."""
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)


def update_params(optim, network, loss, grad_clip=None, retain_graph=False):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    if grad_clip is not None:
        for p in network.modules():
            torch.nn.utils.clip_grad_norm_(p.parameters(), grad_clip)
    optim.step()


def soft_update(target, source, tau):
    with torch.no_grad():
        for t, s in zip(target.parameters(), source.parameters()):
            t.mul_(1.0 - tau).add_(tau * s)


class QNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_units=(32, 32)):
        super().__init__()
        self.Q = nn.Sequential(nn.Linear(num_inputs + num_actions, hidden_units[0]), nn.ReLU(),
                               nn.Linear(hidden_units[0], hidden_units[1]), nn.ReLU(),
                               nn.Linear(hidden_units[1], 1))

    def forward(self, x):
        return self.Q(x)


class TwinnedQNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions):
        super().__init__()
        self.Q1 = QNetwork(num_inputs, num_actions)
        self.Q2 = QNetwork(num_inputs, num_actions)

    def forward(self, states, actions):
        x = torch.cat([states, actions], dim=1)
        return self.Q1(x), self.Q2(x)


class GaussianPolicy(nn.Module):
    def __init__(self, num_inputs, num_actions):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(num_inputs, 32), nn.ReLU(), nn.Linear(32, 2 * num_actions))

    def sample(self, states):
        means, log_stds = torch.chunk(self.policy(states), 2, dim=-1)
        normals = Normal(means, log_stds.clamp(-20, 2).exp())
        xs = normals.rsample()
        actions = torch.tanh(xs)
        log_probs = normals.log_prob(xs) - torch.log(1 - actions.pow(2) + 1e-6)
        entropies = -log_probs.sum(dim=1, keepdim=True)
        return actions, entropies, torch.tanh(means)


class Memory:
    def __init__(self, num_inputs, num_actions, capacity=256):
        self.states = torch.randn(capacity, num_inputs)
        self.actions = torch.rand(capacity, num_actions) * 2 - 1
        self.rewards = torch.randn(capacity, 1)
        self.next_states = torch.randn(capacity, num_inputs)
        self.dones = torch.zeros(capacity, 1)

    def sample(self, batch_size):
        idx = torch.randint(0, self.states.shape[0], (batch_size,))
        return self.states[idx], self.actions[idx], self.rewards[idx], self.next_states[idx], self.dones[idx]


class SacAgent:
    def __init__(self, num_inputs, num_actions, batch_size=64, gamma=0.99, tau=0.005, grad_clip=None):
        self.policy = GaussianPolicy(num_inputs, num_actions)
        self.critic = TwinnedQNetwork(num_inputs, num_actions)
        self.critic_target = TwinnedQNetwork(num_inputs, num_actions)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.q1_optim = torch.optim.Adam(self.critic.Q1.parameters(), lr=3e-4)
        self.q2_optim = torch.optim.Adam(self.critic.Q2.parameters(), lr=3e-4)
        self.target_entropy = -float(num_actions)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha = self.log_alpha.detach().exp()
        self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=3e-4)
        self.memory = Memory(num_inputs, num_actions)
        self.batch_size, self.gamma, self.tau, self.grad_clip = batch_size, gamma, tau, grad_clip
        self.learning_steps = 0

    def calc_current_q(self, states, actions):
        return self.critic(states, actions)

    def calc_target_q(self, rewards, next_states, dones):
        with torch.no_grad():
            next_actions, next_entropies, _ = self.policy.sample(next_states)
            next_q1, next_q2 = self.critic_target(next_states, next_actions)
            next_q = torch.min(next_q1, next_q2) + self.alpha * next_entropies
        return rewards + (1.0 - dones) * self.gamma * next_q

    def calc_critic_loss(self, batch, weights):
        states, actions, rewards, next_states, dones = batch
        curr_q1, curr_q2 = self.calc_current_q(states, actions)
        target_q = self.calc_target_q(rewards, next_states, dones)
        q1_loss = torch.mean((curr_q1 - target_q).pow(2) * weights)
        q2_loss = torch.mean((curr_q2 - target_q).pow(2) * weights)
        return q1_loss, q2_loss

    def calc_policy_loss(self, batch, weights):
        states, actions, rewards, next_states, dones = batch
        sampled_action, entropy, _ = self.policy.sample(states)
        q1, q2 = self.critic(states, sampled_action)
        q = torch.min(q1, q2)
        policy_loss = torch.mean((-q - self.alpha * entropy) * weights)
        return policy_loss, entropy

    def calc_entropy_loss(self, entropy, weights):
        return -torch.mean(self.log_alpha * (self.target_entropy - entropy).detach() * weights)

    def learn(self):
        self.learning_steps += 1
        soft_update(self.critic_target, self.critic, self.tau)
        batch = self.memory.sample(self.batch_size)
        weights = 1.

        q1_loss, q2_loss = self.calc_critic_loss(batch, weights)

        update_params(self.q1_optim, self.critic.Q1, q1_loss, self.grad_clip)
        update_params(self.q2_optim, self.critic.Q2, q2_loss, self.grad_clip)
        policy_loss, entropies = self.calc_policy_loss(batch, weights)
        update_params(self.policy_optim, self.policy, policy_loss, self.grad_clip)

        entropy_loss = self.calc_entropy_loss(entropies, weights)
        update_params(self.alpha_optim, None, entropy_loss)
        self.alpha = self.log_alpha.detach().exp()
        return q1_loss.item(), policy_loss.item()


agent = SacAgent(num_inputs=5, num_actions=2)
for step in range(20):
    q1_loss, policy_loss = agent.learn()
print(f"q1_loss {q1_loss:.4f} policy_loss {policy_loss:.4f} alpha {agent.alpha.item():.4f}")
