# source: written for bench/holdout16 from RULES.md AG001 (trainer class re-initialises a classifier head through a helper before fine-tuning)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Fine-tune a small CNN on a new label set: the head is re-initialised by a helper the trainer calls
(fixed: the re-initialisation runs under torch.no_grad())."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallNet(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.head = nn.Linear(8 * 16, n_classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def reset_head(layer, std=0.01):
    with torch.no_grad():
        layer.weight.normal_(0.0, std)
        layer.bias.zero_()


class FineTuner:
    def __init__(self, model, lr=1e-2):
        self.model = model
        reset_head(self.model.head)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)

    def step(self, images, labels):
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(images), labels)
        loss.backward()
        self.opt.step()
        return loss.item()


tuner = FineTuner(SmallNet(n_classes=5))
for it in range(5):
    x, y = torch.randn(16, 3, 16, 16), torch.randint(0, 5, (16,))
    print(f"iter {it} loss {tuner.step(x, y):.4f}")
