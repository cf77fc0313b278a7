# source: https://github.com/pytorch/pytorch/issues/53466
# symptom: [Oo]nly Tensors of floating point( and complex)? dtype can require gradients
# The torch.enable_grad documentation example starts with x = torch.tensor([1], requires_grad=True), an int64
# tensor, so its first line raises. Re-created as the doc example: nested no_grad/enable_grad and a decorated doubler.
import torch

x = torch.tensor([1], requires_grad=True)  # expect: AG004
with torch.no_grad():
    with torch.enable_grad():
        y = x * 2
print(y.requires_grad)
y.backward()
print(x.grad)


@torch.enable_grad()
def doubler(x):
    return x * 2


with torch.no_grad():
    z = doubler(x)
print(z.requires_grad)
