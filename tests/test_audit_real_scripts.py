"""`autograd-lsp audit` on real example code from the pinned sdists of test_real_scripts, with torch for real.

Issue 15: "on your correct-code scripts `audit` reports nothing; tests run torch for real". The venv holds torch
and nothing of the scientific stack (no numpy, torchvision, tqdm, matplotlib, einops, scipy, linear_operator), and
no run may download data. Read against that, NONE of the eight projects' example *scripts* or notebooks can run
as shipped: every training script imports torchvision (datasets), numpy, tqdm, fire, the project's own package
with its dependencies (gpytorch -> linear_operator/scipy, backpack -> einops/unfoldNd, bayesian_torch -> numpy,
opacus -> numpy/scipy), or loads MNIST/CIFAR. So each case here audits a short training script written for this
test that sits next to a real example module (in a copy of its examples folder under pytest's tmp_path, so the
corpus test_real_scripts checks is untouched), imports it unchanged, and trains it the way the example's own main
script does, on synthetic tensors in place of the downloaded dataset:

* ignite super_resolution/model.py `Net`, trained by ignite's `Engine` with main.py's `train_step` and a PSNR
  evaluator (the `ignite` package from the same pinned sdist, importable with torch + packaging);
* ignite cifar10_qat/pact.py `PACTReLU` (a custom autograd.Function: save_for_backward, masked gradients), in a
  small CNN trained with main.py's SGD + CrossEntropy;
* ignite fast_neural_style/transformer_net.py `TransformerNet` (instance norm, residual and upsampling blocks),
  with neural_style.py's Adam and an MSE content loss plus a total-variation term;
* gpytorch 06_PyTorch_NN_Integration_DKL/densenet.py `DenseNet` (in-place ReLUs, concatenation), trained with the
  DKL tutorial's SGD + nesterov + MultiStepLR schedule;
* ignite's own `create_supervised_trainer` (backward inside the library, gradient accumulation) and
  `create_supervised_evaluator` with metrics, training the pact network.

For each: the real CLI as a subprocess (`audit SCRIPT --format json --steps 2`), and (a) no finding observed at run
time (`observed_at_run_time`: confirmed or runtime-only), (b) the run reached the training code: `run.stopped` is
null (or a bound-related stop) and `run.reached_lines` holds the script's backward/step lines. A missing sdist,
module or import is a failure, never a skip.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from realcode_support import cache_lock
from test_real_scripts import CACHE, SDISTS, _download, _unpack

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = {name: version for name, version, _ in SDISTS}
# stops that mean "the bounded run ended", not "the script could not get to its training"
BOUND_STOPS = {None, "timeout"}

SUPER_RESOLUTION = '''\
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

from ignite.engine import Engine, Events
from ignite.metrics import PSNR
from model import Net

torch.manual_seed(123)
hr = torch.rand(16, 1, 24, 24)
lr_images = nn.functional.interpolate(hr, size=(8, 8), mode="bilinear", align_corners=False)
loader = DataLoader(TensorDataset(lr_images, hr), batch_size=4, shuffle=True)

model = Net(upscale_factor=3)
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=0.01)


def train_step(engine, batch):
    model.train()
    input, target = batch[0], batch[1]
    optimizer.zero_grad()
    loss = criterion(model(input), target)
    loss.backward()  # audit-train
    optimizer.step()  # audit-train
    return loss.item()


def validation_step(engine, batch):
    model.eval()
    with torch.no_grad():
        x, y = batch[0], batch[1]
        y_pred = model(x)
    return y_pred, y


trainer = Engine(train_step)
evaluator = Engine(validation_step)
PSNR(data_range=1).attach(evaluator, "psnr")


@trainer.on(Events.EPOCH_COMPLETED)
def log_validation():
    evaluator.run(loader, epoch_length=1)
    print(f"Epoch: {trainer.state.epoch}, Avg. PSNR: {evaluator.state.metrics['psnr']} dB")


trainer.run(loader, max_epochs=2, epoch_length=2)  # audit-train
'''

PACT = '''\
import torch
import torch.nn as nn
import torch.optim as optim

from pact import PACTReLU

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), PACTReLU(),
    nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), PACTReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10),
)
optimizer = optim.SGD(model.parameters(), lr=0.4, momentum=0.9, weight_decay=1e-4, nesterov=True)
criterion = nn.CrossEntropyLoss()
images, labels = torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,))

for epoch in range(10):
    model.train()
    for start in range(0, len(images), 8):
        x, y = images[start:start + 8], labels[start:start + 8]
        y_pred = model(x)
        loss = criterion(y_pred, y)
        optimizer.zero_grad()
        loss.backward()  # audit-train
        optimizer.step()  # audit-train
    model.eval()
    with torch.no_grad():
        accuracy = (model(images).argmax(1) == labels).float().mean().item()
    print(f"epoch {epoch}: loss {loss.item():.3f} accuracy {accuracy:.2f}")
'''

NEURAL_STYLE = '''\
import torch
from torch.optim import Adam

from transformer_net import TransformerNet

torch.manual_seed(0)
transformer = TransformerNet()
optimizer = Adam(transformer.parameters(), 1e-3)
mse_loss = torch.nn.MSELoss()
content = torch.rand(8, 3, 32, 32) * 255

for epoch in range(2):
    transformer.train()
    for start in range(0, len(content), 2):
        x = content[start:start + 2]
        optimizer.zero_grad()
        y = transformer(x)
        content_loss = 1e5 * mse_loss(y / 255, x / 255)
        tv_loss = (y[:, :, 1:, :] - y[:, :, :-1, :]).abs().mean() + (y[:, :, :, 1:] - y[:, :, :, :-1]).abs().mean()
        total_loss = content_loss + 1e-2 * tv_loss
        total_loss.backward()  # audit-train
        optimizer.step()  # audit-train
        print(f"epoch {epoch}: content {content_loss.item():.2f} tv {tv_loss.item():.2f}")
'''

DENSENET = '''\
import torch
import torch.nn.functional as F
from torch.optim.lr_scheduler import MultiStepLR

from densenet import DenseNet

torch.manual_seed(0)
model = DenseNet(growth_rate=6, block_config=(2, 2, 2), num_init_features=8, bn_size=2, avgpool_size=8, num_classes=10)
n_epochs = 4
lr = 0.1
optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=0)
scheduler = MultiStepLR(optimizer, milestones=[0.5 * n_epochs, 0.75 * n_epochs], gamma=0.1)
train_x, train_y = torch.randn(24, 3, 32, 32), torch.randint(0, 10, (24,))
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(train_x, train_y), batch_size=6, shuffle=True)


def train(epoch):
    model.train()
    for data, target in train_loader:
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()  # audit-train
        optimizer.step()  # audit-train
        print(f"Train Epoch: {epoch} Loss: {loss.item():.4f}")


def test():
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in train_loader:
            correct += model(data).argmax(-1).eq(target).sum().item()
    print(f"Test set: Accuracy: {correct}/{len(train_loader.dataset)}")


for epoch in range(1, n_epochs + 1):
    train(epoch)
    test()
    scheduler.step()
'''

IGNITE_SUPERVISED = '''\
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

from ignite.engine import Events, create_supervised_evaluator, create_supervised_trainer
from ignite.metrics import Accuracy, Loss
from pact import PACTReLU

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), PACTReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,))), batch_size=8)

trainer = create_supervised_trainer(model, optimizer, criterion, gradient_accumulation_steps=2)
evaluator = create_supervised_evaluator(model, metrics={"accuracy": Accuracy(), "loss": Loss(criterion)})


@trainer.on(Events.EPOCH_COMPLETED)
def log_results(engine):
    evaluator.run(loader)
    print(f"epoch {engine.state.epoch}: {evaluator.state.metrics}")


trainer.run(loader, max_epochs=2)  # audit-train
'''

# case: (project, folder inside the unpacked examples holding the real module, driver, needs the ignite package)
CASES = {
    "ignite-super-resolution": ("pytorch-ignite", "examples/super_resolution", SUPER_RESOLUTION, True),
    "ignite-qat-pact": ("pytorch-ignite", "examples/cifar10_qat", PACT, False),
    "ignite-fast-neural-style": ("pytorch-ignite", "examples/fast_neural_style", NEURAL_STYLE, False),
    "gpytorch-dkl-densenet": ("gpytorch", "examples/06_PyTorch_NN_Integration_DKL", DENSENET, False),
    "ignite-supervised-trainer": ("pytorch-ignite", "examples/cifar10_qat", IGNITE_SUPERVISED, True),
}


def _examples(name: str) -> Path:
    version = VERSIONS[name]
    folder = dict((n, f) for n, _, f in SDISTS)[name]
    target = CACHE / "src" / f"{name}-{version}"
    with cache_lock(CACHE):
        if not (target / ".complete").is_file():
            _unpack(_download(name, version, CACHE / "sdists"), folder, target)
    return target


def _ignite_package() -> Path:
    """The `ignite` package of the same pinned sdist (pure Python: torch + packaging), for PYTHONPATH."""
    version = VERSIONS["pytorch-ignite"]
    target = CACHE / "lib" / f"pytorch-ignite-{version}"
    with cache_lock(CACHE):
        if not (target / ".complete").is_file():
            _unpack(_download("pytorch-ignite", version, CACHE / "sdists"), "ignite", target)
    assert (target / "ignite" / "engine" / "__init__.py").is_file(), target
    return target


def _train_lines(text: str) -> list[int]:
    return [number for number, line in enumerate(text.splitlines(), 1) if "# audit-train" in line]


def _audit(case: str, driver: str, name: str, work: Path) -> tuple[dict, float]:
    """`autograd-lsp audit DRIVER --format json --steps 2` as a user runs it, from a copy of the example's folder
    (`work`: the corpus folders test_real_scripts checks stay as the sdist ships them)."""
    project, folder, _, needs_ignite = CASES[case]
    source = _examples(project) / folder  # _unpack keeps the sdist's own paths
    assert source.is_dir(), f"{folder} is not in the {project} sdist any more"
    folder_path = work / Path(folder).name
    shutil.copytree(source, folder_path)
    script = folder_path / name
    script.write_text(driver, encoding="utf-8")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    env.pop("PYTHONPATH", None)
    if needs_ignite:
        env["PYTHONPATH"] = str(_ignite_package())
    command = [sys.executable, "-m", "autograd_lsp", "audit", str(script), "--format", "json", "--steps", "2",
               "--exit-zero", "--timeout", "120"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder_path, env=env, timeout=240)
    wall = time.perf_counter() - start
    assert done.returncode == 0, f"audit exited {done.returncode}: {done.stderr[-3000:]}\n{done.stdout[-3000:]}"
    return json.loads(done.stdout), wall


def _assert_reached_training(document: dict, driver: str) -> None:
    run = document["run"]
    stopped = run["stopped"]
    assert (stopped or {}).get("reason") in BOUND_STOPS, (
        f"the run stopped before training: {run['stop_reason']}: {stopped}\n{run['output_tail']}")
    assert not run["probe_errors"], run["probe_errors"]
    missing = set(_train_lines(driver)) - set(run["reached_lines"])
    assert not missing, f"training lines never reached: {sorted(missing)}\n{run['output_tail']}"


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_audit_reports_nothing_on_real_example_training(case, tmp_path):
    driver = CASES[case][2]
    document, wall = _audit(case, driver, f"audit_train_{case.replace('-', '_')}.py", tmp_path)
    run = document["run"]
    print(f"\n{case}: {wall:.1f} s wall, run {run['duration_s']} s, {len(run['reached_lines'])} lines reached, "
          f"{len(document['findings'])} findings ({sum(f['observed_at_run_time'] for f in document['findings'])} observed)")
    _assert_reached_training(document, driver)  # (b) the run got to the training code
    observed = [f for f in document["findings"] if f["observed_at_run_time"]]  # (a) nothing seen on correct code
    assert not observed, "runtime findings on correct code:\n" + "\n".join(
        f"{f['path']}:{f['line']}: {f['code']} {f['message']} ({f['audit']}; evidence: {f.get('evidence')})" for f in observed)


@pytest.mark.slow
def test_the_same_harness_sees_a_real_bug(tmp_path):
    """Control: the DKL DenseNet training without `optimizer.zero_grad()` (gradients pile up across steps) must be
    observed as AG016 on its backward/step lines, so a silent audit above means the probes watched real training."""
    buggy = DENSENET.replace("        optimizer.zero_grad()\n", "")
    assert buggy != DENSENET
    document, _ = _audit("gpytorch-dkl-densenet", buggy, "audit_control_densenet_no_zero_grad.py", tmp_path)
    _assert_reached_training(document, buggy)
    observed = [(f["code"], f["line"]) for f in document["findings"] if f["observed_at_run_time"]]
    assert any(code == "AG016" and line in _train_lines(buggy) for code, line in observed), observed
