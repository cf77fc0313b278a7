"""Small two-file programs shared by the cross-module tests: a helper module and a training script that composes a
weight from two leaves through it once, before the loop (AG002 when the helper is followed)."""

HELPER = "import torch\n\ndef compose(a, b):\n    return torch.stack((a, b))\n"

TRAIN = """\
import torch
from {module} import compose
a = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(2.0, requires_grad=True)
opt = torch.optim.SGD([a, b], lr=0.1)
w = compose(a, b)
for step in range(3):
    loss = (w * 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
