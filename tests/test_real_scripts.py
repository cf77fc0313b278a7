"""Every rule on real, correct training scripts, tutorials and notebooks (not library code).

The corpus is the examples folders that eight projects ship in their PyPI source distributions: GP tutorials
as notebooks (gpytorch), training scripts and notebooks (pytorch-ignite, poutyne), continual-learning scripts
(avalanche), differential-privacy training (opacus), curvature/second-order examples (backpack), Bayesian
networks trained on CIFAR/ImageNet/MNIST (bayesian-torch) and physics-informed training (deepxde). As in
test_real_code, a finding there is a false positive (a rule defect, to be fixed with a fixture that captures
the pattern) unless it is a true bug of that script, listed in KNOWN with the reason it is one; the test
fails on any other finding and on a KNOWN entry that is no longer reported.

The sdists are fetched once with `pip download --no-deps --no-binary=:all:` (pinned versions, so KNOWN's
line numbers hold) into tests/.cache/realscripts/ (git-ignored); only the .py and .ipynb files under each
project's examples folder are unpacked. Without network access and without a cached sdist the test fails.
The checker runs as a user runs it (CLI subprocess, JSON, every rule, cross-module on); the time and the
corpus size are printed and written to tests/.cache/realscripts/timing.json.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tarfile
from collections import Counter
from pathlib import Path, PurePosixPath

import pytest

from realcode_support import Known, assert_known_explained, assert_only_known, cache_lock, pip_download, relative, run_check

CACHE = Path(__file__).resolve().parent / ".cache" / "realscripts"

# name, version, the folder (inside the sdist) that holds its scripts/notebooks
SDISTS = [
    ("gpytorch", "1.15.2", "examples"),
    ("pytorch-ignite", "0.5.5", "examples"),
    ("avalanche-lib", "0.6.0", "examples"),
    ("opacus", "1.6.0", "examples"),
    ("poutyne", "1.19.0", "examples"),
    ("backpack-for-pytorch", "1.7.1", "docs_src/examples"),
    ("bayesian-torch", "0.5.0", "bayesian_torch/examples"),
    ("deepxde", "1.15.0", "examples"),
]

# (path suffix inside the unpacked examples, line, code, why this is a true bug of the script)
KNOWN: list[Known] = []

# The eight folders hold 295 files (70 notebooks) and ~48k lines; far fewer means the download or unpacking broke.
MIN_FILES, MIN_NOTEBOOKS, MIN_LINES = 280, 60, 40_000


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _sdist(directory: Path, name: str, version: str) -> Path | None:
    for path in sorted(directory.glob("*.tar.gz")):
        stem, _, found_version = path.name[: -len(".tar.gz")].rpartition("-")
        if _normal(stem) == _normal(name) and found_version == version:
            return path
    return None


def _download(name: str, version: str, sdists: Path) -> Path:
    found = _sdist(sdists, name, version)
    if found is not None:
        return found
    result = pip_download(f"{name}=={version}", sdists, binary=False)
    found = _sdist(sdists, name, version)
    if found is None:
        pytest.fail(f"cannot download the sdist of {name}=={version} (no network?): {(result.stderr or result.stdout)[-400:]}")
    return found


def _unpack(sdist: Path, folder: str, target: Path) -> None:
    """Only .py/.ipynb regular files under `folder` (below the sdist's top directory), never outside `target`."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    prefix = PurePosixPath(folder).parts
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            path = PurePosixPath(member.name)
            inner = path.parts[1:]
            if (not member.isfile() or path.suffix not in (".py", ".ipynb") or path.is_absolute() or ".." in path.parts
                    or inner[: len(prefix)] != prefix):
                continue
            destination = target.joinpath(*inner)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(archive.extractfile(member).read())
    (target / ".complete").write_text(sdist.name, encoding="utf-8")


@pytest.fixture(scope="module")
def corpus() -> dict[str, Path]:
    folders = {}
    for name, version, folder in SDISTS:
        target = CACHE / "src" / f"{name}-{version}"
        with cache_lock(CACHE):
            if not (target / ".complete").is_file():
                _unpack(_download(name, version, CACHE / "sdists"), folder, target)
        folders[name] = target
    return folders


def _lines(path: Path) -> int:
    """Lines of Python: a script's lines, a notebook's code-cell lines."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return text.count("\n")
    cells = json.loads(text).get("cells", [])
    sources = ["".join(c["source"]) if isinstance(c.get("source"), list) else c.get("source", "") for c in cells if c.get("cell_type") == "code"]
    return sum(len(source.splitlines()) for source in sources)


def test_known_entries_are_explained():
    assert_known_explained(KNOWN)


@pytest.mark.slow
def test_real_scripts_have_no_false_positives(corpus: dict[str, Path]):
    files = [path for folder in corpus.values() for path in sorted(folder.rglob("*")) if path.suffix in (".py", ".ipynb")]
    notebooks = sum(1 for path in files if path.suffix == ".ipynb")
    lines = sum(_lines(path) for path in files)
    assert len(files) >= MIN_FILES and notebooks >= MIN_NOTEBOOKS and lines >= MIN_LINES, (len(files), notebooks, lines)
    run = run_check(list(corpus.values()), CACHE)
    per_rule = Counter(finding["code"] for finding in run.findings)
    syntax = [relative(f["path"], corpus.values()) for f in run.findings if f["code"] == "AG000"]
    timing = {"files": len(files), "notebooks": notebooks, "lines": lines, "wall_seconds": round(run.wall, 2),
              "cpu_seconds": round(run.cpu, 2), "cpu_ms_per_file": round(1000 * run.cpu / len(files), 1), "cpus": os.cpu_count(),
              "rules": run.select, "findings": len(run.findings), "per_rule": dict(sorted(per_rule.items())), "AG000": syntax}
    (CACHE / "timing.json").write_text(json.dumps(timing, indent=2), encoding="utf-8")
    print(f"\nreal scripts: {len(files)} files ({notebooks} notebooks, {lines} lines) in {run.wall:.1f} s wall, {run.cpu:.1f} s CPU "
          f"({1000 * run.cpu / len(files):.0f} ms/file, {os.cpu_count()} CPUs), {len(run.findings)} findings "
          f"{dict(sorted(per_rule.items()))}, AG000 on {len(syntax)} files")
    assert_only_known(run.findings, KNOWN, list(corpus.values()), "training scripts and notebooks")
