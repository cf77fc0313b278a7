"""RLlib DQN (torch) with the distributional support built by torch.arange (clean twin).

`DQNTorchModel.get_q_value_distributions` uses, when `num_atoms > 1`,
`z = torch.range(0.0, self.num_atoms - 1, dtype=torch.float32).to(action_scores.device)` and scales it to
[v_min, v_max]. Every rollout worker prints torch's deprecation warning on every forward pass, and the end-inclusive
`torch.range` is the call the issue asks to replace.

Clean twin: the fix of pull request #25640, `torch.arange(0.0, self.num_atoms, dtype=torch.float32)`, the same
num_atoms values as the end-inclusive range.
"""
# source: https://github.com/ray-project/ray/issues/25503
# symptom: torch\.range is deprecated
import torch
import torch.nn as nn
import torch.nn.functional as F


class DQNTorchModel(nn.Module):
    def __init__(self, obs_dim, num_actions, num_atoms=20, v_min=-10.0, v_max=10.0, hidden=32):
        super().__init__()
        self.num_actions = num_actions
        self.num_atoms = num_atoms
        self.v_min, self.v_max = v_min, v_max
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.advantage_module = nn.Linear(hidden, num_actions * num_atoms)

    def forward(self, obs):
        return self.body(obs)

    def get_q_value_distributions(self, model_out):
        action_scores = self.advantage_module(model_out)
        z = torch.arange(0.0, self.num_atoms, dtype=torch.float32).to(action_scores.device)
        z = self.v_min + z * (self.v_max - self.v_min) / float(self.num_atoms - 1)
        support_logits_per_action = torch.reshape(action_scores, shape=(-1, self.num_actions, self.num_atoms))
        support_prob_per_action = F.softmax(support_logits_per_action, dim=-1)
        action_scores = torch.sum(z * support_prob_per_action, dim=-1)
        return action_scores, z, support_logits_per_action


def project_target(z, rewards, dones, next_probs, gamma, v_min, v_max):
    """Categorical projection of r + gamma * z onto the support z (C51)."""
    num_atoms = z.shape[0]
    delta = (v_max - v_min) / (num_atoms - 1)
    tz = (rewards[:, None] + gamma * (1.0 - dones[:, None]) * z[None, :]).clamp(v_min, v_max)
    b = (tz - v_min) / delta
    lower, upper = b.floor().long(), b.ceil().long()
    target = torch.zeros_like(next_probs)
    target.scatter_add_(1, lower, next_probs * (upper.float() - b + (lower == upper).float()))
    target.scatter_add_(1, upper, next_probs * (b - lower.float()))
    return target


def main():
    torch.manual_seed(0)
    obs_dim, num_actions, batch = 4, 2, 32
    model, target_model = DQNTorchModel(obs_dim, num_actions), DQNTorchModel(obs_dim, num_actions)
    target_model.load_state_dict(model.state_dict())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for it in range(5):
        obs, next_obs = torch.randn(batch, obs_dim), torch.randn(batch, obs_dim)
        actions = torch.randint(0, num_actions, (batch,))
        rewards, dones = torch.ones(batch), (torch.rand(batch) < 0.1).float()
        _, z, logits = model.get_q_value_distributions(model(obs))
        with torch.no_grad():
            q_next, _, next_logits = target_model.get_q_value_distributions(target_model(next_obs))
            best = q_next.argmax(dim=1)
            next_probs = F.softmax(next_logits, dim=-1)[torch.arange(batch), best]
            target = project_target(z, rewards, dones, next_probs, 0.99, model.v_min, model.v_max)
        log_probs = F.log_softmax(logits, dim=-1)[torch.arange(batch), actions]
        loss = -(target * log_probs).sum(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"iter {it} td loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
