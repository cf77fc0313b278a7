# source: https://github.com/pytorch/pytorch/issues/111369
# symptom: Trying to backward through the graph a second time
"""pytorch/pytorch#111369 ("torch.optim.LBFGS error"): a linear regression fitted with `optim.LBFGS`. The prediction
`pred = model(x)` is computed once, before the closure, and the closure only builds the loss from it and calls
`backward()`. LBFGS re-evaluates the closure after each of its inner parameter updates, so the second evaluation
backpropagates through the first forward's graph again (freed, and computed with the old weights).

Fixed the way the LBFGS documentation writes the closure (the reporter's own "I solved the problem as ..." is cut off
in the stored thread): the forward `pred = model(x)` is recomputed inside the closure on every evaluation."""
import torch
from torch import nn, optim

torch.manual_seed(0)
x = torch.rand(size=(100, 10))
y = torch.rand(size=(100, 1))


class LinearRegression(nn.Module):
    def __init__(self, p):
        super(LinearRegression, self).__init__()
        self.p = p
        self.lin = nn.Linear(p, 1)

    def forward(self, x):
        output = self.lin(x)
        return output


model = LinearRegression(x.size(1))
optimizer = optim.LBFGS(model.parameters())
criterion = nn.MSELoss()


def closure():
    optimizer.zero_grad()
    pred = model(x)
    loss = criterion(pred, y.view(pred.shape))
    loss.backward()
    return loss


final = optimizer.step(closure)
print("loss after LBFGS step: {:.4f}".format(float(final)))
