# source: https://github.com/yunjey/pytorch-tutorial/pull/128
# symptom: [Oo]nly Tensors of floating point( and complex)? dtype can require gradients
# pytorch-basics/main.py ("Basic autograd example 1") created its scalars with integer literals,
# torch.tensor(1, requires_grad=True), which raises since 0.4. Re-created as that tutorial section.
import torch

# ================================================================== #
#                     1. Basic autograd example 1                    #
# ================================================================== #

# Create tensors.
x = torch.tensor(1, requires_grad=True)  # expect: AG004
w = torch.tensor(2, requires_grad=True)  # expect: AG004
b = torch.tensor(3, requires_grad=True)  # expect: AG004

# Build a computational graph.
y = w * x + b  # y = 2 * x + 3

# Compute gradients.
y.backward()

# Print out the gradients.
print(x.grad)  # x.grad = 2
print(w.grad)  # w.grad = 1
print(b.grad)  # b.grad = 1
