# source: https://github.com/mimoralea/gdrl/issues/13
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Grokking Deep RL SAC `optimize_model`, reordered as the issue's forum fix does: the policy loss is backpropagated and
the policy stepped right after it is built, before the Q losses are computed and the value optimizers step."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)


class FCQSA(nn.Module):
    def __init__(self, input_dim, output_dim, hidden_dims=(32, 32), activation_fc=F.relu):
        super(FCQSA, self).__init__()
        self.activation_fc = activation_fc
        self.input_layer = nn.Linear(input_dim + output_dim, hidden_dims[0])
        self.hidden_layers = nn.ModuleList(
            [nn.Linear(hidden_dims[i], hidden_dims[i + 1]) for i in range(len(hidden_dims) - 1)])
        self.output_layer = nn.Linear(hidden_dims[-1], 1)

    def forward(self, state, action):
        x = self.activation_fc(self.input_layer(torch.cat((state, action), dim=1)))
        for hidden_layer in self.hidden_layers:
            x = self.activation_fc(hidden_layer(x))
        return self.output_layer(x)


class FCGP(nn.Module):
    def __init__(self, input_dim, action_dim, hidden_dims=(32, 32), log_std_min=-20, log_std_max=2, entropy_lr=1e-3):
        super(FCGP, self).__init__()
        self.input_layer = nn.Linear(input_dim, hidden_dims[0])
        self.hidden_layer = nn.Linear(hidden_dims[0], hidden_dims[1])
        self.output_layer_mean = nn.Linear(hidden_dims[1], action_dim)
        self.output_layer_log_std = nn.Linear(hidden_dims[1], action_dim)
        self.log_std_min, self.log_std_max = log_std_min, log_std_max
        self.target_entropy = -float(action_dim)
        self.logalpha = torch.zeros(1, requires_grad=True)
        self.alpha_optimizer = torch.optim.Adam([self.logalpha], lr=entropy_lr)

    def forward(self, state):
        x = F.relu(self.input_layer(state))
        x = F.relu(self.hidden_layer(x))
        x_mean = self.output_layer_mean(x)
        x_log_std = self.output_layer_log_std(x).clamp(self.log_std_min, self.log_std_max)
        return x_mean, x_log_std

    def full_pass(self, state, epsilon=1e-6):
        mean, log_std = self.forward(state)
        pi_s = Normal(mean, log_std.exp())
        pre_tanh_action = pi_s.rsample()
        tanh_action = torch.tanh(pre_tanh_action)
        log_prob = pi_s.log_prob(pre_tanh_action) - torch.log((1 - tanh_action.pow(2)).clamp(0, 1) + epsilon)
        return tanh_action, log_prob.sum(dim=1, keepdim=True), torch.tanh(mean)


class SAC():
    def __init__(self, nS, nA, gamma=0.99, tau=0.005, max_grad_norm=float('inf')):
        self.policy_model = FCGP(nS, nA)
        self.online_value_model_a = FCQSA(nS, nA)
        self.online_value_model_b = FCQSA(nS, nA)
        self.target_value_model_a = FCQSA(nS, nA)
        self.target_value_model_b = FCQSA(nS, nA)
        self.target_value_model_a.load_state_dict(self.online_value_model_a.state_dict())
        self.target_value_model_b.load_state_dict(self.online_value_model_b.state_dict())
        self.policy_optimizer = torch.optim.Adam(self.policy_model.parameters(), lr=3e-4)
        self.value_optimizer_a = torch.optim.Adam(self.online_value_model_a.parameters(), lr=5e-4)
        self.value_optimizer_b = torch.optim.Adam(self.online_value_model_b.parameters(), lr=5e-4)
        self.gamma, self.tau = gamma, tau
        self.policy_max_grad_norm = self.value_max_grad_norm = max_grad_norm

    def optimize_model(self, experiences):
        states, actions, rewards, next_states, is_terminals = experiences

        # policy loss
        current_actions, logpi_s, _ = self.policy_model.full_pass(states)

        target_alpha = (logpi_s + self.policy_model.target_entropy).detach()
        alpha_loss = -(self.policy_model.logalpha * target_alpha).mean()

        self.policy_model.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.policy_model.alpha_optimizer.step()
        alpha = self.policy_model.logalpha.exp()

        current_q_sa_a = self.online_value_model_a(states, current_actions)
        current_q_sa_b = self.online_value_model_b(states, current_actions)
        current_q_sa = torch.min(current_q_sa_a, current_q_sa_b)
        policy_loss = (alpha * logpi_s - current_q_sa).mean()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.policy_model.parameters(), self.policy_max_grad_norm)
        self.policy_optimizer.step()

        # Q loss
        ap, logpi_sp, _ = self.policy_model.full_pass(next_states)
        q_spap_a = self.target_value_model_a(next_states, ap)
        q_spap_b = self.target_value_model_b(next_states, ap)
        q_spap = torch.min(q_spap_a, q_spap_b) - alpha * logpi_sp
        target_q_sa = (rewards + self.gamma * q_spap * (1 - is_terminals)).detach()

        q_sa_a = self.online_value_model_a(states, actions)
        q_sa_b = self.online_value_model_b(states, actions)
        qa_loss = (q_sa_a - target_q_sa).pow(2).mul(0.5).mean()
        qb_loss = (q_sa_b - target_q_sa).pow(2).mul(0.5).mean()

        self.value_optimizer_a.zero_grad()
        qa_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.online_value_model_a.parameters(), self.value_max_grad_norm)
        self.value_optimizer_a.step()

        self.value_optimizer_b.zero_grad()
        qb_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.online_value_model_b.parameters(), self.value_max_grad_norm)
        self.value_optimizer_b.step()

        return policy_loss.item(), qa_loss.item()

    def update_value_networks(self):
        with torch.no_grad():
            for target, online in ((self.target_value_model_a, self.online_value_model_a),
                                   (self.target_value_model_b, self.online_value_model_b)):
                for t, o in zip(target.parameters(), online.parameters()):
                    t.mul_(1.0 - self.tau).add_(self.tau * o)


def sample_experiences(nS, nA, batch_size=32):
    return (torch.randn(batch_size, nS), torch.rand(batch_size, nA) * 2 - 1, torch.randn(batch_size, 1),
            torch.randn(batch_size, nS), torch.zeros(batch_size, 1))


agent = SAC(nS=4, nA=1)
for step in range(10):
    policy_loss, qa_loss = agent.optimize_model(sample_experiences(4, 1))
    agent.update_value_networks()
print(f"policy_loss {policy_loss:.4f} qa_loss {qa_loss:.4f}")
