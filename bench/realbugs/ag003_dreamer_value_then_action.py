# source: https://github.com/cross32768/Dreamer_PyTorch/issues/2
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# Dreamer's update: value_loss.backward(retain_graph=True); value_optimizer.step(); then action_loss.backward() through the
# same imagined rollout, whose graph saved the value model's weights that the step just changed. Re-created with the rollout.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_


class RSSM(nn.Module):
    def __init__(self, state_dim, action_dim, rnn_hidden_dim):
        super().__init__()
        self.fc_state_action = nn.Linear(state_dim + action_dim, rnn_hidden_dim)
        self.rnn = nn.GRUCell(rnn_hidden_dim, rnn_hidden_dim)
        self.fc_state_mean = nn.Linear(rnn_hidden_dim, state_dim)

    def prior(self, state, action, rnn_hidden):
        hidden = F.elu(self.fc_state_action(torch.cat([state, action], dim=1)))
        rnn_hidden = self.rnn(hidden, rnn_hidden)
        return self.fc_state_mean(rnn_hidden), rnn_hidden


class ValueModel(nn.Module):
    def __init__(self, state_dim, rnn_hidden_dim, hidden_dim=32):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + rnn_hidden_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, 1)

    def forward(self, state, rnn_hidden):
        return self.fc2(F.elu(self.fc1(torch.cat([state, rnn_hidden], dim=1))))


class RewardModel(ValueModel):
    pass


class ActionModel(nn.Module):
    def __init__(self, state_dim, rnn_hidden_dim, action_dim, hidden_dim=32):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + rnn_hidden_dim, hidden_dim)
        self.fc_mean = nn.Linear(hidden_dim, action_dim)

    def forward(self, state, rnn_hidden):
        return torch.tanh(self.fc_mean(F.elu(self.fc1(torch.cat([state, rnn_hidden], dim=1)))))


def lambda_target(rewards, values, gamma, lambda_):
    V_lambda = torch.zeros_like(rewards)
    H = rewards.shape[0] - 1
    V_n = torch.zeros_like(rewards)
    V_n[H] = values[H]
    for n in range(1, H + 1):
        V_n[:-n] = (gamma ** n) * values[n:]
        for k in range(1, n + 1):
            if k == n:
                V_n[:-n] += (gamma ** (n - 1)) * rewards[k:]
            else:
                V_n[:-n] += (gamma ** (k - 1)) * rewards[k:-n + k]
        if n == H:
            V_lambda += (lambda_ ** (H - 1)) * V_n
        else:
            V_lambda += (1 - lambda_) * (lambda_ ** (n - 1)) * V_n
    return V_lambda


torch.manual_seed(0)
state_dim, action_dim, rnn_hidden_dim, horizon = 6, 2, 16, 5
gamma, lambda_, clip_grad_norm = 0.9, 0.95, 100.0
rssm = RSSM(state_dim, action_dim, rnn_hidden_dim)
value_model = ValueModel(state_dim, rnn_hidden_dim)
reward_model = RewardModel(state_dim, rnn_hidden_dim)
action_model = ActionModel(state_dim, rnn_hidden_dim, action_dim)
value_optimizer = torch.optim.Adam(value_model.parameters(), lr=8e-5)
action_optimizer = torch.optim.Adam(action_model.parameters(), lr=8e-5)

for update_step in range(3):
    flatten_states = torch.randn(8, state_dim)
    flatten_rnn_hiddens = torch.zeros(8, rnn_hidden_dim)
    imaginated_states = torch.zeros(horizon + 1, 8, state_dim)
    imaginated_rnn_hiddens = torch.zeros(horizon + 1, 8, rnn_hidden_dim)
    imaginated_states[0] = flatten_states
    imaginated_rnn_hiddens[0] = flatten_rnn_hiddens
    for h in range(1, horizon + 1):
        actions = action_model(flatten_states, flatten_rnn_hiddens)
        flatten_states, flatten_rnn_hiddens = rssm.prior(flatten_states, actions, flatten_rnn_hiddens)
        imaginated_states[h] = flatten_states
        imaginated_rnn_hiddens[h] = flatten_rnn_hiddens
    flatten_imaginated_states = imaginated_states.view(-1, state_dim)
    flatten_imaginated_rnn_hiddens = imaginated_rnn_hiddens.view(-1, rnn_hidden_dim)
    imaginated_rewards = reward_model(flatten_imaginated_states, flatten_imaginated_rnn_hiddens).view(horizon + 1, -1)
    imaginated_values = value_model(flatten_imaginated_states, flatten_imaginated_rnn_hiddens).view(horizon + 1, -1)
    lambda_target_values = lambda_target(imaginated_rewards, imaginated_values, gamma, lambda_)

    # update value model
    value_loss = 0.5 * F.mse_loss(imaginated_values, lambda_target_values.detach())
    value_optimizer.zero_grad()
    value_loss.backward(retain_graph=True)  # expect: AG003
    clip_grad_norm_(value_model.parameters(), clip_grad_norm)
    value_optimizer.step()

    # update action model (multiply -1 for gradient ascent)
    action_loss = -1 * (lambda_target_values.mean())
    action_optimizer.zero_grad()
    action_loss.backward()
    clip_grad_norm_(action_model.parameters(), clip_grad_norm)
    action_optimizer.step()
    print("update_step", update_step, value_loss.item(), action_loss.item())
