"""AG012 fixed: the counts start from torch.zeros, so the accumulation is well defined.
Observed in torch 2.13: runs clean; counts equal torch.bincount(labels)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
num_classes = 3
labels = torch.randint(0, num_classes, (200,))
logits = torch.randn(200, num_classes)

counts = torch.zeros(num_classes)
for c in range(num_classes):
    counts[c] += (labels == c).sum()
class_weights = counts.sum() / (num_classes * counts)

criterion = nn.CrossEntropyLoss(weight=class_weights)
loss = criterion(logits, labels)
print(counts, class_weights, loss.item())
