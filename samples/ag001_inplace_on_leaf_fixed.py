"""AG001 fixed: the initial shift happens under torch.no_grad(), so `a` stays a trainable leaf.
Observed in torch 2.13: runs clean; `a` is still a leaf and gets trained."""
import torch

torch.manual_seed(0)
x = torch.randn(8, 2)
y = x @ torch.tensor([[3.0, 1.0], [1.0, 3.0]])

a = torch.ones(2, 2, requires_grad=True)
print(a, a.grad_fn)
with torch.no_grad():
    a += 2
print(a, a.grad_fn)

optimizer = torch.optim.SGD([a], lr=0.05)
for step in range(3):
    optimizer.zero_grad()
    loss = ((x @ a - y) ** 2).mean()
    loss.backward()
    optimizer.step()
print("final weights", a)
