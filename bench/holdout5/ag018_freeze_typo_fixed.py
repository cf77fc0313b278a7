# source: written for bench/holdout5 (short training program, transfer learning: frozen feature extractor, new head)
import copy

import torch
from torch import nn

torch.manual_seed(34)

features = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
# pretend these weights were loaded from a checkpoint
snapshot = copy.deepcopy(features.state_dict())

for param in features.parameters():
    param.requires_grad = False

classifier = nn.Linear(32, 5)
model = nn.Sequential(features, classifier)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
X = torch.randn(100, 20)
y = torch.randint(0, 5, (100,))

for epoch in range(5):
    for i in range(0, 100, 25):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[i:i + 25]), y[i:i + 25])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")

current = features.state_dict()
changed = any(not torch.equal(v, current[k]) for k, v in snapshot.items())
print("feature extractor changed:", changed)
