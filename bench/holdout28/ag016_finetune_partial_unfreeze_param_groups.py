# source: written for holdout28 (pattern: fine-tuning function with a frozen stem and per-group learning rates runs backward and optimizer.step() every batch but never clears the gradients)
# symptom: grads accumulate across steps: True
"""Fine-tune a "pretrained" 3-block MLP on a new 3-class task: the stem stays
frozen, the last block gets a small learning rate, the new head a large one.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(20, 64), nn.ReLU())
        self.block = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.block(self.stem(x)))


def prepare_for_finetuning(model, n_classes):
    model.stem.requires_grad_(False)
    model.head = nn.Linear(64, n_classes)
    return torch.optim.SGD([
        {"params": model.block.parameters(), "lr": 1e-3},
        {"params": model.head.parameters(), "lr": 1e-2},
    ], momentum=0.9)


def finetune(model, optimizer, xs, ys, epochs=3, batch=32):
    accumulated = False
    for epoch in range(epochs):
        for i in range(0, len(xs), batch):
            loss = F.cross_entropy(model(xs[i:i + batch]), ys[i:i + batch])
            accumulated |= model.head.weight.grad is not None and bool(model.head.weight.grad.any())
            loss.backward()
            optimizer.step()  # expect: AG016
        print(f"epoch {epoch} loss {loss.item():.4f}")
    return accumulated


torch.manual_seed(0)
model = Backbone()
optimizer = prepare_for_finetuning(model, n_classes=3)
xs = torch.randn(256, 20)
ys = (xs[:, :3] * torch.tensor([1.0, -1.0, 0.5])).argmax(1)
accumulated = finetune(model, optimizer, xs, ys)
print(f"grads accumulate across steps: {accumulated}")
