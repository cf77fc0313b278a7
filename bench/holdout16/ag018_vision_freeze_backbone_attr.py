# source: written for bench/holdout16 from RULES.md AG018 (transfer learning: a freeze helper sets p.require_grad on the backbone parameters)
# symptom: backbone frozen: False
"""Linear probing on top of a "pre-trained" conv backbone: only the new head should train."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def freeze(module):
    for p in module.parameters():
        p.require_grad = False  # expect: AG018


backbone = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
head = nn.Linear(16, 6)
model = nn.Sequential(backbone, head)
freeze(backbone)
before = copy.deepcopy(backbone.state_dict())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 6, (8,))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
unchanged = all(torch.equal(before[k], v) for k, v in backbone.state_dict().items())
print(f"backbone frozen: {unchanged}")
