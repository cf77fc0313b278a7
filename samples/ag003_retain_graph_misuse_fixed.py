"""AG003 fixed: the forward is recomputed every iteration and the two losses are summed into one backward.
Observed in torch 2.13: runs clean; w1, w2 and w3 are all trained, no graph is retained."""
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

for n in range(3):
    optimizer.zero_grad()
    y1_pred, y2_pred = model(x)
    loss = mse(y1_pred, y1) + mse(y2_pred, y2)
    loss.backward()
    optimizer.step()
    print("n =", n, loss.item())
