# source: https://github.com/pytorch/pytorch/issues/6990
# symptom: grad wrong: a\.grad is tensor\(\[0\., 0\., 0\.\]\)
# "Differences between .data and .detach": zou3519's example, out = a.sigmoid(); c = out.data; c.zero_() before
# out.sum().backward(). With .detach() it raises; with .data autograd is not told and a.grad comes out all zeros.
import torch

a = torch.tensor([1, 2, 3.0], requires_grad=True)
out = a.sigmoid()
c = out.data  # expect: AG008
c.zero_()  # expect: AG008
print(out)  # out was modified by c.zero_()
out.sum().backward()
expected = torch.sigmoid(a.detach()) * (1 - torch.sigmoid(a.detach()))
if not torch.allclose(a.grad, expected):
    print("grad wrong: a.grad is", a.grad, "expected", expected)
