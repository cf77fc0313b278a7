# source: https://github.com/chenyuntc/pytorch-book/issues/217
# symptom: Only Tensors of floating point and complex dtype can require gradients
# Clean twin: t.arange(-2, 4).float(), the fix the thread gave.
import torch as t
from torch.autograd import Variable as V


def f(x):
    """compute y = x^2 * e^x"""
    y = x ** 2 * t.exp(x)
    return y


def gradf(x):
    """hand-derived gradient of f"""
    dx = 2 * x * t.exp(x) + x ** 2 * t.exp(x)
    return dx


x = V(t.arange(-2, 4).float(), requires_grad=True)
y = f(x)
y.backward(t.ones(y.size()))
print(x.grad)
print(gradf(x.detach()))
