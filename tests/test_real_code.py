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
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path, PurePosixPath

import pytest

from autograd_lsp.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(__file__).resolve().parent / ".cache" / "realcode"
PACKAGES = {"timm": "1.0.31", "kornia": "0.9.0", "pytorch-ignite": "0.5.5", "skorch": "1.4.0"}

# (path suffix inside the unpacked wheel, line, code, why this is a true bug of the library)
KNOWN: list[tuple[str, int, str, str]] = []

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
    wheels.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
               "--quiet", "--dest", str(wheels), f"{name}=={version}"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        pytest.fail(f"cannot download {name}=={version}: {error}")
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


def _cli_supports(flag: str) -> bool:
    result = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    return flag in result.stdout


def _relative(path: str, folders: dict[str, Path]) -> str:
    resolved = Path(path).resolve()
    for folder in folders.values():
        try:
            return resolved.relative_to(folder.resolve()).as_posix()
        except ValueError:
            continue
    return Path(path).as_posix()


def _describe(finding: dict, folders) -> str:
    return f"{_relative(finding['path'], folders)}:{finding['line']}: {finding['code']} {finding['message']}"


def test_known_entries_are_explained():
    for suffix, line, code, why in KNOWN:
        assert suffix.endswith(".py") and line > 0 and code.startswith("AG") and len(why.split()) >= 8, (suffix, line, code)


def test_real_code_has_no_false_positives(corpus: dict[str, Path]):
    files = sum(1 for folder in corpus.values() for _ in folder.rglob("*.py"))
    assert files >= MIN_FILES, f"only {files} Python files unpacked"
    select = ",".join(rule.code for rule in ALL_RULES)
    command = [sys.executable, "-m", "autograd_lsp", "check", *(str(folder) for folder in corpus.values()),
               "--format", "json", "--exit-zero", "--select", select]
    if _cli_supports("--no-cache"):
        command.append("--no-cache")  # measure (and check) a real analysis, not cache hits
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=CACHE, env=env, timeout=3600)
    elapsed = time.perf_counter() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the CLI and its worker processes, whatever the machine's load
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    assert result.returncode == 0, result.stderr[-3000:]
    crashes = [line for line in result.stderr.splitlines() if "failed on" in line and line.lstrip().startswith("rule AG")]
    assert not crashes, "rules crashed on real code:\n" + "\n".join(crashes[:20])
    findings = json.loads(result.stdout)

    timing = {"files": files, "wall_seconds": round(elapsed, 2), "cpu_seconds": round(cpu, 2), "cpu_ms_per_file": round(1000 * cpu / files, 1),
              "cpus": os.cpu_count(), "rules": select, "findings": len(findings)}
    (CACHE / "timing.json").write_text(json.dumps(timing, indent=2), encoding="utf-8")
    print(f"\nreal code: {files} files in {elapsed:.1f} s wall, {cpu:.1f} s CPU ({1000 * cpu / files:.0f} ms/file, "
          f"{os.cpu_count()} CPUs), {len(findings)} findings for {select}")

    known = {(suffix, line, code) for suffix, line, code, _ in KNOWN}
    matched = set()
    unexpected = []
    for finding in findings:
        path = _relative(finding["path"], corpus)
        key = next(((suffix, line, code) for suffix, line, code in known
                    if path.endswith(suffix) and finding["line"] == line and finding["code"] == code), None)
        if key is None:
            unexpected.append(finding)
        else:
            matched.add(key)
    assert not unexpected, f"{len(unexpected)} findings on correct library code (false positives?):\n" + "\n".join(
        _describe(finding, corpus) for finding in unexpected[:40])
    assert matched == known, f"KNOWN entries no longer reported: {sorted(known - matched)}"
