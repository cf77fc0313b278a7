# source: written for bench/holdout5 (short training program, linear regression with a hand-written optimizer class)
import torch

torch.manual_seed(1)


class PlainSGD:
    """A minimal SGD, written out to see what torch.optim.SGD does."""

    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with torch.no_grad():
            for p in self.params:
                if p.grad is not None:
                    p -= self.lr * p.grad


true_w = torch.tensor([[2.0], [-3.0], [0.5]])
X = torch.randn(128, 3)
Y = X @ true_w + 0.1 * torch.randn(128, 1)

w = torch.zeros(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
sgd = PlainSGD([w, b], lr=0.05)

for it in range(100):
    sgd.zero_grad()
    pred = X @ w + b
    loss = ((pred - Y) ** 2).mean()
    loss.backward()
    sgd.step()
    if it % 25 == 0:
        print(f"iter {it}: mse {loss.item():.4f}")

print("learned:", [round(v, 3) for v in w.detach().flatten().tolist()], "bias:", round(b.item(), 3))
