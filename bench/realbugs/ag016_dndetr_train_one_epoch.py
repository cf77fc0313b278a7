# source: https://github.com/IDEA-Research/DN-DETR/issues/19
# symptom: gradients accumulated across \d+ steps: True
# engine.py train_one_epoch: the non-AMP branch does losses.backward(), clips and optimizer.step() but never
# optimizer.zero_grad(), so each step applies the (clipped) sum of all gradients computed so far.
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GradWatch:
    """Records, for one parameter, each backward's own gradient (tensor hook) and the .grad left after it."""

    def __init__(self, param):
        self.param, self.fresh, self.after = param, [], []
        param.register_hook(lambda g: self.fresh.append(g.clone()))

    def record(self):
        self.after.append(self.param.grad.clone())

    def report(self):
        accumulated = torch.allclose(self.after[-1], torch.stack(self.fresh).sum(0)) and len(self.fresh) > 1
        print(f"gradients accumulated across {len(self.fresh)} steps: {accumulated}")


class SetCriterion(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight_dict = {"loss_ce": 1.0, "loss_bbox": 5.0}

    def forward(self, outputs, targets):
        return {"loss_ce": F.cross_entropy(outputs["pred_logits"], targets["labels"]),
                "loss_bbox": F.l1_loss(outputs["pred_boxes"], targets["boxes"])}


class DETR(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.backbone = nn.Linear(16, 32)
        self.class_embed = nn.Linear(32, num_classes)
        self.bbox_embed = nn.Linear(32, 4)

    def forward(self, samples):
        h = torch.relu(self.backbone(samples))
        return {"pred_logits": self.class_embed(h), "pred_boxes": self.bbox_embed(h).sigmoid()}


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, max_norm=0, args=None, watch=None):
    model.train()
    criterion.train()
    for samples, targets in data_loader:
        samples = samples.to(device)
        targets = {k: v.to(device) for k, v in targets.items()}
        outputs = model(samples)
        loss_dict = criterion(outputs, targets)
        weight_dict = criterion.weight_dict
        losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            sys.exit(1)
        if args["amp"]:
            raise NotImplementedError("CPU reproduction runs the original (non-AMP) backward")
        else:
            # original backward function
            losses.backward()
            if max_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()  # expect: AG016
        watch.record()
        print(f"Epoch: [{epoch}] loss {loss_value:.4f}")


model = DETR()
criterion = SetCriterion()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-4)
data_loader = [(torch.randn(8, 16), {"labels": torch.randint(0, 4, (8,)), "boxes": torch.rand(8, 4)}) for _ in range(3)]
watch = GradWatch(model.class_embed.weight)
train_one_epoch(model, criterion, data_loader, optimizer, "cpu", 0, max_norm=0, args={"amp": False}, watch=watch)
watch.report()
