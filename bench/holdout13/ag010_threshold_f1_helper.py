# source: holdout13 short program (no report)
# symptom: does not require grad and does not have a grad_fn
"""Multi-label text classifier (EmbeddingBag over token ids) trained to maximise F1 directly, with the F1 loss in a
helper called from the loop."""
import torch
import torch.nn as nn


class BagClassifier(nn.Module):
    def __init__(self, vocab=200, dim=32, n_labels=5):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.fc = nn.Linear(dim, n_labels)

    def forward(self, ids, offsets):
        return self.fc(self.bag(ids, offsets))


def f1_loss(logits, targets, eps=1e-8):
    preds = (torch.sigmoid(logits) > 0.5).float()
    tp = (preds * targets).sum()
    fp = (preds * (1 - targets)).sum()
    fn = ((1 - preds) * targets).sum()
    return 1 - 2 * tp / (2 * tp + fp + fn + eps)


torch.manual_seed(0)
docs = [torch.randint(0, 200, (int(torch.randint(3, 15, ())),)) for _ in range(128)]
targets = (torch.rand(128, 5) < 0.3).float()
model = BagClassifier()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for start in range(0, 128, 32):
        batch = docs[start:start + 32]
        offsets = torch.tensor([0] + [len(d) for d in batch[:-1]]).cumsum(0)
        opt.zero_grad()
        loss = f1_loss(model(torch.cat(batch), offsets), targets[start:start + 32])
        loss.backward()  # expect: AG010
        opt.step()
    print(f"epoch {epoch} 1-F1 {loss.item():.4f}")
