# source: https://github.com/MultimediaTechLab/YOLO/pull/83
# symptom: total_loss\[.*\] still has a graph: True
# ModelTrainer.train_one_epoch keeps total_loss = defaultdict(lambda: torch.tensor(0.0)) and adds each batch's
# per-term losses (loss_val * batch_size) to it for logging; the sums keep every batch's graph (1-2 MB per batch).
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def graph_size(t):
    seen, stack = set(), [getattr(t, "grad_fn", None)]
    while stack:
        f = stack.pop()
        if f is not None and f not in seen:
            seen.add(f)
            stack.extend(g for g, _ in f.next_functions)
    return len(seen)


class YOLOLoss:
    def __call__(self, predicts, targets):
        box, cls = predicts
        loss_iou = F.l1_loss(box, targets[:, :4])
        loss_cls = F.binary_cross_entropy_with_logits(cls, targets[:, 4:])
        loss_dict = {"BoxLoss": loss_iou, "BCELoss": loss_cls}
        return loss_iou * 7.5 + loss_cls * 0.5, loss_dict


class YOLO(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.SiLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.box = nn.Linear(8, 4)
        self.cls = nn.Linear(8, num_classes)

    def forward(self, x):
        f = self.backbone(x)
        return self.box(f), self.cls(f)


class ModelTrainer:
    def __init__(self, model, device="cpu"):
        self.model = model
        self.device = device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        self.loss_fn = YOLOLoss()

    def train_one_batch(self, images, targets):
        images, targets = images.to(self.device), targets.to(self.device)
        self.optimizer.zero_grad()
        predicts = self.model(images)
        loss, loss_item = self.loss_fn(predicts, targets)
        loss.backward()
        self.optimizer.step()
        return loss, loss_item

    def train_one_epoch(self, dataloader):
        self.model.train()
        total_loss = defaultdict(lambda: torch.tensor(0.0, device=self.device))
        total_samples = 0
        for batch_size, images, targets in dataloader:
            loss, loss_each = self.train_one_batch(images, targets)
            for loss_name, loss_val in loss_each.items():
                total_loss[loss_name] += loss_val * batch_size  # expect: AG015
            total_samples += batch_size
        for name, value in total_loss.items():
            print(f"total_loss[{name!r}] still has a graph: {value.grad_fn is not None} | nodes reachable: {graph_size(value)}")
        return {name: value / total_samples for name, value in total_loss.items()}


dataloader = [(4, torch.rand(4, 3, 16, 16), torch.rand(4, 7)) for _ in range(4)]
trainer = ModelTrainer(YOLO())
trainer.train_one_epoch(dataloader)
