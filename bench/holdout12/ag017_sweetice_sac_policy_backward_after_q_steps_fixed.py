# source: https://github.com/sweetice/Deep-reinforcement-learning-with-pytorch/issues/50
# symptom: modified by an inplace operation
"""Deep-reinforcement-learning-with-pytorch, Char09 SAC `SAC.update()`: the value, Q and policy losses
are all built from one forward: `excepted_new_Q = min(Q_net1(s, sample_action), Q_net2(s, sample_action))`
feeds both the value target (detached) and `pi_loss = (log_prob - excepted_new_Q).mean()`. The value
net, Q_net1 and Q_net2 are then stepped one after the other, and only after that runs
`pi_loss.backward(retain_graph = True)`, through Q-net weights the Q steps already rewrote: the version
error of the issue.

The issue is unanswered; the twin is fixed the way the same error is fixed for other SAC code
(soft-actor-critic.pytorch#1): the policy loss is computed after the Q updates, and the
`retain_graph=True` flags, which nothing needs any more, are dropped."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim, min_log_std=-20, max_log_std=2):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, 64)
        self.fc2 = nn.Linear(64, 64)
        self.mu_head = nn.Linear(64, action_dim)
        self.log_std_head = nn.Linear(64, action_dim)
        self.min_log_std, self.max_log_std = min_log_std, max_log_std

    def forward(self, x):
        x = F.relu(self.fc2(F.relu(self.fc1(x))))
        log_std = torch.clamp(self.log_std_head(x), self.min_log_std, self.max_log_std)
        return self.mu_head(x), log_std


class Critic(nn.Module):
    def __init__(self, state_dim):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 1)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class Q(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + action_dim, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 1)

    def forward(self, s, a):
        x = torch.cat((s, a), -1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class SAC:
    def __init__(self, state_dim=3, action_dim=1, lr=3e-4, gamma=0.99, tau=0.005, batch_size=32):
        self.policy_net = Actor(state_dim, action_dim)
        self.value_net = Critic(state_dim)
        self.Target_value_net = Critic(state_dim)
        self.Q_net1 = Q(state_dim, action_dim)
        self.Q_net2 = Q(state_dim, action_dim)
        self.policy_optimizer = torch.optim.Adam(self.policy_net.parameters(), lr=lr)
        self.value_optimizer = torch.optim.Adam(self.value_net.parameters(), lr=lr)
        self.Q1_optimizer = torch.optim.Adam(self.Q_net1.parameters(), lr=lr)
        self.Q2_optimizer = torch.optim.Adam(self.Q_net2.parameters(), lr=lr)
        self.value_criterion = nn.MSELoss()
        self.Q1_criterion = nn.MSELoss()
        self.Q2_criterion = nn.MSELoss()
        self.gamma, self.tau, self.batch_size = gamma, tau, batch_size
        self.state_dim, self.action_dim = state_dim, action_dim
        self.Target_value_net.load_state_dict(self.value_net.state_dict())
        self.num_training = 0

    def evaluate(self, state):
        batch_mu, batch_log_sigma = self.policy_net(state)
        dist = Normal(batch_mu, batch_log_sigma.exp())
        z = Normal(torch.zeros_like(batch_mu), torch.ones_like(batch_mu)).sample()
        action = torch.tanh(batch_mu + batch_log_sigma.exp() * z)
        log_prob = dist.log_prob(batch_mu + batch_log_sigma.exp() * z) - torch.log(1 - action.pow(2) + 1e-7)
        return action, log_prob, z, batch_mu, batch_log_sigma

    def sample(self):
        s = torch.randn(self.batch_size, self.state_dim)
        a = torch.rand(self.batch_size, self.action_dim) * 2 - 1
        r = torch.randn(self.batch_size, 1)
        s_ = torch.randn(self.batch_size, self.state_dim)
        d = (torch.rand(self.batch_size, 1) < 0.05).float()
        return s, a, r, s_, d

    def update(self, gradient_steps=3):
        for _ in range(gradient_steps):
            bn_s, bn_a, bn_r, bn_s_, bn_d = self.sample()
            target_value = self.Target_value_net(bn_s_)
            next_q_value = bn_r + (1 - bn_d) * self.gamma * target_value

            excepted_value = self.value_net(bn_s)
            excepted_Q1 = self.Q_net1(bn_s, bn_a)
            excepted_Q2 = self.Q_net2(bn_s, bn_a)
            sample_action, log_prob, z, batch_mu, batch_log_sigma = self.evaluate(bn_s)
            excepted_new_Q = torch.min(self.Q_net1(bn_s, sample_action), self.Q_net2(bn_s, sample_action))
            next_value = excepted_new_Q - log_prob

            V_loss = self.value_criterion(excepted_value, next_value.detach()).mean()
            Q1_loss = self.Q1_criterion(excepted_Q1, next_q_value.detach()).mean()
            Q2_loss = self.Q2_criterion(excepted_Q2, next_q_value.detach()).mean()

            self.value_optimizer.zero_grad()
            V_loss.backward()
            nn.utils.clip_grad_norm_(self.value_net.parameters(), 0.5)
            self.value_optimizer.step()

            self.Q1_optimizer.zero_grad()
            Q1_loss.backward()
            nn.utils.clip_grad_norm_(self.Q_net1.parameters(), 0.5)
            self.Q1_optimizer.step()

            self.Q2_optimizer.zero_grad()
            Q2_loss.backward()
            nn.utils.clip_grad_norm_(self.Q_net2.parameters(), 0.5)
            self.Q2_optimizer.step()

            # the policy loss is built after the Q steps, through the updated Q nets
            sample_action, log_prob, z, batch_mu, batch_log_sigma = self.evaluate(bn_s)
            new_Q = torch.min(self.Q_net1(bn_s, sample_action), self.Q_net2(bn_s, sample_action))
            pi_loss = (log_prob - new_Q).mean()
            self.policy_optimizer.zero_grad()
            pi_loss.backward()
            nn.utils.clip_grad_norm_(self.policy_net.parameters(), 0.5)
            self.policy_optimizer.step()

            with torch.no_grad():
                for target_param, param in zip(self.Target_value_net.parameters(), self.value_net.parameters()):
                    target_param.copy_(target_param * (1 - self.tau) + param * self.tau)
            self.num_training += 1
        return V_loss.item(), pi_loss.item()


def main():
    agent = SAC()
    for it in range(3):
        v_loss, pi_loss = agent.update()
        print(f"update {it}: V loss {v_loss:.4f}, policy loss {pi_loss:.4f}")


if __name__ == "__main__":
    main()
