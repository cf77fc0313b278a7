# source: https://github.com/deepmodeling/Uni-Mol/issues/173
# symptom: logged loss keeps the graph of every update: True
"""Uni-Mol / Uni-Core: a user's own loss class returns `logging_output = {"loss": loss, ...}` with the
loss tensor itself (Uni-Mol's losses put `loss.data` there). The trainer hands the logging outputs to
`reduce_metrics`, whose meters keep summing them over the log interval, so every update's graph stays
alive and host memory grows with the training rounds. The program prints whether the meter's running
sum still carries autograd history."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum = self.sum + val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class Metrics:
    def __init__(self):
        self.meters = {}

    def log_scalar(self, key, value, weight=1):
        self.meters.setdefault(key, AverageMeter()).update(value, weight)


class ReactionLoss(nn.Module):
    """The user's loss class (Uni-Core `UnicoreLoss` shape)."""

    def forward(self, model, sample):
        logits = model(sample["net_input"])
        loss = F.cross_entropy(logits, sample["target"], reduction="sum")
        sample_size = sample["target"].size(0)
        logging_output = {
            "loss": loss,  # expect: AG015
            "sample_size": sample_size,
            "bsz": sample_size,
        }
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs, metrics):
        loss_sum = sum(log.get("loss", 0) for log in logging_outputs)
        sample_size = sum(log.get("sample_size", 0) for log in logging_outputs)
        metrics.log_scalar("loss", loss_sum / sample_size, sample_size)


class Trainer:
    def __init__(self, model, loss, lr=1e-3, update_freq=2):
        self.model = model
        self.loss = loss
        self.update_freq = update_freq
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.metrics = Metrics()

    def train_step(self, samples):
        self.model.train()
        self.optimizer.zero_grad()
        logging_outputs = []
        for sample in samples:  # gradient accumulation over update_freq micro-batches
            loss, sample_size, logging_output = self.loss(self.model, sample)
            loss.backward()
            logging_outputs.append(logging_output)
        self.optimizer.step()
        self.loss.reduce_metrics(logging_outputs, self.metrics)


def main():
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 5))
    trainer = Trainer(model, ReactionLoss())
    for update in range(20):
        samples = [{"net_input": torch.randn(8, 16), "target": torch.randint(0, 5, (8,))} for _ in range(2)]
        trainer.train_step(samples)
    meter = trainer.metrics.meters["loss"]
    print(f"avg loss {float(meter.avg):.4f} over {meter.count} samples")
    kept = torch.is_tensor(meter.sum) and meter.sum.grad_fn is not None
    print(f"logged loss keeps the graph of every update: {kept}")


if __name__ == "__main__":
    main()
