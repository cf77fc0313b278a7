"""Shared by the correct-code corpus tests (test_real_code, test_real_scripts): fetch pinned distributions with pip,
run the CLI over the unpacked folders as a user runs it, and match its findings against a KNOWN list of true bugs."""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograd_lsp.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent

# (path suffix inside the unpacked distribution, line, code, why this is a true bug of that code)
Known = tuple[str, int, str, str]


@contextlib.contextmanager
def cache_lock(directory: Path):
    """Held while a cache folder is filled: test files run in parallel (pytest-xdist) and two of them
    (test_real_scripts, test_audit_real_scripts) download and unpack into the same folder."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def pip_download(spec: str, dest: Path, binary: bool) -> subprocess.CompletedProcess:
    """`pip download --no-deps` of one pinned requirement: the wheel (binary) or the source distribution."""
    dest.mkdir(parents=True, exist_ok=True)
    kind = "--only-binary=:all:" if binary else "--no-binary=:all:"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", kind, "--disable-pip-version-check",
               "--quiet", "--dest", str(dest), spec]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        pytest.fail(f"cannot download {spec}: {error}")


def cli_supports(flag: str) -> bool:
    result = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    return flag in result.stdout


@dataclass
class Run:
    findings: list[dict]
    wall: float
    cpu: float
    select: str


def run_check(folders: list[Path], cwd: Path) -> Run:
    """Every rule over `folders` through the CLI subprocess (cross-module on, no cache); fails on rule crashes."""
    select = ",".join(rule.code for rule in ALL_RULES)
    command = [sys.executable, "-m", "autograd_lsp", "check", *(str(folder) for folder in folders),
               "--format", "json", "--exit-zero", "--select", select]
    if cli_supports("--no-cache"):
        command.append("--no-cache")  # measure (and check) a real analysis, not cache hits
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=3600)
    wall = time.perf_counter() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the CLI and its worker processes, whatever the machine's load
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    assert result.returncode == 0, result.stderr[-3000:]
    crashes = [line for line in result.stderr.splitlines() if "failed on" in line and line.lstrip().startswith("rule AG")]
    assert not crashes, "rules crashed on real code:\n" + "\n".join(crashes[:20])
    return Run(json.loads(result.stdout), wall, cpu, select)


def relative(path: str, folders) -> str:
    resolved = Path(path).resolve()
    for folder in folders:
        try:
            return resolved.relative_to(folder.resolve()).as_posix()
        except ValueError:
            continue
    return Path(path).as_posix()


def describe(finding: dict, folders) -> str:
    return f"{relative(finding['path'], folders)}:{finding['line']}: {finding['code']} {finding['message']}"


def assert_known_explained(known: list[Known]) -> None:
    for suffix, line, code, why in known:
        assert suffix.endswith((".py", ".ipynb")) and line > 0 and code.startswith("AG") and len(why.split()) >= 8, (suffix, line, code)


def assert_only_known(findings: list[dict], known_entries: list[Known], folders, what: str) -> None:
    """Every finding is a KNOWN true bug, and every KNOWN entry is still reported (so the list cannot go stale)."""
    known = {(suffix, line, code) for suffix, line, code, _ in known_entries}
    matched = set()
    unexpected = []
    for finding in findings:
        path = relative(finding["path"], folders)
        key = next(((suffix, line, code) for suffix, line, code in known
                    if path.endswith(suffix) and finding["line"] == line and finding["code"] == code), None)
        if key is None:
            unexpected.append(finding)
        else:
            matched.add(key)
    assert not unexpected, f"{len(unexpected)} findings on correct {what} (false positives?):\n" + "\n".join(
        describe(finding, folders) for finding in unexpected[:40])
    assert matched == known, f"KNOWN entries no longer reported: {sorted(known - matched)}"
