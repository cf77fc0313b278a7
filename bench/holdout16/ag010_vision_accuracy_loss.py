# source: written for bench/holdout16 from RULES.md AG010 (helper turns the error rate into the loss: argmax + comparison, then backward in a trainer method)
# symptom: does not require grad and does not have a grad_fn
"""Digit-like classification where the user optimises the error rate directly."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def error_rate(logits, targets):
    preds = logits.argmax(dim=1)
    return 1.0 - (preds == targets).float().mean()


class Trainer:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def train_batch(self, x, y):
        self.optimizer.zero_grad()
        loss = error_rate(self.model(x), y)
        loss.backward()  # expect: AG010
        self.optimizer.step()
        return loss.item()


trainer = Trainer(nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)))
for it in range(3):
    x, y = torch.randn(32, 8, 8), torch.randint(0, 10, (32,))
    print(f"iter {it} error {trainer.train_batch(x, y):.3f}")
