# source: https://github.com/Kaixhin/Rainbow/commit/493e0f573c163390513c89778954f78c02aa3c1f
# symptom: must have the same dtype
"""Rainbow's factorised NoisyLinear, fixed as in the commit "Add CUDA support": the noise samples are
registered buffers (register_buffer in __init__) and reset_noise() copies new samples into them, so
converting or moving the network converts or moves them too."""
import math

import torch
from torch import nn
from torch.nn import functional as F


class NoisyLinear(nn.Module):
    def __init__(self, in_features, out_features, std_init=0.4):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.std_init = std_init
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features))
        self.weight_sigma = nn.Parameter(torch.empty(out_features, in_features))
        self.bias_mu = nn.Parameter(torch.empty(out_features))
        self.bias_sigma = nn.Parameter(torch.empty(out_features))
        self.register_buffer("weight_epsilon", torch.empty(out_features, in_features))
        self.register_buffer("bias_epsilon", torch.empty(out_features))
        self.reset_parameters()
        self.reset_noise()

    def reset_parameters(self):
        mu_range = 1 / math.sqrt(self.weight_mu.size(1))
        with torch.no_grad():
            self.weight_mu.uniform_(-mu_range, mu_range)
            self.weight_sigma.fill_(self.std_init / math.sqrt(self.weight_sigma.size(1)))
            self.bias_mu.uniform_(-mu_range, mu_range)
            self.bias_sigma.fill_(self.std_init / math.sqrt(self.bias_sigma.size(0)))

    def _scale_noise(self, size):
        x = torch.randn(size)
        return x.sign().mul(x.abs().sqrt())

    def reset_noise(self):
        epsilon_in = self._scale_noise(self.in_features)
        epsilon_out = self._scale_noise(self.out_features)
        self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))
        self.bias_epsilon.copy_(self._scale_noise(self.out_features))

    def forward(self, input):
        if self.training:
            return F.linear(
                input,
                self.weight_mu + self.weight_sigma.mul(self.weight_epsilon),
                self.bias_mu + self.bias_sigma.mul(self.bias_epsilon),
            )
        return F.linear(input, self.weight_mu, self.bias_mu)


class DQN(nn.Module):
    def __init__(self, history_length, hidden_size, atoms, action_space, noisy_std):
        super().__init__()
        self.action_space = action_space
        self.atoms = atoms
        self.conv1 = nn.Conv2d(history_length, 32, 8, stride=4, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 4, stride=2)
        self.conv3 = nn.Conv2d(64, 64, 3)
        self.fc_h = NoisyLinear(64, hidden_size, std_init=noisy_std)
        self.fc_z_v = NoisyLinear(hidden_size, atoms, std_init=noisy_std)
        self.fc_z_a = NoisyLinear(hidden_size, action_space * atoms, std_init=noisy_std)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.relu(self.conv3(x))
        x = F.relu(self.fc_h(x.view(x.size(0), -1)))
        v = self.fc_z_v(x).view(-1, 1, self.atoms)
        a = self.fc_z_a(x).view(-1, self.action_space, self.atoms)
        q = v + a - a.mean(1, keepdim=True)
        return F.softmax(q, dim=2).clamp(min=1e-8, max=1 - 1e-8)

    def reset_noise(self):
        for name, module in self.named_children():
            if "fc" in name:
                module.reset_noise()


class Agent:
    def __init__(self, action_space=3, atoms=11):
        self.action_space = action_space
        self.support = torch.linspace(-10, 10, atoms)
        self.online_net = DQN(4, 32, atoms, action_space, noisy_std=0.1)
        self.online_net.train()
        self.optimiser = torch.optim.Adam(self.online_net.parameters(), lr=1e-4, eps=1.5e-4)

    def reset_noise(self):
        self.online_net.reset_noise()

    def act(self, state):
        with torch.no_grad():
            return (self.online_net(state.unsqueeze(0)) * self.support.to(state)).sum(2).argmax(1).item()

    def learn(self, states, actions, target_dist):
        log_p = torch.log(self.online_net(states)[range(states.size(0)), actions])
        loss = -(target_dist * log_p).sum(1).mean()
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()
        return loss.item()


def main():
    torch.manual_seed(0)
    agent = Agent()
    for step in range(5):
        agent.reset_noise()
        states = torch.randn(8, 4, 36, 36)
        actions = torch.randint(0, agent.action_space, (8,))
        target = F.softmax(torch.randn(8, len(agent.support)), dim=1)
        agent.learn(states, actions, target)
    # acting with a converted copy of the network (the commit: .cuda(); here: .half())
    agent.online_net.half()
    agent.reset_noise()
    action = agent.act(torch.randn(4, 36, 36).half())
    print("action", action)


if __name__ == "__main__":
    main()
