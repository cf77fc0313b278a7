# source: https://github.com/qbx2/PAAC.pytorch/issues/1
# symptom: loss_sum still has a graph: True
# Clean twin: loss_sum adds the loss's value (loss.item(), today's spelling of loss.data[0]), the fix.
import torch
import torch.nn as nn
import torch.nn.functional as F


class PAACNet(nn.Module):
    def __init__(self, obs=8, actions=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs, 16), nn.ReLU())
        self.policy = nn.Linear(16, actions)
        self.value = nn.Linear(16, 1)

    def forward(self, x):
        h = self.body(x)
        return F.softmax(self.policy(h), dim=-1), self.value(h)


def train(net, n_updates=6, n_envs=4, n_steps=3, report_every=3):
    optimizer = torch.optim.RMSprop(net.parameters(), lr=7e-4)
    loss_sum = 0
    for update in range(1, n_updates + 1):
        states = torch.randn(n_steps, n_envs, 8)
        rewards = torch.randn(n_steps, n_envs)
        probs, values = net(states)
        actions = torch.multinomial(probs.view(-1, 3), 1).view(n_steps, n_envs)
        log_probs = torch.log(probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1))
        advantages = rewards - values.squeeze(-1)
        policy_loss = -(log_probs * advantages.detach()).mean()
        value_loss = advantages.pow(2).mean()
        entropy = -(probs * torch.log(probs)).sum(-1).mean()
        loss = policy_loss + 0.5 * value_loss - 0.01 * entropy
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 40.0)
        optimizer.step()
        loss_sum += loss.item()
        if update % report_every == 0:
            print(f"update {update}: mean loss {float(loss_sum) / report_every:.4f}")
            print("loss_sum still has a graph:", isinstance(loss_sum, torch.Tensor))
            loss_sum = 0


torch.manual_seed(0)
train(PAACNet())
