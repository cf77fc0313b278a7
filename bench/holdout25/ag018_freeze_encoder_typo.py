# source: written for holdout25 (pattern: linear-probe script freezes the pretrained encoder with p.require_grad = False, a misspelled attribute, so the encoder keeps training)
# symptom: frozen encoder changed: True
"""Linear probing of a 'pretrained' encoder: only the new head should train."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def pretrained_encoder():
    torch.manual_seed(123)
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())


def freeze(module):
    for p in module.parameters():
        p.require_grad = False  # expect: AG018
    module.eval()


def probe_data(n=300):
    x = torch.randn(n, 20)
    y = (x[:, 0] - x[:, 1] > 0).long()
    return x, y


encoder = pretrained_encoder()
freeze(encoder)
head = nn.Linear(32, 2)
model = nn.Sequential(encoder, head)
before = [p.detach().clone() for p in encoder.parameters()]
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

torch.manual_seed(0)
x, y = probe_data()
for epoch in range(5):
    for i in range(0, len(x), 50):
        loss = F.cross_entropy(model(x[i:i + 50]), y[i:i + 50])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")

changed = any(not torch.equal(a, p) for a, p in zip(before, encoder.parameters()))
print("frozen encoder changed:", changed)
