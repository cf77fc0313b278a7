"""Seed 001 (three weights, retain_graph loop), the author's program: two losses built once before the loop,
each backward(retain_graph=True) followed by a step, `while True`.
The seed's torch zeroed gradients (so every step moved all three weights and the error came at the second
backward of the second iteration, on w3); torch 2.13's zero_grad() sets them to None, so the first step
moves w1 and w2 only. Observed in torch 2.13: the second iteration's loss1.backward raises
"... [torch.FloatTensor [1]] is at version 1; expected version 0 instead" (w2, bumped by the first optim.step())."""
import torch
import torch.nn as nn


class Model(torch.nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.w1 = nn.Parameter(torch.tensor([2.], requires_grad=True))
        self.w2 = nn.Parameter(torch.tensor([3.], requires_grad=True))
        self.w3 = nn.Parameter(torch.tensor([4.], requires_grad=True))

    def forward(self, a):
        s = a * self.w1
        c = s * self.w2
        d = s * self.w3
        return c, d


torch.manual_seed(0)
x = torch.randn(8, 1)
y1 = 5 * x
y2 = 7 * x
model = Model()
optim = torch.optim.SGD(model.parameters(), lr=0.01)
mse = nn.MSELoss()

y1_pred, y2_pred = model(x)
loss1 = mse(y1_pred, y1)
loss2 = mse(y2_pred, y2)
n = 0
while True:
    optim.zero_grad()
    loss1.backward(retain_graph=True)
    optim.step()
    optim.zero_grad()
    loss2.backward(retain_graph=True)
    optim.step()
    n += 1
    print('n=', n)
