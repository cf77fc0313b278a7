# source: http://readke.com/c/12263VZ62021.html
# symptom: grad can be implicitly created only for scalar outputs
# Blog post on torch.autograd.grad: the outputs argument is the vector b = 3 * a (one value per element of a) and
# no grad_outputs is given, so autograd cannot create the implicit gradient of b.
import torch
from torch.autograd import Variable, grad

a = Variable(torch.FloatTensor([1, 2, 3]), requires_grad=True)
b = 3 * a
db_da = grad(b, a)  # expect: AG005
print(db_da)
