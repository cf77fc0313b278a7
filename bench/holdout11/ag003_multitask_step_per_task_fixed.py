# source: holdout11 short program (no report)
# symptom: modified by an inplace operation
"""Multi-task trainer: one shared forward, the task losses are summed (weighted) and backpropagated once per step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, 4)
        self.reg_head = nn.Linear(32, 1)

    def forward(self, x):
        z = self.encoder(x)
        return self.cls_head(z), self.reg_head(z).squeeze(-1)


class Trainer:
    def __init__(self, model, weights=(1.0, 0.5)):
        self.model = model
        self.weights = weights
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def task_losses(self, x, y_cls, y_reg):
        logits, pred = self.model(x)
        return [F.cross_entropy(logits, y_cls), F.mse_loss(pred, y_reg)]

    def train_step(self, batch):
        losses = self.task_losses(*batch)
        total = sum(w * loss for w, loss in zip(self.weights, losses))
        self.optimizer.zero_grad()
        total.backward()
        self.optimizer.step()
        return [l.item() for l in losses]


trainer = Trainer(MultiTaskNet())
for epoch in range(3):
    batch = (torch.randn(32, 10), torch.randint(0, 4, (32,)), torch.randn(32))
    print(epoch, trainer.train_step(batch))
