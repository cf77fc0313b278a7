# source: https://github.com/pytorch/pytorch/issues/37680
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
# Clean twin: the differentiable counterpart of the pick, the largest value itself (torch.max).
import torch
from torch import nn

t = torch.rand(10, requires_grad=True)
bad = torch.max(t)

res = bad + 2

res.sum().backward()
print(t.grad)
