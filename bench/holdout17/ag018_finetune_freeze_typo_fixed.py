# source: written for bench/holdout17 from RULES.md AG018 (transfer learning: a freeze helper misspells requires_grad as an attribute on the backbone parameters)
# symptom: backbone weights changed: True
"""Linear-probe a 'pretrained' feature extractor on a new 3-class vision task; the backbone should stay fixed."""
import torch
import torch.nn as nn


def build_model():
    backbone = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten())
    return nn.Sequential(backbone, nn.Linear(16, 3))


def freeze(module):
    for param in module.parameters():
        param.requires_grad = False
    module.eval()


torch.manual_seed(0)
model = build_model()
backbone, head = model[0], model[1]
freeze(backbone)
before = [p.detach().clone() for p in backbone.parameters()]
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
for step in range(5):
    x, y = torch.randn(8, 3, 24, 24), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(head(backbone(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
changed = any(not torch.equal(b, p) for b, p in zip(before, backbone.parameters()))
print("backbone weights changed:", changed)
