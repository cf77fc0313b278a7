# source: https://github.com/chenyuntc/pytorch-book/issues/217
# symptom: Only Tensors of floating point and complex dtype can require gradients
# The book's chapter 3 (Tensor and autograd, p. 90) builds x = V(t.arange(-2, 4), requires_grad=True) to compare
# autograd with the hand-derived gradient of y = x**2 * e**x; on current PyTorch arange with integer arguments is
# a LongTensor, so this fails ("改成t.arange(-2,4).float()就可以了").
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


x = V(t.arange(-2, 4), requires_grad=True)  # expect: AG004
y = f(x)
y.backward(t.ones(y.size()))
print(x.grad)
print(gradf(x))
