# source: https://github.com/pytorch/pytorch/issues/14275
# symptom: Only Tensors of floating point (and complex )?dtype can require gradients
"""Twin (the maintainer's answer: give the dtype, `t.arange(0, 3, dtype=t.float32)`). The issue's notebook (`import torch as t`, PyTorch 0.4.1): `x = Variable(t.arange(0, 3), requires_grad=True)` to
differentiate a small function of x; `t.arange` with integer arguments returned an int64 tensor, which cannot require
gradients."""
import torch as t
from torch.autograd import Variable


def f(x):
    return (x ** 2 + 2 * x).sum()


def check_gradient(x):
    y = f(x)
    y.backward()
    expected = 2 * x.detach() + 2
    print("x.grad:", x.grad, "| analytic 2x + 2:", expected, "| match:", bool(t.allclose(x.grad, expected)))


x = Variable(t.arange(0, 3, dtype=t.float32), requires_grad=True)
check_gradient(x)
