# source: https://github.com/pranz24/pytorch-soft-actor-critic/pull/21
# symptom: action_scale after \.to\(torch\.float64\): torch\.float32
# model.py's DeterministicPolicy keeps action_scale/action_bias as plain tensors made in __init__, so moving the
# policy with .to(device) leaves them behind ("Fix error with DeterministicPolicy"); the review points at
# Module.register_buffer(), which .to() converts with the parameters. Shown with a dtype move on CPU.
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
            self.action_scale = torch.FloatTensor(  # expect: AG009
                (action_space.high - action_space.low) / 2.)
            self.action_bias = torch.FloatTensor(  # expect: AG009
                (action_space.high + action_space.low) / 2.)

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
