# source: https://github.com/PacktPublishing/Deep-Reinforcement-Learning-Hands-On/commit/f5b1122537078148e5e53b906074bb87988c2f31
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Deep RL Hands-On, chapter 7: a DQN with a NoisyLinear output layer, trained against a target network.

Fixed as in the commit: the noisy bias is built out of place, `bias = bias + self.sigma_bias * self.epsilon_bias`.
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


class NoisyLinear(nn.Linear):
    def __init__(self, in_features, out_features, sigma_init=0.017, bias=True):
        super().__init__(in_features, out_features, bias=bias)
        self.sigma_weight = nn.Parameter(torch.Tensor(out_features, in_features).fill_(sigma_init))
        self.register_buffer("epsilon_weight", torch.zeros(out_features, in_features))
        if bias:
            self.sigma_bias = nn.Parameter(torch.Tensor(out_features).fill_(sigma_init))
            self.register_buffer("epsilon_bias", torch.zeros(out_features))

    def forward(self, input):
        torch.randn(self.epsilon_weight.size(), out=self.epsilon_weight)
        bias = self.bias
        if bias is not None:
            torch.randn(self.epsilon_bias.size(), out=self.epsilon_bias)
            bias = bias + self.sigma_bias * self.epsilon_bias
        return F.linear(input, self.weight + self.sigma_weight * self.epsilon_weight, bias)


class DQN(nn.Module):
    def __init__(self, input_shape, n_actions, noisy_net=False):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(input_shape[0], 8, kernel_size=8, stride=4),
            nn.ReLU(),
            nn.Conv2d(8, 16, kernel_size=4, stride=2),
            nn.ReLU(),
            nn.Conv2d(16, 16, kernel_size=3, stride=1),
            nn.ReLU()
        )
        OutLayer = NoisyLinear if noisy_net else nn.Linear
        conv_out_size = self._get_conv_out(input_shape)
        self.fc = nn.Sequential(
            nn.Linear(conv_out_size, 64),
            nn.ReLU(),
            OutLayer(64, n_actions)
        )

    def _get_conv_out(self, shape):
        o = self.conv(torch.zeros(1, *shape))
        return int(o.numel())

    def forward(self, x):
        conv_out = self.conv(x).view(x.size()[0], -1)
        return self.fc(conv_out)


def calc_loss(batch, net, tgt_net, gamma=0.99):
    states, actions, rewards, dones, next_states = batch
    state_action_values = net(states).gather(1, actions.unsqueeze(-1)).squeeze(-1)
    next_state_values = tgt_net(next_states).max(1)[0]
    next_state_values[dones] = 0.0
    expected_state_action_values = next_state_values.detach() * gamma + rewards
    return nn.MSELoss()(state_action_values, expected_state_action_values)


obs_shape, n_actions = (4, 36, 36), 3
net = DQN(obs_shape, n_actions, noisy_net=True)
tgt_net = DQN(obs_shape, n_actions, noisy_net=True)
tgt_net.load_state_dict(net.state_dict())
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
buffer = []

state = torch.rand(obs_shape)
for frame_idx in range(64):
    with torch.no_grad():
        q_vals = net(state.unsqueeze(0))
    action = int(q_vals.argmax(dim=1).item())
    next_state = torch.rand(obs_shape)
    reward = random.random()
    done = random.random() < 0.05
    buffer.append((state, action, reward, done, next_state))
    state = next_state

    if len(buffer) < 16:
        continue
    sample = random.sample(buffer, 16)
    batch = (torch.stack([s[0] for s in sample]), torch.tensor([s[1] for s in sample]),
             torch.tensor([s[2] for s in sample]), torch.tensor([s[3] for s in sample]),
             torch.stack([s[4] for s in sample]))
    optimizer.zero_grad()
    loss_v = calc_loss(batch, net, tgt_net)
    loss_v.backward()
    optimizer.step()
    if frame_idx % 16 == 0:
        tgt_net.load_state_dict(net.state_dict())
        print(f"frame {frame_idx} loss {loss_v.item():.5f}")
