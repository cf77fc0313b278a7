# source: written for bench/holdout17 from RULES.md AG002 (script: learnable per-band filters kept as a ParameterList, stacked into one bank before the epoch loop)
# symptom: filter bank stale after step: True
"""Learnable FIR filterbank front-end for keyword spotting on random 'audio'."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_bands, taps, n_classes = 6, 31, 4
filters = nn.ParameterList([nn.Parameter(torch.randn(taps) * 0.1) for _ in range(n_bands)])
classifier = nn.Linear(n_bands, n_classes)
optimizer = torch.optim.Adam(list(filters.parameters()) + list(classifier.parameters()), lr=1e-2)


wave = torch.randn(32, 1, 800)
labels = torch.randint(0, n_classes, (32,))
stale = False
for epoch in range(3):
    for i in range(0, 32, 8):
        x = wave[i:i + 8]
        bank = torch.stack(list(filters)).unsqueeze(1)
        stale = stale or not torch.equal(bank.detach().squeeze(1), torch.stack([f.detach() for f in filters]))
        energy = F.conv1d(x, bank, padding=taps // 2).pow(2).mean(-1)
        loss = F.cross_entropy(classifier(torch.log1p(energy)), labels[i:i + 8])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

print("filter bank stale after step:", stale)
