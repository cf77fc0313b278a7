# source: https://github.com/aramis-lab/clinicadl/pull/653
# symptom: grad can be implicitly created only for scalar outputs
"""Twin (the pull request's fix: `"none"` removed from the implemented reductions, so a config can only ask for
`"mean"` or `"sum"`; the user's config takes `"mean"`). ClinicaDL `losses/config.py` + `losses/factory.py`: the loss
config listed `"none"` among the implemented
reductions, `get_loss_function(config)` built `torch.nn.MSELoss(reduction="none")` from a user config that picked it,
and the trainer's `loss.backward()` then got a per-voxel loss tensor (the pull request: "It is not possible to call
`.backward()` on non-scalar")."""
from dataclasses import dataclass, field
from enum import Enum

import torch
import torch.nn as nn

torch.manual_seed(0)


class ImplementedLoss(str, Enum):
    """Implemented losses in ClinicaDL."""

    CROSS_ENTROPY = "CrossEntropyLoss"
    BCE_LOGITS = "BCEWithLogitsLoss"
    L1 = "L1Loss"
    MSE = "MSELoss"
    HUBER = "HuberLoss"

    @classmethod
    def _missing_(cls, value):
        raise ValueError(f"{value} is not implemented. Implemented losses are: " + ", ".join([repr(m.value) for m in cls]))


class Reduction(str, Enum):
    """Supported reduction method in ClinicaDL."""

    MEAN = "mean"
    SUM = "sum"

    @classmethod
    def _missing_(cls, value):
        raise ValueError(f"{value} is not implemented. Implemented reductions are: " + ", ".join([repr(m.value) for m in cls]))


@dataclass
class LossConfig:
    """Config class to configure the loss function."""

    loss: ImplementedLoss = ImplementedLoss.MSE
    reduction: Reduction = Reduction.MEAN
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self.loss = ImplementedLoss(self.loss)
        self.reduction = Reduction(self.reduction)


def get_loss_function(config: LossConfig):
    """Factory function to get a loss function from PyTorch."""
    loss_class = getattr(torch.nn, config.loss.value)
    loss = loss_class(reduction=config.reduction.value, **config.extra)
    return loss, config


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv3d(1, 4, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(nn.ConvTranspose3d(4, 1, 4, stride=2, padding=1))

    def forward(self, x):
        return self.decoder(self.encoder(x))


class Trainer:
    def __init__(self, model, loss_config, lr=1e-3):
        self.model = model
        self.criterion, self.loss_config = get_loss_function(loss_config)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def compute_loss(self, images):
        reconstruction = self.model(images)
        return self.criterion(reconstruction, images)

    def train(self, loader, epochs=1):
        for epoch in range(epochs):
            for i, images in enumerate(loader):
                self.optimizer.zero_grad()
                loss = self.compute_loss(images)
                loss.backward()
                self.optimizer.step()
                print(f"epoch {epoch} batch {i} | loss {loss.item():.4f}")


# user's maps.json / training config: an MSE reconstruction loss, reduction chosen from the documented choices
config = LossConfig(loss="MSELoss", reduction="mean")
trainer = Trainer(AutoEncoder(), config)
trainer.train([torch.rand(2, 1, 8, 8, 8) for _ in range(2)])
