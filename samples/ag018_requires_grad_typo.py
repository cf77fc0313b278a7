"""AG018: freezing the embedding with the misspelled attribute `require_grad` (no s).
Observed in torch 2.13: silent; it only sets a new Python attribute, requires_grad stays True and the embedding keeps training."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
tokens = torch.randint(0, 10, (32,))
labels = (tokens % 2 == 0).long()
embedding = nn.Embedding(10, 4)
classifier = nn.Linear(4, 2)
for p in embedding.parameters():
    p.require_grad = False  # expect: AG018

params = [p for p in list(embedding.parameters()) + list(classifier.parameters()) if p.requires_grad]
optimizer = torch.optim.SGD(params, lr=0.5)
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(classifier(embedding(tokens)), labels)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
