# source: written for holdout28 (pattern: REINFORCE agent allocates its per-context reward baseline table with torch.empty and updates it as a running average that reads the unwritten entries)
# symptom: loss nan
"""REINFORCE with a tabular per-context baseline on a contextual bandit.

8 discrete contexts, 3 arms; the baseline for each context is an exponential
moving average of the rewards seen in it.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.use_deterministic_algorithms(True)


class BanditAgent:
    def __init__(self, n_contexts=8, n_arms=3, lr=0.05, beta=0.9):
        self.policy = nn.Linear(n_contexts, n_arms)
        self.opt = torch.optim.SGD(self.policy.parameters(), lr=lr)
        self.baseline = torch.empty(n_contexts)  # expect: AG012
        self.n_contexts = n_contexts
        self.beta = beta

    def act(self, contexts):
        dist = Categorical(logits=self.policy(F.one_hot(contexts, self.n_contexts).float()))
        actions = dist.sample()
        return actions, dist.log_prob(actions)

    def update(self, contexts, log_probs, rewards):
        for c, r in zip(contexts.tolist(), rewards.tolist()):
            self.baseline[c] = self.beta * self.baseline[c] + (1 - self.beta) * r
        advantage = rewards - self.baseline[contexts]
        loss = -(log_probs * advantage).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


torch.manual_seed(0)
payoff = torch.randn(8, 3)
agent = BanditAgent()
for it in range(40):
    contexts = torch.randint(0, 8, (32,))
    actions, log_probs = agent.act(contexts)
    rewards = payoff[contexts, actions] + 0.1 * torch.randn(32)
    loss = agent.update(contexts, log_probs, rewards)
    if it % 10 == 0:
        print(f"iter {it} loss {loss:.3f} mean reward {rewards.mean():.3f}")
