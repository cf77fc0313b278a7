# source: https://github.com/pytorch/pytorch/issues/2641
# symptom: constant after \.double\(\): torch\.float32
# "How to auto convert Module constant Variable between cpu and cuda?": the custom ERelu activation keeps its
# constant as a plain Variable attribute made in __init__, and .cuda() on the model does not move it (.cuda() only
# visits parameters and buffers); the answer is self.register_buffer('constant', ...). Shown with .double() on CPU.
import torch
import torch.nn as nn
from torch.autograd import Variable


class ERelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.constant = Variable(torch.zeros(1), requires_grad=False)  # expect: AG009

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
