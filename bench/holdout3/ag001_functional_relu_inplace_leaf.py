# source: https://github.com/pytorch/pytorch/issues/727
# symptom: a leaf Variable that requires grad is being used in an in-place operation
# "F.relu(inplace) followed by F.dropout(inplace) breaks backward pass": the input Variable built with
# requires_grad=True is a leaf, and F.relu(x, inplace=True) overwrites it ("You can't apply in-place operations to
# leaf Variables. Just remove the inplace flag").
import torch
import torch.nn.functional as F
from torch.autograd import Variable

x = Variable(torch.randn(4, 6, 10, 10), requires_grad=True)
x = F.relu(x, inplace=True)  # expect: AG001
x = F.dropout(x, p=0.1, inplace=True)
result = torch.sum(x)
result.backward()
print("ok")
