# source: https://github.com/pytorch/pytorch/issues/90158
# symptom: Trying to backward through the graph a second time
# "loss.backwards() cannot handle addition?": the collocation times are drawn once as
# `t = 1 + 3 * torch.rand(20, 1, requires_grad=True)`, a tensor computed from a leaf that requires grad, and fed to
# the network at every optimisation step; the first backward frees t's graph and the second step raises. (The
# report's minimal example unrolls two steps of the training loop written here as a loop.)
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stack = nn.Sequential(nn.Linear(2, 10), nn.Linear(10, 10), nn.Linear(10, 1))

    def forward(self, x, t):
        X = torch.cat([t, x], axis=1)
        for layer in self.stack:
            X = layer(X)
        return X


torch.manual_seed(0)
net = Net()
x = torch.FloatTensor(20, 1).uniform_(-1, 1)
x.requires_grad_()
t = 1 + 3 * torch.rand(20, 1, requires_grad=True)  # expect: AG002
t.requires_grad_()

opt = torch.optim.Adam(net.parameters(), lr=0.01)
for step in range(2):
    loss = torch.mean(torch.square(net(x, t)))  # expect: AG002
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
