# source: written for holdout28 (pattern: fine-tuning helper freezes the bottom layers of a pretrained stack with p.requires_grads = False, a misspelled attribute, so those layers keep training)
# symptom: frozen layers changed: True
"""Layer-wise fine-tuning of a "pretrained" 4-layer residual MLP: freeze the two
bottom layers, train the rest with a new head.

Fixed: the helper sets p.requires_grad = False (correct spelling).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualStack(nn.Module):
    def __init__(self, dim=24, depth=4, n_out=6):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.head = nn.Linear(dim, n_out)

    def forward(self, x):
        for layer in self.layers:
            x = x + F.gelu(layer(x))
        return self.head(x)


def freeze_bottom_layers(model, n_frozen):
    for layer in model.layers[:n_frozen]:
        for p in layer.parameters():
            p.requires_grad = False


def snapshot(modules):
    return [p.detach().clone() for m in modules for p in m.parameters()]


torch.manual_seed(0)
model = ResidualStack()
model.head = nn.Linear(24, 2)
freeze_bottom_layers(model, n_frozen=2)
before = snapshot(model.layers[:2])
optimizer = torch.optim.AdamW((p for p in model.parameters() if p.requires_grad), lr=1e-3)

x = torch.randn(320, 24)
y = (x[:, 0] * x[:, 1] > 0).long()
for epoch in range(3):
    for i in range(0, 320, 32):
        loss = F.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

after = snapshot(model.layers[:2])
changed = any(not torch.equal(a, b) for a, b in zip(before, after))
print(f"frozen layers changed: {changed}")
