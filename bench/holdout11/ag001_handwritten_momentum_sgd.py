# source: holdout11 short program (no report)
# symptom: leaf Variable that requires grad
"""A hand-written momentum SGD class used to train an MLP regressor; its step() updates the parameters in place."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MomentumSGD:
    def __init__(self, params, lr=0.01, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.buffers = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for p, buf in zip(self.params, self.buffers):
            if p.grad is None:
                continue
            buf.mul_(self.momentum).add_(p.grad)
            p -= self.lr * buf  # expect: AG001


net = nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = MomentumSGD(net.parameters(), lr=0.01)
X = torch.randn(128, 3)
Y = (X ** 2).sum(dim=1, keepdim=True)

for it in range(20):
    optimizer.zero_grad()
    loss = ((net(X) - Y) ** 2).mean()
    loss.backward()
    optimizer.step()
    if it % 5 == 0:
        print(f"iter {it} mse {loss.item():.4f}")
