"""Peer tools in their own virtual environments under bench/.work/ (never in the project venv).

flake8 gets a venv of its own because flake8 loads every installed plugin: in a venv that also holds
TorchFix (a flake8 plugin) it runs 6–8× slower (measured in the team's shared PERF.md notes).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
WORK_DIR = BENCH_DIR / ".work"

# Pinned for comparable figures; the versions actually used are printed in RESULTS.md.
TOOLS = {
    "flake8": ["flake8==7.5.0"],
    "torchfix": ["torchfix==0.7.0"],
}


class ToolUnavailable(RuntimeError):
    pass


def venv_dir(tool: str) -> Path:
    return WORK_DIR / f"{tool}-venv"


def tool_bin(tool: str, executable: str | None = None) -> Path:
    return venv_dir(tool) / "bin" / (executable or tool)


def ensure_tool(tool: str, quiet: bool = True) -> Path:
    """Create bench/.work/<tool>-venv with the pinned requirement; return the tool's executable."""
    exe = tool_bin(tool)
    stamp = venv_dir(tool) / ".requirements"
    wanted = "\n".join(TOOLS[tool])
    if exe.exists() and stamp.is_file() and stamp.read_text() == wanted:
        return exe
    venv = venv_dir(tool)
    python = _base_python()
    try:
        if not (venv / "bin" / "python").exists():
            _run([python, "-m", "venv", str(venv)], quiet)
        _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q", *TOOLS[tool]], quiet)
    except (OSError, subprocess.CalledProcessError) as error:
        raise ToolUnavailable(f"cannot install {tool} into {venv}: {error}") from None
    if not exe.exists():
        raise ToolUnavailable(f"{exe} missing after install")
    stamp.write_text(wanted)
    return exe


def tool_version(tool: str, dist: str | None = None) -> str:
    python = venv_dir(tool) / "bin" / "python"
    try:
        out = subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({(dist or tool)!r}))"],
                             capture_output=True, text=True, timeout=60)
        return out.stdout.strip() or "?"
    except OSError:
        return "?"


def _base_python() -> str:
    # the interpreter the project venv was built from (a venv's python can make venvs too, but be explicit)
    base = getattr(sys, "_base_executable", None)
    return base if base and os.path.exists(base) else sys.executable


def _run(cmd: list[str], quiet: bool) -> None:
    if not quiet:
        print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, capture_output=quiet, timeout=900)
