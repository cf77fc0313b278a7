# source: written for bench/holdout5 (short training program, box-constrained ridge regression, closed-form gradient check)
import torch

torch.manual_seed(16)

n, d, lam, lr = 100, 4, 0.1, 0.05
X = torch.randn(n, d)
y = X @ torch.tensor([1.0, -2.0, 0.5, 3.0]) + 0.05 * torch.randn(n)

w = torch.zeros(d, requires_grad=True)
opt = torch.optim.SGD([w], lr=lr)
LOW, HIGH = -1.5, 1.5


def objective(w):
    resid = X @ w - y
    return (resid ** 2).mean() + lam * (w ** 2).sum()


checks = []
for epoch in range(30):
    w_seen = w.detach().clone()
    opt.zero_grad()
    loss = objective(w)
    loss.backward()
    closed = 2 * X.T @ (X @ w_seen - y) / n + 2 * lam * w_seen
    checks.append(torch.allclose(w.grad, closed, atol=1e-4))
    opt.step()
    with torch.no_grad():
        w.clamp_(LOW, HIGH)

print("loss", round(loss.item(), 4))
print("w =", [round(v, 3) for v in w.detach().tolist()])
print("gradient matches closed form:", all(checks))
