# source: written for holdout28 (pattern: PPO-style agent computes the rollout's log-probs once with the policy attached and reuses them for several update epochs via retain_graph=True, stepping between them)
# symptom: modified by an inplace operation
"""Tiny PPO-flavoured update on a contextual bandit with 4 arms.

The agent collects a batch of (state, action, reward), then runs K epochs of
clipped-ratio updates on it.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Agent:
    def __init__(self, obs_dim=6, n_actions=4, lr=3e-3, clip=0.2, epochs=4):
        self.policy = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.clip = clip
        self.epochs = epochs

    def collect(self, env_w, n=128):
        states = torch.randn(n, env_w.shape[0])
        with torch.no_grad():
            dist = Categorical(logits=self.policy(states))
            actions = dist.sample()
            old_log_probs = dist.log_prob(actions)
        rewards = (states @ env_w).gather(1, actions[:, None]).squeeze(1)
        return states, actions, old_log_probs, rewards

    def update(self, states, actions, old_log_probs, rewards):
        adv = (rewards - rewards.mean()) / (rewards.std() + 1e-8)
        log_probs = Categorical(logits=self.policy(states)).log_prob(actions)
        for _ in range(self.epochs):
            ratio = torch.exp(log_probs - old_log_probs)
            clipped = torch.clamp(ratio, 1 - self.clip, 1 + self.clip)
            loss = -torch.min(ratio * adv, clipped * adv).mean()
            self.optimizer.zero_grad()
            loss.backward(retain_graph=True)  # expect: AG003
            self.optimizer.step()
        return loss.item()


def main():
    torch.manual_seed(0)
    env_w = torch.randn(6, 4)
    agent = Agent()
    for it in range(10):
        batch = agent.collect(env_w)
        loss = agent.update(*batch)
        print(f"iter {it} loss {loss:.4f} mean reward {batch[3].mean():.3f}")


if __name__ == "__main__":
    main()
