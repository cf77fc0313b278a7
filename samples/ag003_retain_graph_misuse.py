"""AG003 (seed 001): two losses built once before the loop, each backward(retain_graph=True) followed by a step.
Observed in torch 2.13: iteration 0 runs; iteration 1's loss1.backward raises RuntimeError: one of the variables ... is at version 1; expected version 0."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.tensor([2.0]))
        self.w2 = nn.Parameter(torch.tensor([3.0]))
        self.w3 = nn.Parameter(torch.tensor([4.0]))

    def forward(self, a):
        s = a * self.w1
        return s * self.w2, s * self.w3


torch.manual_seed(0)
x = torch.randn(16, 1)
y1, y2 = 5.0 * x, 7.0 * x
model = Model()
mse = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

y1_pred, y2_pred = model(x)
loss1 = mse(y1_pred, y1)
loss2 = mse(y2_pred, y2)
for n in range(3):
    optimizer.zero_grad()
    loss1.backward(retain_graph=True)  # expect: AG003
    optimizer.step()
    optimizer.zero_grad()
    loss2.backward(retain_graph=True)  # expect: AG003
    optimizer.step()
    print("n =", n)
