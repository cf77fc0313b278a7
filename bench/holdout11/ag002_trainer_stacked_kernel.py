# source: holdout11 short program (no report)
# symptom: kernel in sync with parameters: False
"""Trainer class for a learnable 1-D smoothing filter: the kernel is stacked from three taps once, in __init__."""
import torch
import torch.nn.functional as F
from dataclasses import dataclass

torch.manual_seed(0)


@dataclass
class Config:
    lr: float = 0.05
    steps: int = 30
    length: int = 64


class FilterTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.left = torch.nn.Parameter(torch.tensor(0.1))
        self.mid = torch.nn.Parameter(torch.tensor(0.5))
        self.right = torch.nn.Parameter(torch.tensor(0.1))
        self.opt = torch.optim.SGD([self.left, self.mid, self.right], lr=cfg.lr)
        self.kernel = torch.stack([self.left, self.mid, self.right])  # expect: AG002

    def train_step(self, noisy, clean):
        out = F.conv1d(noisy.view(1, 1, -1), self.kernel.view(1, 1, 3), padding=1).view(-1)
        loss = F.mse_loss(out, clean)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def fit(self):
        t = torch.linspace(0, 6.28, self.cfg.length)
        clean = torch.sin(t)
        for i in range(self.cfg.steps):
            noisy = clean + 0.3 * torch.randn_like(clean)
            loss = self.train_step(noisy, clean)
        return loss


trainer = FilterTrainer(Config())
print(f"final loss {trainer.fit():.4f}")
taps = torch.stack([trainer.left, trainer.mid, trainer.right]).detach()
print("kernel in sync with parameters:", torch.allclose(trainer.kernel.detach(), taps))
