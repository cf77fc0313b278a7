"""A second name taken through .data, then changed in place before backward(): sigmoid's saved output is zeroed."""
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
out = a.sigmoid()
c = out.data  # harmful: AG008
c.zero_()
out.sum().backward()
print(a.grad)
