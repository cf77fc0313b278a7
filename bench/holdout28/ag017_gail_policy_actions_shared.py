# source: written for holdout28 (pattern: GAIL agent updates the discriminator on the policy's reparameterised actions without detach, steps it, then backprops the policy loss through the same actions in another method)
# symptom: backward through the graph a second time
"""Generative adversarial imitation (GAIL-style, one-step episodes).

The expert maps a 3-d state to a 2-d action with a fixed linear rule; the
policy learns to produce actions the discriminator cannot tell apart.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GAILAgent:
    def __init__(self, s_dim=3, a_dim=2):
        self.policy_mu = nn.Sequential(nn.Linear(s_dim, 32), nn.Tanh(), nn.Linear(32, a_dim))
        self.log_std = nn.Parameter(torch.full((a_dim,), -1.0))
        self.disc = nn.Sequential(nn.Linear(s_dim + a_dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.pi_opt = torch.optim.Adam([*self.policy_mu.parameters(), self.log_std], lr=3e-3)
        self.d_opt = torch.optim.Adam(self.disc.parameters(), lr=3e-3)

    def act(self, states):
        mu = self.policy_mu(states)
        return mu + self.log_std.exp() * torch.randn_like(mu)

    def update_discriminator(self, states, actions, expert_actions):
        real = self.disc(torch.cat([states, expert_actions], 1))
        fake = self.disc(torch.cat([states, actions], 1))
        loss = F.binary_cross_entropy_with_logits(real, torch.ones_like(real)) + \
            F.binary_cross_entropy_with_logits(fake, torch.zeros_like(fake))
        self.d_opt.zero_grad()
        loss.backward()
        self.d_opt.step()
        return loss.item()

    def update_policy(self, states, actions):
        logits = self.disc(torch.cat([states, actions], 1))
        loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
        self.pi_opt.zero_grad()
        loss.backward()  # expect: AG017
        self.pi_opt.step()
        return loss.item()


torch.manual_seed(0)
expert_W = torch.randn(3, 2)
agent = GAILAgent()
for it in range(50):
    states = torch.randn(64, 3)
    actions = agent.act(states)
    d_loss = agent.update_discriminator(states, actions, states @ expert_W)
    pi_loss = agent.update_policy(states, actions)
    if it % 10 == 0:
        print(f"iter {it} d {d_loss:.3f} pi {pi_loss:.3f}")
