# source: https://github.com/pytorch/pytorch/issues/90158
# symptom: Trying to backward through the graph a second time
# Clean twin: t is made a leaf of its own (the sampled values first, then requires_grad_()), which is what the thread
# explains: the plain `torch.rand(20, 1, requires_grad=True)` leaf works because it has no graph to free.
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
t = (1 + 3 * torch.rand(20, 1)).requires_grad_()

opt = torch.optim.Adam(net.parameters(), lr=0.01)
for step in range(2):
    loss = torch.mean(torch.square(net(x, t)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
