"""AG002 (seed 000): a 3x3 conv kernel [[a, 0, b]] * 3 composed from two scalars once, before the loop.
Observed in torch 2.13: silent, no error (torch.stack saves no tensors): a and b move every step, w never does."""
import torch
import torch.nn.functional as F
import torch.optim as optim


def concatAB(a, b):
    c = torch.stack((a, torch.zeros_like(a), b), -1)
    return torch.stack((c, c, c), 0).unsqueeze(0).unsqueeze(0)


torch.manual_seed(0)
a = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(-1.2, requires_grad=True)
optimizer = optim.Adam([a, b], lr=0.01)
w = concatAB(a, b)  # expect: AG002

inputs = torch.randn(1, 1, 5, 5)
for step in range(3):
    optimizer.zero_grad()
    out = torch.sum(F.conv2d(inputs, w, padding=1) ** 2)  # expect: AG002
    out.backward()
    optimizer.step()
    print(step, a.item(), b.item(), w[0, 0, 0].tolist())
