# source: written for holdout25 (pattern: user optimises the validation metric directly: an error rate computed from argmax predictions is used as the training loss)
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
"""Digit-like classification on synthetic blobs; the trainer minimises the error rate.

Fixed: the trainer minimises cross-entropy; the error rate is only reported."""
import torch
import torch.nn as nn
import torch.nn.functional as F

N_CLASSES, D = 5, 12


def make_blobs(n=500, seed=0):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(N_CLASSES, D, generator=g) * 3
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    x = centers[y] + torch.randn(n, D, generator=g)
    return x, y


class Trainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def error_rate(self, logits, y):
        preds = logits.argmax(dim=1)
        return (preds != y).float().mean()

    def criterion(self, logits, y):
        return F.cross_entropy(logits, y)

    def fit(self, x, y, epochs=5, bs=50):
        for epoch in range(epochs):
            perm = torch.randperm(x.size(0))
            for i in range(0, x.size(0), bs):
                idx = perm[i:i + bs]
                logits = self.model(x[idx])
                loss = self.criterion(logits, y[idx])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            print(f"epoch {epoch}: loss {loss.item():.3f} train error {self.error_rate(logits, y[idx]).item():.3f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = make_blobs()
    model = nn.Sequential(nn.Linear(D, 32), nn.ReLU(), nn.Linear(32, N_CLASSES))
    Trainer(model).fit(x, y)
