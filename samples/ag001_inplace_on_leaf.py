"""AG001 (seed 003): shifting a fresh weight with `+=` while it requires grad.
Observed in torch 2.13: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."""
import torch

torch.manual_seed(0)
x = torch.randn(8, 2)
y = x @ torch.tensor([[3.0, 1.0], [1.0, 3.0]])

a = torch.ones(2, 2, requires_grad=True)
print(a, a.grad_fn)
a += 2  # expect: AG001
print(a, a.grad_fn)

optimizer = torch.optim.SGD([a], lr=0.05)
for step in range(3):
    optimizer.zero_grad()
    loss = ((x @ a - y) ** 2).mean()
    loss.backward()
    optimizer.step()
print("final weights", a)
