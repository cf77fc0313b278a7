# source: https://github.com/d2l-ai/d2l-en/pull/2600
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
"""Dive into Deep Learning "Custom Layers", fixed as the pull request fixes it: `MyLinear.forward` uses `self.weight` and
`self.bias`, so backpropagation reaches them."""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(3)


class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_units, units))
        self.bias = nn.Parameter(torch.randn(units,))

    def forward(self, X):
        linear = torch.matmul(X, self.weight) + self.bias
        return F.relu(linear)


linear = MyLinear(5, 3)
print(linear.weight.shape)
print(linear(torch.rand(2, 5)).shape)

net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
print(net(torch.rand(2, 64)).shape)

X, y = torch.rand(32, 64), torch.rand(32, 1)
trainer = torch.optim.SGD(net.parameters(), lr=0.01)
loss = nn.MSELoss()
for epoch in range(3):
    trainer.zero_grad()
    l = loss(net(X), y)
    l.backward()
    trainer.step()
    print(f"epoch {epoch + 1}, loss {l.item():f}")
