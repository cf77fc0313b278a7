# source: http://readke.com/c/12263VZ62021.html
# symptom: grad can be implicitly created only for scalar outputs
# Clean twin: grad_outputs supplies the vector (ones, one per element of b) that weights b's elements; the post
# quotes autograd.grad's docstring on grad_outputs for exactly this case.
import torch
from torch.autograd import Variable, grad

a = Variable(torch.FloatTensor([1, 2, 3]), requires_grad=True)
b = 3 * a
db_da = grad(b, a, grad_outputs=torch.ones_like(b))
print(db_da)
