# source: https://github.com/pytorch/pytorch/issues/37680
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
# albanD's report: bad = torch.argmax(t); res = bad + 2; res.sum().backward() on a t that requires grad. torch
# then let integer argmax outputs "require grad"; since the fix the loss simply has no graph and backward raises.
import torch
from torch import nn

t = torch.rand(10, requires_grad=True)
bad = torch.argmax(t)

res = bad + 2

res.sum().backward()  # expect: AG010
print(t.grad)
