# source: https://github.com/jokester-zzz/SSA-SC/issues/2
# symptom: epoch_loss\['total'\] still has a graph: True
# SSA-SC (inherited from LMSCNet) accumulates its per-key training losses with the loss tensors themselves,
# loss[key] rather than loss[key].item(), so GPU memory rises continuously; the maintainer agreed to use .item().
import torch
import torch.nn as nn
import torch.nn.functional as F


class SSC(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.seg = nn.Conv3d(1, n_classes, 3, padding=1)
        self.completion = nn.Conv3d(n_classes, n_classes, 1)

    def forward(self, data):
        sem = self.seg(data["occupancy"])
        return {"pred_semantic_1_1": self.completion(sem), "pred_seg": sem}

    def compute_loss(self, scores, data):
        loss_completion = F.cross_entropy(scores["pred_semantic_1_1"], data["label_1_1"])
        loss_seg = F.cross_entropy(scores["pred_seg"], data["label_1_1"])
        return {"total": loss_completion + loss_seg, "semantic_1_1": loss_completion, "seg": loss_seg}


def train(model, optimizer, dataset, epochs=1):
    for epoch in range(1, epochs + 1):
        epoch_loss = {"total": 0, "semantic_1_1": 0, "seg": 0}
        for t, data in enumerate(dataset):
            scores = model(data)
            loss = model.compute_loss(scores, data)
            optimizer.zero_grad()
            loss["total"].backward()
            optimizer.step()
            for l_key in loss:
                epoch_loss[l_key] += loss[l_key]  # expect: AG015
        print("epoch", epoch, {k: round(float(v) / len(dataset), 4) for k, v in epoch_loss.items()})
        print("epoch_loss['total'] still has a graph:", getattr(epoch_loss["total"], "grad_fn", None) is not None)


torch.manual_seed(0)
model = SSC()
dataset = [{"occupancy": torch.randn(1, 1, 4, 4, 4), "label_1_1": torch.randint(0, 4, (1, 4, 4, 4))} for _ in range(3)]
train(model, torch.optim.Adam(model.parameters(), lr=1e-3), dataset)
