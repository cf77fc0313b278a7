# source: https://github.com/pytorch/pytorch/issues/727
# symptom: a leaf Variable that requires grad is being used in an in-place operation
# Clean twin: the inplace flags removed, as the thread answered.
import torch
import torch.nn.functional as F
from torch.autograd import Variable

x = Variable(torch.randn(4, 6, 10, 10), requires_grad=True)
y = F.relu(x)
y = F.dropout(y, p=0.1)
result = torch.sum(y)
result.backward()
print("ok", x.grad.shape)
