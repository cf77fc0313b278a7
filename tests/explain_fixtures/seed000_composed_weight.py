"""Seed 000 (composed weight), the author's program: a 3x3 conv kernel [[a, 0, b]] x 3 composed from two
scalars once, then two forward/backward passes with the same w.
torch 2.13 no longer stacks a Python 0 with tensors, so the zero column is `a * 0` (it saves tensors for
backward, as the seed's composition did). Observed in torch 2.13: the second out.backward() raises
"Trying to backward through the graph a second time": the first backward freed w's graph."""
import torch
import torch.optim as optim
import torch.nn.functional as F


def concatAB(a, b):
    c = torch.stack((a, a * 0, b), -1)
    return torch.stack((c, c, c), 0).unsqueeze(0).unsqueeze(0)


a = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(-1.2, requires_grad=True)
optimizer = optim.Adam([a, b], lr=0.001)
w = concatAB(a, b)

inputs = torch.randn(1, 1, 5, 5)

out = torch.sum(F.conv2d(inputs, w, padding=1) ** 2)
out.backward()  # fine
optimizer.step()
optimizer.zero_grad()

out = torch.sum(F.conv2d(inputs, w, padding=1) ** 2)
out.backward()  # RuntimeError
