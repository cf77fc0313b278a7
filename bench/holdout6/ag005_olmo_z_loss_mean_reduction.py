# source: https://github.com/allenai/OLMo/pull/523
# symptom: grad can be implicitly created only for scalar outputs
"""OLMo's `cross_entropy_loss(..., reduction="mean", compute_z_loss=True)` (before the PR): the z-loss branch
divides the per-token `logsumexp(logits) ** 2` by the label mask instead of masking and averaging it, so the
"mean" z-loss stays one value per token; the trainer's `train_batch` adds it to the CE loss and calls backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def cross_entropy_loss(logits, labels, ignore_index=-100, reduction="mean", compute_z_loss=False):
    loss = F.cross_entropy(logits, labels, ignore_index=ignore_index, reduction=reduction)
    if not compute_z_loss:
        return loss, None
    z_squared = logits.logsumexp(-1).pow(2)
    if reduction == "mean":
        z_squared = z_squared / (labels != ignore_index)
    elif reduction == "sum":
        z_squared = (z_squared * (labels != ignore_index)).sum()
    z_loss = 1e-4 * z_squared
    return loss, z_loss


class TinyOLMo(nn.Module):
    def __init__(self, vocab=64, d_model=32):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.block = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                   nn.Linear(4 * d_model, d_model))
        self.ff_out = nn.Linear(d_model, vocab, bias=False)

    def forward(self, input_ids):
        h = self.wte(input_ids)
        h = h + self.block(h)
        return self.ff_out(h)


class TrainConfig:
    softmax_auxiliary_loss = True
    device_train_microbatch_size = 2


class Trainer:
    def __init__(self, cfg, model, optim):
        self.cfg, self.model, self.optim = cfg, model, optim

    def get_labels(self, batch):
        labels = batch["input_ids"].clone()
        return labels[..., 1:].contiguous()

    def model_forward(self, batch, compute_z_loss=False):
        logits = self.model(batch["input_ids"])
        logits_for_loss = logits[..., :-1, :].contiguous().view(-1, logits.size(-1))
        labels = self.get_labels(batch).view(-1)
        ce_loss, z_loss = cross_entropy_loss(logits_for_loss, labels, compute_z_loss=compute_z_loss)
        return ce_loss, z_loss, logits

    def split_batch(self, batch):
        size = self.cfg.device_train_microbatch_size
        return [{"input_ids": ids} for ids in batch["input_ids"].split(size)]

    def train_batch(self, batch):
        micro_batches = self.split_batch(batch)
        ce_batch_loss = torch.tensor(0.0)
        z_batch_loss = torch.tensor(0.0)
        for micro_batch in micro_batches:
            ce_loss, z_loss, logits = self.model_forward(micro_batch, compute_z_loss=self.cfg.softmax_auxiliary_loss)
            ce_loss = ce_loss / len(micro_batches)
            ce_batch_loss += ce_loss.detach()
            if self.cfg.softmax_auxiliary_loss:
                z_loss = z_loss / len(micro_batches)
                loss = ce_loss + z_loss
                z_batch_loss += z_loss.detach().sum()
            else:
                loss = ce_loss
            del logits
            loss.backward()  # expect: AG005
        return ce_batch_loss, z_batch_loss

    def train_step(self, batch):
        self.optim.zero_grad(set_to_none=True)
        ce_batch_loss, z_batch_loss = self.train_batch(batch)
        self.optim.step()
        return {"train/CrossEntropyLoss": ce_batch_loss.item(), "train/ZLoss": z_batch_loss.item()}


model = TinyOLMo()
trainer = Trainer(TrainConfig(), model, torch.optim.AdamW(model.parameters(), lr=1e-3))
for step in range(2):
    metrics = trainer.train_step({"input_ids": torch.randint(0, 64, (4, 10))})
    print(step, {k: round(v, 4) for k, v in metrics.items()})
