"""A description of the machine and software the figures were measured on (without importing torch)."""
from __future__ import annotations

import datetime
import importlib.metadata as metadata
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _mem_gib() -> str:
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "?"


def _version(dist: str, python: str | None = None) -> str:
    if python and python != sys.executable:
        try:
            out = subprocess.run([python, "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                                 capture_output=True, text=True, timeout=60)
            return out.stdout.strip() or "not installed"
        except OSError:
            return "?"
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "autograd_lsp"], cwd=REPO, capture_output=True, text=True, timeout=30).stdout.strip()
        return head + (" (+ uncommitted changes in autograd_lsp/)" if dirty else "")
    except OSError:
        return "?"


def describe(python: str) -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram": _mem_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True).stdout.strip(),
        "torch": _version("torch", python),
        "pygls": _version("pygls", python),
        "lsprotocol": _version("lsprotocol", python),
        "jedi": _version("jedi", python),
        "autograd-lsp": f"{_version('autograd-lsp', python)} @ {_git()}",
        "load_at_start": " ".join(f"{x:.2f}" if isinstance(x, float) else str(x) for x in load),
    }
