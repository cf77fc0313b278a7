# source: written for bench/holdout5 (short training program, REINFORCE on a toy bandit, agent class)
import torch
from torch import nn
from torch.distributions import Categorical

torch.manual_seed(10)

true_rewards = torch.tensor([0.1, 0.5, 0.9, 0.3])


class Agent:
    def __init__(self, n_arms):
        self.policy = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, n_arms))
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=0.05)

    def act(self, batch):
        logits = self.policy(torch.ones(batch, 1))
        dist = Categorical(logits=logits)
        arms = dist.sample()
        return arms, dist.log_prob(arms)

    def update(self, log_probs, rewards):
        baseline = rewards.mean()
        pg_loss = -(log_probs * (rewards - baseline))
        self.opt.zero_grad()
        pg_loss.sum().backward()
        self.opt.step()


agent = Agent(len(true_rewards))
for episode in range(50):
    arms, log_probs = agent.act(batch=32)
    rewards = torch.bernoulli(true_rewards[arms])
    agent.update(log_probs, rewards)
    if episode % 10 == 0:
        print(f"episode {episode}: mean reward {rewards.mean().item():.2f}")

with torch.no_grad():
    probs = torch.softmax(agent.policy(torch.ones(1, 1)), dim=-1)
print("policy:", [round(p, 3) for p in probs.squeeze().tolist()])
