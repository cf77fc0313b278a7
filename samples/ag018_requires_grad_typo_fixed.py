"""AG018 fixed: `requires_grad` spelled right, so the embedding is frozen and left out of the optimizer.
Observed in torch 2.13: runs clean; the embedding weights get no gradient and do not change."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
tokens = torch.randint(0, 10, (32,))
labels = (tokens % 2 == 0).long()
embedding = nn.Embedding(10, 4)
classifier = nn.Linear(4, 2)
for p in embedding.parameters():
    p.requires_grad = False

params = [p for p in list(embedding.parameters()) + list(classifier.parameters()) if p.requires_grad]
optimizer = torch.optim.SGD(params, lr=0.5)
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(classifier(embedding(tokens)), labels)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
