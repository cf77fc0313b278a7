"""A manual SGD step through an alias made under no_grad: updating in place is what the alias is for."""
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
for step in range(3):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        p = w  # harmless: AG007
        p -= 0.1 * p.grad
    w.grad = None
    print(step, loss.item())
