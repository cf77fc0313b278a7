# source: written for bench/holdout17 from RULES.md AG014 (staged fine-tuning: the backbone is unfrozen inside the step, after the forward of the unfreeze epoch's first batch)
# symptom: backbone got a gradient on the unfreeze step: False
"""Fine-tune a 'pretrained' text encoder: head only for one epoch, then unfreeze the backbone."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.EmbeddingBag(200, 32), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 3)

    def forward(self, tokens):
        return self.head(self.backbone(tokens))


def set_backbone_trainable(model, flag):
    for p in model.backbone.parameters():
        p.requires_grad = flag


torch.manual_seed(0)
cfg = {"unfreeze_epoch": 1, "epochs": 2, "lr": 1e-3}
model = Classifier()
set_backbone_trainable(model, False)
optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
batches = [(torch.randint(0, 200, (8, 10)), torch.randint(0, 3, (8,))) for _ in range(3)]
got_grad = None
for epoch in range(cfg["epochs"]):
    for b, (tokens, labels) in enumerate(batches):
        if epoch == cfg["unfreeze_epoch"] and b == 0:
            for p in model.backbone.parameters():
                p.requires_grad = True
        logits = model(tokens)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        if epoch == cfg["unfreeze_epoch"] and b == 0:
            got_grad = model.backbone[1].weight.grad is not None
        optimizer.step()
print("backbone got a gradient on the unfreeze step:", got_grad)
