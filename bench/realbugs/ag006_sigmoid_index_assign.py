# source: https://github.com/pytorch/pytorch/issues/9391
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# The report: b = a.sigmoid(); b[1] = 2; b.sum().backward() raises, while the hand-written 1/((-a).exp()+1) does not,
# because sigmoid saves its output. Re-created as the report's two variants, the failing one last.
import torch

a = torch.tensor([1, 2, 3.0], requires_grad=True)
b = 1 / ((-a).exp() + 1)
b[1] = 2
b.sum().backward()
print("hand-written sigmoid:", a.grad)

a = torch.tensor([1, 2, 3.0], requires_grad=True)
b = a.sigmoid()
b[1] = 2  # expect: AG006
b.sum().backward()
print("torch.sigmoid:", a.grad)
