# source: https://github.com/pytorch/pytorch/issues/2641
# symptom: constant after \.double\(\): torch\.float32
# Clean twin: the constant registered as a buffer, as the answer said.
import torch
import torch.nn as nn
from torch.autograd import Variable


class ERelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer('constant', torch.zeros(1))

    def forward(self, x):
        return torch.max(x, self.constant) + torch.min(x, self.constant).exp() - 1


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = ERelu()
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


net = Net().double()
print("constant after .double():", net.act.constant.dtype)
try:
    print(net(torch.randn(3, 4, dtype=torch.float64)).dtype)
except RuntimeError as error:
    print("forward failed:", error)
