"""The benchmark corpus: real PyTorch projects from PyPI wheels plus two generated files.

``ensure_corpus()`` downloads (``pip download --no-deps --only-binary=:all:``) pinned wheels of timm,
kornia, pytorch-ignite and skorch into ``bench/.corpus/wheels``, unpacks their ``.py`` files into
``bench/.corpus/src/<project>/`` and writes ``bench/.corpus/generated/train_2000.py`` (a 2,000-line
training script) and ``generated/notebook_200.ipynb`` (a 200-cell notebook). It is idempotent and cheap
once done. ``corpus_files()`` lists the ``.py`` files. Tests can import this module::

    from bench.corpus import ensure_corpus, corpus_files, CorpusUnavailable

    try:
        ensure_corpus()
    except CorpusUnavailable as error:
        pytest.skip(str(error))

``python -m bench.corpus`` prepares the corpus and prints a summary.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
CORPUS_DIR = Path(os.environ.get("AUTOGRAD_LSP_CORPUS_DIR", BENCH_DIR / ".corpus"))
WHEELS_DIR = CORPUS_DIR / "wheels"
SDISTS_DIR = CORPUS_DIR / "sdists"
WIDE_DIR = CORPUS_DIR / "wide"
SRC_DIR = CORPUS_DIR / "src"
GENERATED_DIR = CORPUS_DIR / "generated"
TRAIN_SCRIPT = GENERATED_DIR / "train_2000.py"
NOTEBOOK = GENERATED_DIR / "notebook_200.ipynb"

# Pinned so that figures from different days are comparable; bump together with RESULTS.md.
PACKAGES = {
    "timm": "1.0.31",
    "kornia": "0.9.0",
    "pytorch-ignite": "0.5.5",
    "skorch": "1.4.0",
}
# The widened corpus (issue 14): packages of other shapes than the four above, so that no figure is tuned to one
# corpus. None of them is used by tests/test_real_code.py or tests/test_real_scripts.py.
# key -> (pip name, version, "wheel" | "sdist", kept paths inside the archive (sdists: below their top directory;
# empty: every .py file), shape). Sdists keep their setup.py/pyproject.toml: it marks the project root, which is what
# makes a src/ layout a src/ layout for the resolver.
WIDE_PACKAGES = {
    "torchmetrics": ("torchmetrics", "1.9.0", "sdist", ("src/",), "src/ layout, deep hierarchy, functional/ re-exported through every __init__"),
    "pytorch-lightning": ("pytorch-lightning", "2.6.6", "sdist", ("src/",), "src/ layout, two packages (lightning_fabric, pytorch_lightning), __init__-time imports"),
    "accelerate": ("accelerate", "1.15.0", "sdist", ("src/",), "src/ layout, utils/__init__ re-exporting hundreds of names"),
    "peft": ("peft", "0.21.2", "sdist", ("src/",), "src/ layout, one subpackage per tuner, star-free re-exports"),
    "torch-geometric": ("torch-geometric", "2.8.1", "wheel", (), "deep hierarchy, heavy re-exports, conditional imports"),
    "pyro-ppl": ("pyro-ppl", "1.9.2", "wheel", (), "deep hierarchy, aliases, __all__ lists"),
    "botorch": ("botorch", "0.18.1", "wheel", ("botorch/", "botorch_community/"), "re-exports through __init__, two top packages"),
    "monai": ("monai", "1.6.1", "wheel", (), "`from .x import *` everywhere, large modules, optional imports"),
    "captum": ("captum", "0.9.0", "wheel", (), "private _core/_utils packages re-exported by public ones"),
    "lightly": ("lightly", "1.6.0", "wheel", (), "models/loss/transforms packages, __init__-time imports"),
    "tensordict": ("tensordict", "0.15.3", "wheel", (), "few, very large modules"),
    "einops": ("einops", "0.8.2", "wheel", (), "small: one layer module per backend, conditional imports"),
    "optimum": ("optimum", "2.3.0", "wheel", (), "namespace package (no optimum/__init__.py)"),
    "fairscale": ("fairscale", "0.4.13", "sdist", ("fairscale/", "benchmarks/"), "library + benchmark training scripts"),
    "torch-optimizer": ("torch-optimizer", "0.3.0", "sdist", ("torch_optimizer/", "examples/"), "small library + a training script"),
    "pl-examples": ("pytorch-lightning", "1.4.9", "wheel", ("pl_examples/",), "training scripts (GAN, RL, segmentation, fine-tuning)"),
}
GENERATOR_VERSION = "2"  # bump when the generators change, so stale generated files are rewritten
TRAIN_LINES = 2000
NOTEBOOK_CELLS = 200


class CorpusUnavailable(RuntimeError):
    """The wheels could not be downloaded (offline, no pip) and are not cached."""


# --------------------------------------------------------------------------------------------------
# public API


def ensure_corpus(quiet: bool = True, wide: bool = False) -> Path:
    """Download/unpack/generate whatever is missing (with `wide`, the WIDE_PACKAGES too); return the corpus root.
    Raises CorpusUnavailable."""
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    for project, version in PACKAGES.items():
        _ensure_project(project, version, quiet)
    _ensure_generated()
    if wide:
        for key in WIDE_PACKAGES:
            _ensure_wide(key, quiet)
    return CORPUS_DIR


def wide_dir(key: str) -> Path:
    return WIDE_DIR / _norm(key)


def wide_files(key: str) -> list[Path]:
    """The `.py` files of one widened package (call ensure_corpus(wide=True) first)."""
    return sorted(p for p in wide_dir(key).rglob("*.py") if p.is_file())


def project_dir(project: str) -> Path:
    return SRC_DIR / _norm(project)


def corpus_files(projects: list[str] | tuple[str, ...] | None = None, generated: bool = True) -> list[Path]:
    """Every ``.py`` file of the corpus, sorted (the generated training script last when included).

    ``projects`` restricts to some of PACKAGES (names as in PACKAGES). Call ensure_corpus() first.
    """
    roots = [project_dir(p) for p in (projects if projects is not None else PACKAGES)]
    files: list[Path] = []
    for root in roots:
        if root.is_dir():
            files.extend(sorted(p for p in root.rglob("*.py") if p.is_file()))
    if generated and TRAIN_SCRIPT.is_file():
        files.append(TRAIN_SCRIPT)
    return files


def corpus_roots(generated: bool = True) -> list[Path]:
    """The directories to hand to a linter to cover the whole corpus (projects + generated/)."""
    roots = [project_dir(p) for p in PACKAGES]
    if generated:
        roots.append(GENERATED_DIR)
    return roots


def notebook_files() -> list[Path]:
    return [NOTEBOOK] if NOTEBOOK.is_file() else []


def count_lines(paths) -> int:
    total = 0
    for path in paths:
        path = Path(path)
        if path.suffix == ".ipynb":
            total += sum(len(_cell_source(c).split("\n")) for c in json.loads(path.read_text("utf-8"))["cells"] if c.get("cell_type") == "code")
        else:
            with open(path, "rb") as handle:
                total += sum(1 for _ in handle)
    return total


# --------------------------------------------------------------------------------------------------
# download and unpack


def _norm(project: str) -> str:
    return project.lower().replace("-", "_")


def _ensure_project(project: str, version: str, quiet: bool) -> None:
    target = project_dir(project)
    stamp = target / ".unpacked"
    if stamp.is_file() and stamp.read_text().strip() == version:
        return
    wheel = _find_wheel(project, version) or _download(project, version, quiet)
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            name = member.filename
            if not name.endswith(".py") or ".dist-info/" in name or ".data/" in name or name.startswith("/") or ".." in name.split("/"):
                continue
            out = tmp / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(archive.read(member))
    (tmp / ".unpacked").write_text(version)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)


def _ensure_wide(key: str, quiet: bool) -> None:
    name, version, kind, keep, _ = WIDE_PACKAGES[key]
    target = wide_dir(key)
    stamp = target / ".unpacked"
    signature = f"{name}=={version} {kind} {' '.join(keep)}".strip()  # (stripped as the stamp is read: no keep, no trailing space)
    if stamp.is_file() and stamp.read_text().strip() == signature:
        return
    if kind == "wheel":
        archive = _find_wheel(name, version) or _download(name, version, quiet)
    else:
        archive = _find_sdist(name, version) or _download(name, version, quiet, sdist=True)
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for member, read in _members(archive, kind):
        parts = member.split("/")
        if member.startswith("/") or ".." in parts or ".dist-info/" in member or ".data/" in member or ".egg-info/" in member:
            continue
        marker = kind == "sdist" and member in ("setup.py", "pyproject.toml", "setup.cfg")
        if not marker and (not member.endswith((".py", ".ipynb")) or keep and not member.startswith(keep)):
            continue
        out = tmp / member
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(read())
    stamp_tmp = tmp / ".unpacked"
    stamp_tmp.write_text(signature)
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp.rename(target)


def _members(archive: Path, kind: str):
    """(path inside the package, reader) of every regular file; an sdist's top directory is stripped."""
    if kind == "wheel":
        with zipfile.ZipFile(archive) as handle:
            for member in handle.infolist():
                if not member.is_dir():
                    yield member.filename, (lambda m=member: handle.read(m))
        return
    import tarfile

    with tarfile.open(archive, "r:gz") as handle:
        for member in handle.getmembers():
            if member.isfile() and "/" in member.name:
                yield member.name.split("/", 1)[1], (lambda m=member: handle.extractfile(m).read())


def _find_sdist(name: str, version: str) -> Path | None:
    if not SDISTS_DIR.is_dir():
        return None
    wanted = _canonical(name)
    for sdist in SDISTS_DIR.glob("*.tar.gz"):
        stem, _, found = sdist.name[: -len(".tar.gz")].rpartition("-")
        if _canonical(stem) == wanted and found == version:
            return sdist
    return None


def _canonical(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def _find_wheel(project: str, version: str) -> Path | None:
    if not WHEELS_DIR.is_dir():
        return None
    prefix = f"{_norm(project)}-{version}-"
    for wheel in WHEELS_DIR.glob("*.whl"):
        if wheel.name.lower().startswith(prefix):
            return wheel
    return None


def _download(project: str, version: str, quiet: bool, sdist: bool = False) -> Path:
    directory = SDISTS_DIR if sdist else WHEELS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary=:all:" if sdist else "--only-binary=:all:",
           "--disable-pip-version-check", "-d", str(directory), f"{project}=={version}"]
    if not quiet:
        print("+", " ".join(cmd), file=sys.stderr)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CorpusUnavailable(f"cannot download {project}=={version}: {error}") from None
    wheel = _find_sdist(project, version) if sdist else _find_wheel(project, version)
    if proc.returncode != 0 or wheel is None:
        raise CorpusUnavailable(f"cannot download {project}=={version} (pip exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    return wheel


# --------------------------------------------------------------------------------------------------
# generated files


def _ensure_generated() -> None:
    GENERATED_DIR.mkdir(parents=True, exist_ok=True)
    stamp = GENERATED_DIR / ".version"
    if stamp.is_file() and stamp.read_text().strip() == GENERATOR_VERSION and TRAIN_SCRIPT.is_file() and NOTEBOOK.is_file():
        return
    text = generate_train_script(TRAIN_LINES)
    compile(text, str(TRAIN_SCRIPT), "exec")  # never ship a generator bug as a "syntax error" figure
    TRAIN_SCRIPT.write_text(text, encoding="utf-8")
    NOTEBOOK.write_text(json.dumps(generate_notebook(NOTEBOOK_CELLS), indent=1) + "\n", encoding="utf-8")
    stamp.write_text(GENERATOR_VERSION)


def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


_HEADER = '''\
"""Train image and sequence models on synthetic data.

Generated by bench/corpus.py for the autograd-lsp benchmark: a realistic, syntactically valid training
script with many nn.Modules, helpers and training loops (and the occasional real-world autograd smell).
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger("train")


@dataclass
class TrainConfig:
    """Hyper-parameters shared by every experiment below."""

    epochs: int = 10
    batch_size: int = 64
    lr: float = 3e-4
    weight_decay: float = 0.05
    warmup_steps: int = 500
    grad_clip: float = 1.0
    label_smoothing: float = 0.1
    ema_decay: float = 0.999
    log_every: int = 50
    seed: int = 0
    device: str = "cpu"
    channels: List[int] = field(default_factory=lambda: [32, 64, 128])


def set_seed(seed: int) -> None:
    # make runs repeatable across python, numpy-free code and torch
    random.seed(seed)
    torch.manual_seed(seed)


def count_parameters(model: nn.Module, trainable_only: bool = True) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
'''


def _conv_block(i: int, rng: random.Random) -> str:
    act = rng.choice(["nn.ReLU(inplace=True)", "nn.GELU()", "nn.SiLU()", "nn.LeakyReLU(0.1)"])
    norm = rng.choice(["nn.BatchNorm2d(out_ch)", "nn.GroupNorm(8, out_ch)"])
    return f'''

class ConvBlock{i}(nn.Module):
    """Conv -> norm -> activation, optionally strided."""

    def __init__(self, in_ch: int, out_ch: int, stride: int = 1, kernel_size: int = 3):
        super().__init__()
        padding = kernel_size // 2
        self.conv = nn.Conv2d(in_ch, out_ch, kernel_size, stride=stride, padding=padding, bias=False)
        self.norm = {norm}
        self.act = {act}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the usual conv stem; fused by most backends
        return self.act(self.norm(self.conv(x)))
'''


def _residual_block(i: int, rng: random.Random) -> str:
    scale = rng.choice(["1e-5", "1e-6", "0.1"])
    return f'''

class ResidualBlock{i}(nn.Module):
    """Two 3x3 convolutions with a learnable layer scale and a projection shortcut."""

    def __init__(self, channels: int, out_channels: Optional[int] = None, drop_path: float = 0.0):
        super().__init__()
        out_channels = out_channels or channels
        self.conv1 = nn.Conv2d(channels, out_channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.gamma = nn.Parameter(torch.full((out_channels, 1, 1), {scale}))
        self.drop_path = drop_path
        if out_channels != channels:
            self.shortcut = nn.Sequential(nn.Conv2d(channels, out_channels, 1, bias=False), nn.BatchNorm2d(out_channels))
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        residual = self.shortcut(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out)) * self.gamma
        if self.training and self.drop_path > 0.0:
            keep = torch.rand(out.shape[0], 1, 1, 1, device=out.device) >= self.drop_path
            out = out * keep.to(out.dtype) / (1.0 - self.drop_path)
        return F.relu(out + residual)
'''


def _attention(i: int, rng: random.Random) -> str:
    heads = rng.choice([4, 8, 12])
    return f'''

class SelfAttention{i}(nn.Module):
    """Multi-head self-attention with an optional causal mask."""

    def __init__(self, dim: int, num_heads: int = {heads}, dropout: float = 0.1, causal: bool = False):
        super().__init__()
        assert dim % num_heads == 0, "dim must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)
        self.causal = causal

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        batch, tokens, dim = x.shape
        qkv = self.qkv(x).reshape(batch, tokens, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        if self.causal:
            causal_mask = torch.ones(tokens, tokens, device=x.device, dtype=torch.bool).triu(1)
            attn = attn.masked_fill(causal_mask, float("-inf"))
        if mask is not None:
            attn = attn.masked_fill(~mask[:, None, None, :], float("-inf"))
        attn = self.dropout(attn.softmax(dim=-1))
        out = (attn @ v).transpose(1, 2).reshape(batch, tokens, dim)
        return self.proj(out)
'''


def _mlp(i: int, rng: random.Random) -> str:
    ratio = rng.choice([2, 4])
    return f'''

class FeedForward{i}(nn.Module):
    """Transformer MLP: expand, activate, drop, project."""

    def __init__(self, dim: int, hidden_ratio: int = {ratio}, dropout: float = 0.0):
        super().__init__()
        hidden = dim * hidden_ratio
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.fc2(self.drop(F.gelu(self.fc1(x)))))


class TransformerLayer{i}(nn.Module):
    def __init__(self, dim: int, num_heads: int = 8, dropout: float = 0.1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = SelfAttention{i}(dim, num_heads=num_heads, dropout=dropout)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = FeedForward{i}(dim, dropout=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x
'''


def _model(i: int, rng: random.Random) -> str:
    classes = rng.choice([10, 100, 1000])
    smell = rng.random() < 0.3
    extra = "\n        self.class_prior = torch.ones(num_classes) / num_classes  # not a buffer: stays on CPU" if smell else ""
    return f'''

class ImageClassifier{i}(nn.Module):
    """A small ResNet-style classifier built from the blocks above."""

    def __init__(self, num_classes: int = {classes}, channels: Tuple[int, ...] = (32, 64, 128), in_chans: int = 3):
        super().__init__()
        self.stem = ConvBlock{i}(in_chans, channels[0], stride=2)
        stages = []
        for c_in, c_out in zip(channels[:-1], channels[1:]):
            stages.append(ResidualBlock{i}(c_in, c_out))
            stages.append(ConvBlock{i}(c_out, c_out, stride=2))
        self.stages = nn.Sequential(*stages)
        self.head = nn.Linear(channels[-1], num_classes){extra}
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.Linear):
                nn.init.trunc_normal_(module.weight, std=0.02)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        return self.stages(self.stem(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.forward_features(x)
        pooled = features.mean(dim=(2, 3))
        return self.head(pooled)
'''


def _dataset(i: int, rng: random.Random) -> str:
    size = rng.choice([32, 64, 96])
    return f'''

class SyntheticImages{i}(Dataset):
    """Random images with labels that depend on the mean colour, so models can actually learn."""

    def __init__(self, length: int = 1024, image_size: int = {size}, num_classes: int = 10, seed: int = {i}):
        self.length = length
        self.image_size = image_size
        self.num_classes = num_classes
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> Tuple[torch.Tensor, int]:
        image = torch.randn(3, self.image_size, self.image_size, generator=self.generator)
        label = int(image.mean().abs().mul(self.num_classes * 10).floor().item()) % self.num_classes
        return image, label
'''


def _losses(i: int, rng: random.Random) -> str:
    gamma = rng.choice(["2.0", "1.5"])
    return f'''

class LabelSmoothingLoss{i}(nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        nll = -log_probs.gather(dim=-1, index=target.unsqueeze(1)).squeeze(1)
        smooth = -log_probs.mean(dim=-1)
        return ((1.0 - self.smoothing) * nll + self.smoothing * smooth).mean()


def focal_loss_{i}(logits: torch.Tensor, target: torch.Tensor, gamma: float = {gamma}) -> torch.Tensor:
    # down-weights easy examples; see Lin et al. 2017
    ce = F.cross_entropy(logits, target, reduction="none")
    p_t = torch.exp(-ce)
    return ((1 - p_t) ** gamma * ce).mean()
'''


def _helpers(i: int, rng: random.Random) -> str:
    return f'''

def accuracy_{i}(logits: torch.Tensor, target: torch.Tensor, topk: Tuple[int, ...] = (1,)) -> List[float]:
    maxk = max(topk)
    _, pred = logits.topk(maxk, dim=1)
    correct = pred.eq(target.view(-1, 1))
    return [correct[:, :k].any(dim=1).float().mean().item() * 100.0 for k in topk]


def warmup_cosine_{i}(step: int, warmup: int, total: int, base_lr: float) -> float:
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return base_lr * 0.5 * (1.0 + math.cos(math.pi * progress))


@torch.no_grad()
def update_ema_{i}(ema_model: nn.Module, model: nn.Module, decay: float) -> None:
    # exponential moving average of the weights, done in place without tracking
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.mul_(decay).add_(p.detach(), alpha=1.0 - decay)


def save_checkpoint_{i}(path: str, model: nn.Module, optimizer: torch.optim.Optimizer, epoch: int) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    torch.save({{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}}, path)


def load_checkpoint_{i}(path: str, model: nn.Module, optimizer: Optional[torch.optim.Optimizer] = None) -> int:
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    return int(state.get("epoch", 0))
'''


def _train_loop(i: int, rng: random.Random) -> str:
    smell = rng.random() < 0.35
    accumulate = "running_loss += loss  # keeps every step's graph alive" if smell else "running_loss += loss.item()"
    report = "running_loss.item()" if smell else "running_loss"
    return f'''

def train_one_epoch_{i}(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer,
                       config: TrainConfig, epoch: int, ema_model: Optional[nn.Module] = None) -> float:
    model.train()
    criterion = LabelSmoothingLoss{i}(config.label_smoothing)
    running_loss = 0.0
    start = time.time()
    for step, (images, labels) in enumerate(loader):
        images, labels = images.to(config.device), labels.to(config.device)
        global_step = epoch * len(loader) + step
        for group in optimizer.param_groups:
            group["lr"] = warmup_cosine_{i}(global_step, config.warmup_steps, config.epochs * len(loader), config.lr)
        optimizer.zero_grad(set_to_none=True)
        logits = model(images)
        loss = criterion(logits, labels)
        loss.backward()
        if config.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        if ema_model is not None:
            update_ema_{i}(ema_model, model, config.ema_decay)
        {accumulate}
        if step % config.log_every == 0:
            # throughput in images per second since the start of the epoch
            speed = (step + 1) * images.shape[0] / max(time.time() - start, 1e-6)
            logger.info("epoch %d step %d loss %.4f (%.1f img/s)", epoch, step, loss.item(), speed)
    return {report} / max(1, len(loader))


@torch.no_grad()
def evaluate_{i}(model: nn.Module, loader: DataLoader, device: str = "cpu") -> Dict[str, float]:
    model.eval()
    total, top1, loss_sum = 0, 0.0, 0.0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
        top1 += accuracy_{i}(logits, labels)[0] * labels.shape[0]
        total += labels.shape[0]
    return {{"loss": loss_sum / max(total, 1), "top1": top1 / max(total, 1)}}
'''


def _gan_step(i: int, rng: random.Random) -> str:
    return f'''

class Generator{i}(nn.Module):
    def __init__(self, latent_dim: int = 64, out_dim: int = 784):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, 256), nn.ReLU(), nn.Linear(256, out_dim), nn.Tanh())

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)


class Discriminator{i}(nn.Module):
    def __init__(self, in_dim: int = 784):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 256), nn.LeakyReLU(0.2), nn.Linear(256, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def train_gan_{i}(generator: nn.Module, discriminator: nn.Module, real_batches: Iterable[torch.Tensor],
                 latent_dim: int = 64, lr: float = 2e-4) -> List[Tuple[float, float]]:
    opt_g = torch.optim.Adam(generator.parameters(), lr=lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=lr, betas=(0.5, 0.999))
    history = []
    for real in real_batches:
        z = torch.randn(real.shape[0], latent_dim)
        fake = generator(z)
        # discriminator step: the fake batch is detached so the generator graph survives
        opt_d.zero_grad()
        d_real = discriminator(real)
        d_fake = discriminator(fake.detach())
        loss_d = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + \\
            F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
        loss_d.backward()
        opt_d.step()
        # generator step
        opt_g.zero_grad()
        d_out = discriminator(fake)
        loss_g = F.binary_cross_entropy_with_logits(d_out, torch.ones_like(d_out))
        loss_g.backward()
        opt_g.step()
        history.append((loss_d.item(), loss_g.item()))
    return history
'''


def _seq_model(i: int, rng: random.Random) -> str:
    layers = rng.choice([2, 4, 6])
    return f'''

class SequenceModel{i}(nn.Module):
    """Token embedding + transformer layers + tied output head."""

    def __init__(self, vocab_size: int = 32000, dim: int = 256, depth: int = {layers}, max_len: int = 512):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.pos = nn.Parameter(torch.zeros(1, max_len, dim))
        nn.init.normal_(self.pos, std=0.02)
        self.layers = nn.ModuleList([TransformerLayer{i}(dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.pos[:, : tokens.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def lm_step_{i}(model: SequenceModel{i}, tokens: torch.Tensor, optimizer: torch.optim.Optimizer,
               scaler_value: float = 1.0) -> float:
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)) * scaler_value
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
'''


_BLOCKS = [_conv_block, _residual_block, _attention, _mlp, _model, _dataset, _losses, _helpers, _train_loop, _gan_step, _seq_model]

_MAIN = '''

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    parser.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    parser.add_argument("--lr", type=float, default=TrainConfig.lr)
    parser.add_argument("--checkpoint", default="checkpoints/last.pt")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: Optional[List[str]] = None) -> None:
    args = build_parser().parse_args(argv)
    config = TrainConfig(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, seed=args.seed)
    set_seed(config.seed)
    logging.basicConfig(level=logging.INFO)
    model = ImageClassifier0(num_classes=10)
    ema_model = ImageClassifier0(num_classes=10)
    ema_model.load_state_dict(model.state_dict())
    for p in ema_model.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    train_loader = DataLoader(SyntheticImages0(2048), batch_size=config.batch_size, shuffle=True)
    val_loader = DataLoader(SyntheticImages0(512, seed=1), batch_size=config.batch_size)
    logger.info("model has %d trainable parameters", count_parameters(model))
    for epoch in range(config.epochs):
        train_loss = train_one_epoch_0(model, train_loader, optimizer, config, epoch, ema_model=ema_model)
        metrics = evaluate_0(ema_model, val_loader, config.device)
        logger.info("epoch %d: train loss %.4f, val %s", epoch, train_loss, metrics)
        save_checkpoint_0(args.checkpoint, model, optimizer, epoch)


if __name__ == "__main__":
    main()
'''


def generate_train_script(lines: int = TRAIN_LINES, seed: int = 2000) -> str:
    """A valid, realistic training script of exactly ``lines`` lines (deterministic)."""
    rng = random.Random(seed)
    parts = [_HEADER]
    used = _HEADER.count("\n")
    main_lines = _MAIN.count("\n")
    table_overhead = 4  # blank lines + "HPARAMS = {" + "}"
    # whole groups of blocks in dependency order; the last group may stop part-way (a prefix of _BLOCKS)
    i, full = 0, False
    while not full:
        for make in _BLOCKS:
            block = make(i, rng)
            if used + block.count("\n") + main_lines + table_overhead > lines:
                full = True
                break
            parts.append(block)
            used += block.count("\n")
        i += 1
    # fill the remainder with a hyper-parameter table, one entry per line, so the length is exact
    free = lines - used - main_lines - table_overhead
    if free < 0:
        raise ValueError("lines too small for the header")
    entries = [f'    "sweep_{k:03d}": {{"lr": {rng.choice(["1e-3", "3e-4", "1e-4"])}, "wd": {rng.choice(["0.0", "0.05", "0.1"])}, "depth": {rng.randint(2, 12)}}},' for k in range(free)]
    parts.append("\n\nHPARAMS = {\n" + "".join(e + "\n" for e in entries) + "}\n")
    parts.append(_MAIN)
    text = "".join(parts)
    count = text.count("\n")
    assert count == lines, (count, lines)
    return text


# --- notebook ------------------------------------------------------------------------------------


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": _split(text)}


def _code(text: str, n: int) -> dict:
    return {"cell_type": "code", "execution_count": n, "metadata": {}, "outputs": [], "source": _split(text)}


def _split(text: str) -> list[str]:
    lines = text.strip("\n").split("\n")
    return [l + "\n" for l in lines[:-1]] + [lines[-1]]


def generate_notebook(cells: int = NOTEBOOK_CELLS, seed: int = 200) -> dict:
    """A deterministic notebook of exactly ``cells`` cells: markdown, magics, models, training, plots."""
    rng = random.Random(seed)
    out: list[dict] = [
        _md("# Experiments notebook\n\nGenerated by `bench/corpus.py` for the autograd-lsp benchmark."),
        _code("%matplotlib inline\n%load_ext autoreload\n%autoreload 2\n!nvidia-smi", 1),
        _code("import math\nimport time\n\nimport matplotlib.pyplot as plt\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "from torch.utils.data import DataLoader, TensorDataset\n\ntorch.manual_seed(0)\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'", 2),
        _code("X = torch.randn(4096, 20)\ny = (X[:, :5].sum(dim=1) > 0).long()\nloader = DataLoader(TensorDataset(X, y), batch_size=128, shuffle=True)\nX.shape, y.float().mean()", 3),
    ]
    n = 4
    section = 0
    templates = [
        lambda k: _md(f"## Experiment {k}\n\nA {rng.choice(['wider', 'deeper', 'regularised'])} MLP, trained for a few epochs."),
        lambda k: _code(f"class Net{k}(nn.Module):\n    def __init__(self, hidden={rng.choice([64, 128, 256])}, p={rng.choice([0.0, 0.1, 0.2])}):\n        super().__init__()\n"
                        f"        self.fc1 = nn.Linear(20, hidden)\n        self.fc2 = nn.Linear(hidden, hidden)\n        self.out = nn.Linear(hidden, 2)\n        self.drop = nn.Dropout(p)\n\n"
                        f"    def forward(self, x):\n        x = self.drop(F.relu(self.fc1(x)))\n        x = self.drop(F.relu(self.fc2(x)))\n        return self.out(x)", 0),
        lambda k: _code(f"model{k} = Net{k}().to(device)\noptimizer{k} = torch.optim.{rng.choice(['Adam', 'AdamW', 'SGD'])}(model{k}.parameters(), lr={rng.choice(['1e-3', '3e-4', '1e-2'])})\n"
                        f"sum(p.numel() for p in model{k}.parameters())", 0),
        lambda k: _code(f"%%time\nlosses{k} = []\nfor epoch in range({rng.randint(2, 6)}):\n    for xb, yb in loader:\n        xb, yb = xb.to(device), yb.to(device)\n"
                        f"        optimizer{k}.zero_grad()\n        loss = F.cross_entropy(model{k}(xb), yb)\n        loss.backward()\n        optimizer{k}.step()\n"
                        f"        losses{k}.append({rng.choice(['loss.item()', 'loss.item()', 'loss'])})\nprint(f'final loss {{float(losses{k}[-1]):.4f}}')", 0),
        lambda k: _code(f"@torch.no_grad()\ndef evaluate{k}(model):\n    model.eval()\n    correct = 0\n    for xb, yb in loader:\n"
                        f"        correct += (model(xb.to(device)).argmax(dim=1) == yb.to(device)).sum().item()\n    model.train()\n    return correct / len(loader.dataset)\n\nevaluate{k}(model{k})", 0),
        lambda k: _code(f"plt.figure(figsize=(6, 3))\nplt.plot([float(l) for l in losses{k}])\nplt.title('experiment {k}')\nplt.xlabel('step')\nplt.show()", 0),
        lambda k: _code(f"model{k}?", 0) if rng.random() < 0.3 else _code(f"grads{k} = {{name: p.grad.norm().item() for name, p in model{k}.named_parameters() if p.grad is not None}}\ngrads{k}", 0),
    ]
    while len(out) < cells:
        for make in templates:
            if len(out) >= cells:
                break
            cell = make(section)
            if cell["cell_type"] == "code":
                cell["execution_count"] = n
                n += 1
            out.append(cell)
        section += 1
    return {
        "cells": out,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python", "version": "3.11"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


if __name__ == "__main__":
    root = ensure_corpus(quiet=False)
    files = corpus_files()
    print(f"corpus at {root}: {len(files)} .py files, {count_lines(files):,} lines; notebook {NOTEBOOK} ({count_lines(notebook_files()):,} code lines)")
    for project in PACKAGES:
        proj_files = corpus_files([project], generated=False)
        print(f"  {project:15s} {len(proj_files):5d} files {count_lines(proj_files):9,d} lines")
    ensure_corpus(quiet=False, wide=True)
    for key, (name, version, kind, _, shape) in WIDE_PACKAGES.items():
        proj_files = wide_files(key)
        print(f"  wide {key:17s} {len(proj_files):5d} files {count_lines(proj_files):9,d} lines  ({name}=={version} {kind}: {shape})")
