"""AG012 (seed 003 section 8): class counts accumulated into torch.Tensor(n), whose memory is never initialised.
Reported at the creation line. Observed in torch 2.13: silent; fresh memory often reads 0 (right by luck), NaN under fill_uninitialized_memory."""
import torch
import torch.nn as nn

torch.manual_seed(0)
num_classes = 3
labels = torch.randint(0, num_classes, (200,))
logits = torch.randn(200, num_classes)

counts = torch.Tensor(num_classes)  # expect: AG012
for c in range(num_classes):
    counts[c] += (labels == c).sum()
class_weights = counts.sum() / (num_classes * counts)

criterion = nn.CrossEntropyLoss(weight=class_weights)
loss = criterion(logits, labels)
print(counts, class_weights, loss.item())
