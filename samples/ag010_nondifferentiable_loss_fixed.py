"""AG010 fixed: train on cross-entropy of the logits; the error rate is only reported.
Observed in torch 2.13: runs clean; the weights get non-zero gradients."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(32, 4)
labels = (x[:, 0] > 0).long()
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(3):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    error_rate = (logits.argmax(dim=1) != labels).float().mean().item()
    print(step, loss.item(), error_rate)
