# source: written for bench/holdout5 (short training program, polynomial regression with an nn.Module, notebook style)
import torch
from torch import nn

torch.manual_seed(29)


class Poly(nn.Module):
    def __init__(self, degree=3):
        super().__init__()
        self.coef = nn.Parameter(torch.zeros(degree + 1))

    def forward(self, x):
        return sum(c * x ** i for i, c in enumerate(self.coef))


x = torch.linspace(-1, 1, 50)
y = 0.5 - x + 2 * x ** 3
model = Poly()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
grad_norms = []

for step in range(30):
    pred = model(x)
    loss = ((pred - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    grad_norms.append(model.coef.grad.norm().item())
    optimizer.step()

print("loss", round(loss.item(), 4))
print("coefficients:", [round(c, 3) for c in model.coef.detach().tolist()])
print("gradient norm grew:", grad_norms[-1] > 2 * grad_norms[0])
