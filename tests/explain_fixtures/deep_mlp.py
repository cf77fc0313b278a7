"""A 200-layer MLP (200 nn.Linear, each followed by nn.ReLU) trained for two steps: explain must stay readable."""
import torch
import torch.nn as nn

torch.manual_seed(0)
layers = []
for _ in range(200):
    layers += [nn.Linear(16, 16), nn.ReLU()]
model = nn.Sequential(*layers)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(4, 16)
for step in range(2):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
