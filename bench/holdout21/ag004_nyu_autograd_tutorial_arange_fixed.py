# source: https://github.com/Atcold/NYU-DLSP20/commit/c26a42e9d28ac0984a5a647f68902115d3b87900
# symptom: Only Tensors of floating point and complex dtype can require gradients
"""Atcold/NYU-DLSP20 (pytorch-Deep-Learning) 03-autograd_tutorial.ipynb after "Fix remaining
arange float bug" (fixed): both cells build a float range, `x = torch.arange(1., n + 1,
requires_grad=True)` and `x = torch.arange(1., n + 1)`."""
import torch

# Dynamic graphs!
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
gradients = torch.FloatTensor([0.1, 1.0, 0.0001])
y.backward(gradients)
print(x.grad)

# Inference
n = 3
x = torch.arange(1., n + 1, requires_grad=True)
w = torch.ones(n, requires_grad=True)
z = w @ x
z.backward()
print(x.grad, w.grad, sep='\n')

x = torch.arange(1., n + 1)
w = torch.ones(n, requires_grad=True)
z = w @ x
z.backward()
print(x.grad, w.grad, sep='\n')
