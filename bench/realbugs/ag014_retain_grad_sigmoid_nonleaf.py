# source: https://github.com/pytorch/pytorch/issues/3890
# symptom: you can only change requires_grad flags of leaf variables
# The reporter wanted the gradient of an intermediate result: s = torch.sigmoid(x) of a Variable that requires grad,
# then s.requires_grad = True so that s.retain_grad() would work; s is computed, not a leaf, and the assignment raises
# (the answer: s already requires grad, call s.retain_grad() directly). Re-created as the snippet.
import torch
from torch.autograd import Variable

x = Variable(torch.zeros(3, 3), requires_grad=True)
s = torch.sigmoid(x)
s.requires_grad = True  # expect: AG014
s.retain_grad()
total = torch.sum(s)
total.backward()
assert s.grad is not None
print(s.grad)
