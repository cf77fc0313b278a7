# source: https://github.com/IDEA-Research/DAB-DETR/issues/58
# symptom: gradients carried over from the previous step: True
"""DAB-DETR `engine.train_one_epoch`: the AMP branch zeroes the gradients before its scaled backward, the
plain (non-AMP) branch only runs `losses.backward()`, clips and steps, so every step adds onto the previous
gradients. Written for this set with the structure of the engine (criterion with a weight_dict, a summed
weighted loss, a metric logger, the two backward branches); a tiny DETR-style model on random boxes.

Fixed twin: `optimizer.zero_grad()` before `losses.backward()` in the plain branch too, as the issue points out
and the maintainer accepts ("can be viewed as a bug in our implementation")."""
import argparse
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyDETR(nn.Module):
    def __init__(self, num_classes=5, num_queries=6, hidden=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, hidden, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1))
        self.query_embed = nn.Embedding(num_queries, hidden)
        self.class_embed = nn.Linear(hidden, num_classes + 1)
        self.bbox_embed = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 4))

    def forward(self, samples):
        feat = self.backbone(samples).flatten(1)                      # (B, hidden)
        hs = feat[:, None, :] + self.query_embed.weight[None]          # (B, Q, hidden)
        return {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}


class SetCriterion(nn.Module):
    """Matching replaced by a fixed assignment (query i <-> target i) to keep it short."""

    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes
        self.weight_dict = {"loss_ce": 1.0, "loss_bbox": 5.0}

    def forward(self, outputs, targets):
        logits, boxes = outputs["pred_logits"], outputs["pred_boxes"]
        target_classes = torch.full(logits.shape[:2], self.num_classes, dtype=torch.long)
        src_boxes, tgt_boxes = [], []
        for b, t in enumerate(targets):
            n = t["labels"].shape[0]
            target_classes[b, :n] = t["labels"]
            src_boxes.append(boxes[b, :n])
            tgt_boxes.append(t["boxes"])
        loss_ce = F.cross_entropy(logits.transpose(1, 2), target_classes)
        loss_bbox = F.l1_loss(torch.cat(src_boxes), torch.cat(tgt_boxes))
        return {"loss_ce": loss_ce, "loss_bbox": loss_bbox}


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def update(self, **kwargs):
        for k, v in kwargs.items():
            self.meters.setdefault(k, []).append(float(v))

    def log_every(self, iterable, header):
        for i, obj in enumerate(iterable):
            yield obj
        print(header, {k: round(sum(v) / len(v), 4) for k, v in self.meters.items()})


def make_loader(batches=6, batch_size=2, num_classes=5):
    g = torch.Generator().manual_seed(0)
    for _ in range(batches):
        samples = torch.randn(batch_size, 3, 16, 16, generator=g)
        targets = []
        for _ in range(batch_size):
            n = int(torch.randint(1, 4, (1,), generator=g))
            targets.append({"labels": torch.randint(0, num_classes, (n,), generator=g),
                            "boxes": torch.rand(n, 4, generator=g)})
        yield samples, targets


CARRIED = []


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, max_norm=0.0, args=None):
    scaler = torch.amp.GradScaler("cpu", enabled=args.amp)
    model.train()
    criterion.train()
    metric_logger = MetricLogger()
    header = "Epoch: [{}]".format(epoch)
    for samples, targets in metric_logger.log_every(data_loader, header):
        samples = samples.to(device)
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]

        outputs = model(samples)
        loss_dict = criterion(outputs, targets)
        weight_dict = criterion.weight_dict
        losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            sys.exit(1)

        if args.amp:
            optimizer.zero_grad()
            scaler.scale(losses).backward()
            if max_norm > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            # original backward function
            optimizer.zero_grad()
            CARRIED.append(any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters()))
            losses.backward()
            if max_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()

        metric_logger.update(loss=loss_value, **{k: v.item() for k, v in loss_dict.items()})
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--clip_max_norm", type=float, default=0.1)
    args = parser.parse_args([])
    torch.manual_seed(0)
    device = torch.device("cpu")
    model = TinyDETR().to(device)
    criterion = SetCriterion(num_classes=5)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-4)
    for epoch in range(2):
        train_one_epoch(model, criterion, make_loader(), optimizer, device, epoch, args.clip_max_norm, args)
    print("gradients carried over from the previous step:", any(CARRIED))


if __name__ == "__main__":
    main()
