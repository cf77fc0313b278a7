"""A small but complete training script (about 200 lines) for the audit benchmark: argparse, a synthetic dataset,
a residual MLP, AdamW with warm-up and cosine decay, gradient clipping, evaluation, metrics and a checkpoint.
Its training loop runs 10 steps; it is correct code, so an audit must find nothing in it."""
from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    features: int = 32
    hidden: int = 64
    classes: int = 5
    blocks: int = 3
    dropout: float = 0.1
    batch_size: int = 16
    steps: int = 10
    warmup: int = 2
    lr: float = 3e-3
    weight_decay: float = 0.01
    clip: float = 1.0
    eval_every: int = 5
    seed: int = 0
    checkpoint: str = "checkpoint.pt"


def parse_args() -> Config:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=Config.steps)
    parser.add_argument("--lr", type=float, default=Config.lr)
    parser.add_argument("--batch-size", type=int, default=Config.batch_size)
    parser.add_argument("--seed", type=int, default=Config.seed)
    parser.add_argument("--checkpoint", default=Config.checkpoint)
    args = parser.parse_args()
    return Config(steps=args.steps, lr=args.lr, batch_size=args.batch_size, seed=args.seed, checkpoint=args.checkpoint)


class Blobs(Dataset):
    """Gaussian blobs: one centre per class, points scattered around it."""

    def __init__(self, count: int, features: int, classes: int, seed: int):
        generator = torch.Generator().manual_seed(seed)
        self.centres = torch.randn(classes, features, generator=generator) * 3
        self.labels = torch.randint(0, classes, (count,), generator=generator)
        noise = torch.randn(count, features, generator=generator)
        self.points = self.centres[self.labels] + noise

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int):
        return self.points[index], self.labels[index]


class ResidualBlock(nn.Module):
    def __init__(self, width: int, dropout: float):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.inner = nn.Linear(width, width * 2)
        self.outer = nn.Linear(width * 2, width)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        h = F.gelu(self.inner(h))
        h = self.dropout(self.outer(h))
        return x + h


class Classifier(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.embed = nn.Linear(cfg.features, cfg.hidden)
        self.blocks = nn.ModuleList(ResidualBlock(cfg.hidden, cfg.dropout) for _ in range(cfg.blocks))
        self.head_norm = nn.LayerNorm(cfg.hidden)
        self.head = nn.Linear(cfg.hidden, cfg.classes)
        self.register_buffer("seen", torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        if self.training:
            self.seen += x.shape[0]
        return self.head(self.head_norm(h))


def learning_rate(step: int, cfg: Config) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * progress))


def make_optimizer(model: nn.Module, cfg: Config) -> torch.optim.Optimizer:
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        (no_decay if parameter.ndim < 2 or "norm" in name else decay).append(parameter)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr)


class Meter:
    """Running mean of plain numbers (never tensors: a tensor would keep its graph alive)."""

    def __init__(self):
        self.total = 0.0
        self.count = 0

    def add(self, value: float, n: int = 1) -> None:
        self.total += value * n
        self.count += n

    @property
    def mean(self) -> float:
        return self.total / max(1, self.count)


@torch.no_grad()
def evaluate(model: nn.Module, loader: DataLoader) -> tuple[float, float]:
    model.eval()
    losses, correct, seen = Meter(), 0, 0
    for points, labels in loader:
        logits = model(points)
        losses.add(F.cross_entropy(logits, labels).item(), len(labels))
        correct += (logits.argmax(dim=1) == labels).sum().item()
        seen += len(labels)
    model.train()
    return losses.mean, correct / max(1, seen)


def batches(loader: DataLoader):
    """Cycle through the loader forever: the step count, not the epochs, ends training."""
    while True:
        for batch in loader:
            yield batch


def train(cfg: Config) -> dict:
    torch.manual_seed(cfg.seed)
    train_set = Blobs(512, cfg.features, cfg.classes, cfg.seed)
    valid_set = Blobs(128, cfg.features, cfg.classes, cfg.seed + 1)
    train_loader = DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True)
    valid_loader = DataLoader(valid_set, batch_size=64)
    model = Classifier(cfg)
    optimizer = make_optimizer(model, cfg)
    history = {"loss": [], "lr": [], "valid": []}
    running = Meter()
    stream = batches(train_loader)
    started = time.perf_counter()
    for step in range(cfg.steps):
        points, labels = next(stream)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, cfg)
        optimizer.zero_grad(set_to_none=True)
        logits = model(points)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        optimizer.step()
        running.add(loss.item(), len(labels))
        history["loss"].append(loss.item())
        history["lr"].append(optimizer.param_groups[0]["lr"])
        if (step + 1) % cfg.eval_every == 0 or step == cfg.steps - 1:
            valid_loss, accuracy = evaluate(model, valid_loader)
            history["valid"].append((step, valid_loss, accuracy))
            print(f"step {step + 1}: train {running.mean:.3f}  valid {valid_loss:.3f}  acc {accuracy:.2%}  |g| {norm.item():.2f}")
    history["seconds"] = time.perf_counter() - started
    history["seen"] = int(model.seen.item())
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "config": cfg.__dict__}, cfg.checkpoint)
    return history


def summarise(history: dict) -> str:
    first, last = history["loss"][0], history["loss"][-1]
    lines = [f"loss {first:.3f} -> {last:.3f} over {len(history['loss'])} steps in {history['seconds']:.2f} s"]
    for step, valid_loss, accuracy in history["valid"]:
        lines.append(f"  after step {step + 1}: valid loss {valid_loss:.3f}, accuracy {accuracy:.2%}")
    lines.append(f"  examples seen: {history['seen']}")
    return "\n".join(lines)


def main() -> None:
    cfg = parse_args()
    history = train(cfg)
    print(summarise(history))
    size = os.path.getsize(cfg.checkpoint)
    print(f"checkpoint: {cfg.checkpoint} ({size} bytes)")


if __name__ == "__main__":
    main()
