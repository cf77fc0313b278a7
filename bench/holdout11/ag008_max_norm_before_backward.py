# source: holdout11 short program (no report)
# symptom: first-layer grad matches: False
"""MLP classifier with a max-norm constraint: the helper rescales the hidden layer through .data after the loss is built and before backward."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def max_norm_(layer, c=0.3):
    norms = layer.weight.detach().norm(dim=1, keepdim=True)
    layer.weight.data.mul_(torch.clamp(c / norms, max=1.0))  # expect: AG008


model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
reference = copy.deepcopy(model)
F.cross_entropy(reference(x), y).backward()

for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    max_norm_(model[2])
    loss.backward()
    if step == 0:
        same = torch.allclose(model[0].weight.grad, reference[0].weight.grad)
        print("first-layer grad matches:", same)
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
