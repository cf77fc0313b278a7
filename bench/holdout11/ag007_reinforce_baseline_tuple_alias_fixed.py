# source: holdout11 short program (no report)
# symptom: baseline requires grad: True
"""REINFORCE with a learned baseline in a trainer class: the critic values are detached for the baseline."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_act=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh())
        self.logits = nn.Linear(32, n_act)
        self.value = nn.Linear(32, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.logits(h), self.value(h).squeeze(-1)


class ReinforceTrainer:
    def __init__(self, gamma=0.99):
        self.policy = Policy()
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-3)
        self.gamma = gamma

    def discounted(self, rewards):
        out, running = [], 0.0
        for r in reversed(rewards):
            running = r + self.gamma * running
            out.append(running)
        return torch.tensor(out[::-1])

    def update(self, obs, actions, rewards):
        logits, values = self.policy(obs)
        returns = self.discounted(rewards)
        with torch.no_grad():
            baseline, scale = values.detach(), returns.std() + 1e-6
        logp = torch.distributions.Categorical(logits=logits).log_prob(actions)
        advantage = (returns - baseline) / scale
        loss = -(logp * advantage).mean() + 0.5 * F.mse_loss(values, returns)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item(), baseline.requires_grad


trainer = ReinforceTrainer()
for episode in range(4):
    T = 20
    obs = torch.randn(T, 4)
    actions = torch.randint(0, 2, (T,))
    rewards = torch.rand(T).tolist()
    loss, tracked = trainer.update(obs, actions, rewards)
    print(f"episode {episode} loss {loss:.4f}")
print("baseline requires grad:", tracked)
