"""AG002 fixed: the kernel is re-composed from a and b inside the loop, after every optimizer.step().
Observed in torch 2.13: runs clean; the kernel used by each conv2d follows a and b."""
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

inputs = torch.randn(1, 1, 5, 5)
for step in range(3):
    optimizer.zero_grad()
    w = concatAB(a, b)
    out = torch.sum(F.conv2d(inputs, w, padding=1) ** 2)
    out.backward()
    optimizer.step()
    print(step, a.item(), b.item(), w[0, 0, 0].tolist())
