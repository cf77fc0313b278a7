# source: https://github.com/pranz24/pytorch-soft-actor-critic/pull/21
# symptom: action_scale after \.to\(torch\.float64\): torch\.float32
# Clean twin: action_scale/action_bias registered as buffers, as the review suggested.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActionSpace:
    def __init__(self, low, high):
        self.low, self.high = low, high


class DeterministicPolicy(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim, action_space=None):
        super().__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.mean = nn.Linear(hidden_dim, num_actions)
        if action_space is None:
            self.action_scale = 1.
            self.action_bias = 0.
        else:
            self.register_buffer("action_scale", torch.FloatTensor((action_space.high - action_space.low) / 2.))
            self.register_buffer("action_bias", torch.FloatTensor((action_space.high + action_space.low) / 2.))

    def forward(self, state):
        x = F.relu(self.linear1(state))
        x = F.relu(self.linear2(x))
        return torch.tanh(self.mean(x)) * self.action_scale + self.action_bias


space = ActionSpace(low=[-2.0, -1.0], high=[2.0, 1.0])
space.low, space.high = torch.tensor(space.low), torch.tensor(space.high)
policy = DeterministicPolicy(3, 2, 8, space).to(torch.float64)
print("action_scale after .to(torch.float64):", policy.action_scale.dtype)
try:
    print(policy(torch.randn(4, 3, dtype=torch.float64)).dtype)
except RuntimeError as error:
    print("forward failed:", error)
