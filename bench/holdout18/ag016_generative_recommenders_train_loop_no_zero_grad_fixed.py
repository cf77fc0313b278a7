# source: https://github.com/meta-recsys/generative-recommenders/pull/332
# symptom: gradients carried over from the previous step: True
"""generative-recommenders `dlrm_v3/train/utils.py` `train_loop`: for each sample the DLRM-HSTU model returns its
auxiliary losses and the multitask predictions, `sum(aux_losses.values()).backward()` and `optimizer.step()` follow,
and the metrics logger is updated, but the optimizer is never zeroed, so every step applies the sum of all earlier
batches' gradients (pull request #332, "Fix missing optimizer's zero_grad()"). The model here is a small stand-in for
DlrmHSTU: embedding tables, a user-history encoder and one head per task, on dense tensors instead of jagged ones.

Fixed as the pull request does: `optimizer.zero_grad()` at the start of each sample's step, before the forward."""
from typing import Dict, Optional

import torch
from torch import nn
from torch.optim.optimizer import Optimizer


class Sample:
    def __init__(self, uih_features_kjt, candidates_features_kjt, labels):
        self.uih_features_kjt = uih_features_kjt
        self.candidates_features_kjt = candidates_features_kjt
        self.labels = labels

    def to(self, device):
        self.uih_features_kjt = self.uih_features_kjt.to(device)
        self.candidates_features_kjt = self.candidates_features_kjt.to(device)
        self.labels = self.labels.to(device)


class DlrmHSTU(nn.Module):
    def __init__(self, num_items=50, dim=16, num_tasks=2):
        super().__init__()
        self.item_embedding = nn.Embedding(num_items, dim)
        self.uih_encoder = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=32, batch_first=True,
                                                      dropout=0.0)
        self.task_heads = nn.ModuleList([nn.Linear(2 * dim, 1) for _ in range(num_tasks)])
        self.num_tasks = num_tasks
        self._labels: Optional[torch.Tensor] = None

    def set_labels(self, labels):
        self._labels = labels

    def forward(self, uih_features_kjt, candidates_features_kjt):
        user = self.uih_encoder(self.item_embedding(uih_features_kjt)).mean(dim=1)
        cand = self.item_embedding(candidates_features_kjt)
        x = torch.cat([user, cand], dim=-1)
        logits = torch.cat([head(x) for head in self.task_heads], dim=-1)
        labels = self._labels
        weights = torch.ones_like(labels)
        aux_losses = {
            f"task_{t}": nn.functional.binary_cross_entropy_with_logits(logits[:, t], labels[:, t])
            for t in range(self.num_tasks)
        }
        return None, None, aux_losses, torch.sigmoid(logits), labels, weights


class MetricsLogger:
    def __init__(self):
        self.correct = 0.0
        self.count = 0

    def update(self, predictions, labels, weights):
        self.correct += float(((predictions.detach() > 0.5).float() == labels).float().sum())
        self.count += labels.numel()

    def compute_and_log(self, additional_logs: Optional[Dict[str, Dict[str, torch.Tensor]]] = None):
        msg = "accuracy {:.3f}".format(self.correct / max(self.count, 1))
        if additional_logs:
            msg += " " + " ".join("{} {:.4f}".format(k, float(v)) for k, v in additional_logs["losses"].items())
        print(msg)


grads_carried = False


def train_loop(
    rank: int,
    model: torch.nn.Module,
    dataloader,
    optimizer: Optimizer,
    metric_logger: MetricsLogger,
    device: torch.device,
    num_epochs: int,
    num_batches: Optional[int] = None,
    metric_log_frequency: int = 1,
) -> None:
    global grads_carried
    model = model.train()
    batch_idx: int = 0

    for _ in range(num_epochs):
        for sample in dataloader:
            optimizer.zero_grad()
            sample.to(device)
            model.set_labels(sample.labels)
            (
                _,
                _,
                aux_losses,
                mt_target_preds,
                mt_target_labels,
                mt_target_weights,
            ) = model.forward(
                sample.uih_features_kjt,
                sample.candidates_features_kjt,
            )
            grads_carried = grads_carried or any(
                p.grad is not None and bool(p.grad.abs().sum() > 0) for p in model.parameters())
            sum(aux_losses.values()).backward()
            optimizer.step()
            metric_logger.update(
                predictions=mt_target_preds,
                labels=mt_target_labels,
                weights=mt_target_weights,
            )
            if batch_idx % metric_log_frequency != 0:
                metric_logger.compute_and_log(
                    additional_logs={
                        "losses": aux_losses,
                    }
                )
            batch_idx += 1
            if num_batches is not None and batch_idx >= num_batches:
                break
        if num_batches is not None and batch_idx >= num_batches:
            break


torch.manual_seed(0)
samples = [Sample(torch.randint(0, 50, (8, 6)), torch.randint(0, 50, (8,)), torch.randint(0, 2, (8, 2)).float())
           for _ in range(4)]
model = DlrmHSTU()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_loop(0, model, samples, optimizer, MetricsLogger(), torch.device("cpu"), num_epochs=2, metric_log_frequency=2)
print("gradients carried over from the previous step:", grads_carried)
