# source: written for bench/holdout17 from RULES.md AG013 (image preprocessing helper builds its channel mean/std with square brackets on torch.tensor)
# symptom: object is not subscriptable
"""Fine-tune a small CNN on random RGB crops with ImageNet-style normalisation done by hand."""
import torch
import torch.nn as nn


def normalize(batch):
    mean = torch.tensor[0.485, 0.456, 0.406].view(1, 3, 1, 1)  # expect: AG013
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    return (batch - mean) / std


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for step in range(3):
    images = torch.rand(8, 3, 32, 32)
    labels = torch.randint(0, 4, (8,))
    loss = nn.functional.cross_entropy(model(normalize(images)), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, round(loss.item(), 4))
