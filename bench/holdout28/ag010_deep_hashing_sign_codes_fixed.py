# source: written for holdout28 (pattern: deep-hashing model binarises its codes with torch.sign inside forward during training, so the pairwise similarity loss has zero gradient everywhere)
# symptom: all gradients zero: True
"""Supervised deep hashing: learn 16-bit binary codes whose inner products
reflect class similarity.

Fixed: training uses the tanh relaxation of the codes (sign is only applied at
retrieval time, under no_grad), so the loss has a gradient.
"""
import torch
import torch.nn as nn


class HashNet(nn.Module):
    def __init__(self, d_in=24, bits=16):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU())
        self.hash_layer = nn.Linear(64, bits)
        self.bits = bits

    def forward(self, x):
        return torch.tanh(self.hash_layer(self.features(x)))


def pairwise_similarity_loss(codes, labels, bits):
    sim = (labels[:, None] == labels[None, :]).float() * 2 - 1
    inner = codes @ codes.t() / bits
    return ((inner - sim) ** 2).mean()


torch.manual_seed(0)
protos = torch.randn(6, 24) * 2
labels_all = torch.randint(0, 6, (480,))
data = protos[labels_all] + torch.randn(480, 24)

net = HashNet()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
all_zero = True
for epoch in range(3):
    for i in range(0, 480, 48):
        x, y = data[i:i + 48], labels_all[i:i + 48]
        codes = net(x)
        loss = pairwise_similarity_loss(codes, y, net.bits)
        optimizer.zero_grad()
        loss.backward()
        all_zero &= all(p.grad is None or not p.grad.any() for p in net.parameters())
        optimizer.step()
    print(f"epoch {epoch} similarity loss {loss.item():.4f}")

with torch.no_grad():
    codes = torch.sign(net.hash_layer(net.features(data[:100])))
    same = (labels_all[:100, None] == labels_all[None, :100])
    agree = (codes @ codes.t() / net.bits)
    print(f"mean code agreement same/diff class: {agree[same].mean():.3f} / {agree[~same].mean():.3f}")
print(f"all gradients zero: {all_zero}")
