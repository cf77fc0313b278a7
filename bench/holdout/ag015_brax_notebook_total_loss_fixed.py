# source: https://github.com/google/brax/pull/152
# symptom: total_loss still has a graph: True
# Clean twin: the PR's fix, total_loss += float(loss).
# %% [markdown]
# # Training a policy with PyTorch (notebook exported as a script)
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)


class Agent(nn.Module):
    def __init__(self, obs_size=8, act_size=2):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(obs_size, 16), nn.Tanh(), nn.Linear(16, act_size))
        self.value = nn.Sequential(nn.Linear(obs_size, 16), nn.Tanh(), nn.Linear(16, 1))

    def loss(self, obs, returns):
        logits = self.policy(obs)
        v = self.value(obs).squeeze(-1)
        return ((returns - v) ** 2).mean() + 0.01 * logits.pow(2).mean()


# %%
agent = Agent()
optimizer = torch.optim.Adam(agent.parameters(), lr=3e-4)
total_loss = 0
for i in range(5):
    obs, returns = torch.randn(16, 8), torch.randn(16)
    optimizer.zero_grad()
    loss = agent.loss(obs, returns)
    loss.backward()
    optimizer.step()
    total_loss += float(loss)

# %%
print("mean loss:", float(total_loss) / 5)
print("total_loss still has a graph:", getattr(total_loss, "grad_fn", None) is not None)
