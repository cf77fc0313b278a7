# source: https://github.com/montrealrobotics/active-domainrand/issues/9
# symptom: modified by an inplace operation
"""active-domainrand `SVPG`: `step()` writes every particle's critic value into one shared buffer,
`self.values[i][t] = value`, so one graph links all particles' critics. `train()` then loops over the
particles: `critic_loss.backward(retain_graph=True)` on `returns - self.values[i]`, `optimizers[i].step()`,
the policy-gradient backward, ... The next particle's `critic_loss.backward(retain_graph=True)` walks
back through the retained buffer graph into the first particle's critic, whose weights the step already
changed: the RuntimeError of the issue.

The issue is unanswered; the twin's fix is this set's: each particle's values are collected in their
own tensor (`torch.cat` of that particle's values), so a particle's critic loss has its own graph, and
`retain_graph=True`, then needed by nothing, is dropped."""
import math

import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)


class SVPGParticle(nn.Module):
    def __init__(self, input_dim, output_dim, hidden_dim=16):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, 1))
        self.actor_hidden = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.Tanh())
        self.mean = nn.Linear(hidden_dim, output_dim)
        self.logstd = nn.Parameter(torch.zeros(output_dim))
        self.reset()

    def forward(self, x):
        h = self.actor_hidden(x)
        return Normal(self.mean(h), self.logstd.exp()), self.critic(x)

    def reset(self):
        self.saved_log_probs = []


def parameters_to_vector(parameters):
    params, grads = [], []
    for p in parameters:
        params.append(p.view(-1))
        grads.append((p.grad if p.grad is not None else torch.zeros_like(p)).view(-1))
    return torch.cat(params), torch.cat(grads)


def vector_to_grads(vec, parameters):
    pointer = 0
    for p in parameters:
        n = p.numel()
        p.grad = vec[pointer:pointer + n].view_as(p).clone()
        pointer += n


class SVPG:
    def __init__(self, nagents=3, nparams=2, svpg_rollout_length=5, temperature=10.0, max_step_length=0.05):
        self.nagents, self.nparams = nagents, nparams
        self.svpg_rollout_length = svpg_rollout_length
        self.temperature, self.max_step_length, self.gamma = temperature, max_step_length, 0.99
        self.particles = [SVPGParticle(nparams, nparams) for _ in range(nagents)]
        self.optimizers = [torch.optim.Adam(p.parameters(), lr=3e-4) for p in self.particles]
        self.last_states = torch.rand(nagents, nparams)

    def select_action(self, policy_idx, state):
        state = state.clone().float().unsqueeze(0)  # a fresh tensor, as torch.from_numpy(state) gives
        dist, value = self.particles[policy_idx](state)
        action = dist.sample()
        self.particles[policy_idx].saved_log_probs.append(dist.log_prob(action).sum(-1))
        return action.squeeze(0), value

    def step(self):
        self.values = []
        self.masks = torch.ones(self.nagents, self.svpg_rollout_length)
        for i in range(self.nagents):
            self.particles[i].reset()
            current = self.last_states[i]
            particle_values = []
            for t in range(self.svpg_rollout_length):
                action, value = self.select_action(i, current)
                particle_values.append(value)
                current = (current + action * self.max_step_length).clamp(0, 1)
            self.values.append(torch.cat(particle_values))
            self.last_states[i] = current

    def compute_returns(self, next_value, rewards, masks):
        R = next_value
        returns = []
        for step in reversed(range(len(rewards))):
            R = self.gamma * masks[step] * R + rewards[step]
            returns.insert(0, R)
        return returns

    def _kernel(self, X):
        pairwise = torch.cdist(X, X) ** 2
        h = pairwise.median() / math.log(self.nagents + 1) + 1e-8
        Kxx = torch.exp(-pairwise / h)
        dxKxx = (Kxx.sum(1, keepdim=True) * X - Kxx @ X) * (2.0 / h)
        return Kxx, dxKxx

    def train(self, simulator_rewards):
        policy_grads, parameters = [], []
        for i in range(self.nagents):
            _, next_value = self.select_action(i, self.last_states[i])
            returns = self.compute_returns(next_value, simulator_rewards[i], self.masks[i])
            returns = torch.cat(returns).detach()
            advantages = returns - self.values[i]
            policy_grad_particle = [log_prob * advantage.detach()
                                    for log_prob, advantage in zip(self.particles[i].saved_log_probs, advantages)]

            self.optimizers[i].zero_grad()
            critic_loss = 0.5 * advantages.pow(2).mean()
            critic_loss.backward()
            self.optimizers[i].step()

            self.optimizers[i].zero_grad()
            policy_grad = -torch.cat(policy_grad_particle).mean()
            policy_grad.backward()
            vec_param, vec_policy_grad = parameters_to_vector(self.particles[i].parameters())
            policy_grads.append(vec_policy_grad.unsqueeze(0))
            parameters.append(vec_param.detach().unsqueeze(0))

        Kxx, dxKxx = self._kernel(torch.cat(parameters))
        grad_theta = (Kxx @ (torch.cat(policy_grads) / self.temperature) + dxKxx) / self.nagents
        for i in range(self.nagents):
            vector_to_grads(grad_theta[i], self.particles[i].parameters())
            self.optimizers[i].step()


def main():
    svpg = SVPG()
    for it in range(3):
        svpg.step()
        rewards = torch.randn(svpg.nagents, svpg.svpg_rollout_length, 1)
        svpg.train(rewards)
        print(f"svpg iteration {it} done")


if __name__ == "__main__":
    main()
