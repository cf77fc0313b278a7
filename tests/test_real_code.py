"""Every rule on real, correct PyTorch code: the wheels of timm, kornia, pytorch-ignite and skorch.

Precision comes first: a finding on released library code is a false positive (a rule bug, to be fixed
with a fixture that reproduces it) unless it is a true bug of the library, in which case it is listed in
KNOWN with the reason it is one. The test fails on any other finding, and on a KNOWN entry that no longer
appears (so the list cannot go stale).

The wheels are fetched once with `pip download --no-deps --only-binary=:all:` into tests/.cache/realcode/
(git-ignored) and unpacked there; pinned versions keep the line numbers of KNOWN meaningful. Without network
access and without a cached wheel the test fails (PyPI is reachable wherever it runs). The checker runs as the user runs it: a subprocess of
`python -m autograd_lsp check <dirs> --format json --exit-zero --select <every rule>`, cross-module
resolution on. The analysis time is printed and written to tests/.cache/realcode/timing.json.
"""
from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path, PurePosixPath

import pytest

from realcode_support import Known, assert_known_explained, assert_only_known, pip_download, run_check

CACHE = Path(__file__).resolve().parent / ".cache" / "realcode"
PACKAGES = {"timm": "1.0.31", "kornia": "0.9.0", "pytorch-ignite": "0.5.5", "skorch": "1.4.0"}

# (path suffix inside the unpacked wheel, line, code, why this is a true bug of the library)
KNOWN: list[Known] = []

MIN_FILES = 900  # the four wheels hold ~1000 Python files; far fewer means the download or unpacking broke


def _wheel(directory: Path, name: str, version: str) -> Path | None:
    stem = name.replace("-", "_").lower()
    for path in sorted(directory.glob("*.whl")):
        parts = path.name.split("-")
        if len(parts) >= 2 and parts[0].lower() == stem and parts[1] == version:
            return path
    return None


def _download(name: str, version: str, wheels: Path) -> Path:
    found = _wheel(wheels, name, version)
    if found is not None:
        return found
    result = pip_download(f"{name}=={version}", wheels, binary=True)
    found = _wheel(wheels, name, version)
    if found is None:
        pytest.fail(f"cannot download {name}=={version} (no network?): {(result.stderr or result.stdout)[-400:]}")
    return found


def _unpack(wheel: Path, target: Path) -> None:
    """Only the .py files, and only paths that stay inside `target`."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            path = PurePosixPath(member.filename)
            if member.is_dir() or path.suffix != ".py" or path.is_absolute() or ".." in path.parts:
                continue
            destination = target.joinpath(*path.parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(archive.read(member))
    (target / ".complete").write_text(wheel.name, encoding="utf-8")


@pytest.fixture(scope="module")
def corpus() -> dict[str, Path]:
    folders = {}
    for name, version in PACKAGES.items():
        target = CACHE / "src" / f"{name}-{version}"
        if not (target / ".complete").is_file():
            _unpack(_download(name, version, CACHE / "wheels"), target)
        folders[name] = target
    return folders


def test_known_entries_are_explained():
    assert_known_explained(KNOWN)


def test_real_code_has_no_false_positives(corpus: dict[str, Path]):
    files = sum(1 for folder in corpus.values() for _ in folder.rglob("*.py"))
    assert files >= MIN_FILES, f"only {files} Python files unpacked"
    run = run_check(list(corpus.values()), CACHE)
    timing = {"files": files, "wall_seconds": round(run.wall, 2), "cpu_seconds": round(run.cpu, 2), "cpu_ms_per_file": round(1000 * run.cpu / files, 1),
              "cpus": os.cpu_count(), "rules": run.select, "findings": len(run.findings)}
    (CACHE / "timing.json").write_text(json.dumps(timing, indent=2), encoding="utf-8")
    print(f"\nreal code: {files} files in {run.wall:.1f} s wall, {run.cpu:.1f} s CPU ({1000 * run.cpu / files:.0f} ms/file, "
          f"{os.cpu_count()} CPUs), {len(run.findings)} findings for {run.select}")
    assert_only_known(run.findings, KNOWN, list(corpus.values()), "library code")
