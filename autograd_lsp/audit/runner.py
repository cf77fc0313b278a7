"""Build the audit child's spec and run it in confirm's sandbox; turn what came back into a `RunResult`.

Pure stdlib: the parent never imports torch (the child, ``_child_run.py``, and the probes it execs are sent as text).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..confirm import sandbox
from ..source import Source

CHILD = Path(__file__).with_name("_child_run.py")
PROBES = Path(__file__).with_name("_child_probes.py")
DEFAULT_STEPS = 3
TIMEOUT_MARGIN_S = 2.0  # the child stops itself this long before the parent kills it, to report where it was

# Why a run ended early, as the report says it.
STOP_REASONS = {
    "data": "missing data file",
    "gpu": "missing GPU",
    "argument": "missing or bad argument",
    "timeout": "timeout",
    "memory": "memory limit",
    "write": "write outside the sandbox",
    "import": "missing module",
    "input": "waits for input",
    "exit": "the script exited",
    "exception": "exception",
    "syntax": "syntax error",
    "torch-missing": "torch missing",
    "probes": "probes failed to load",
    "killed": "killed",
    "start": "could not start",
}


@dataclass
class RunResult:
    findings: list[dict] = field(default_factory=list)  # {code, path, line, message, evidence}
    stopped: dict | None = None  # {reason, path, line, message}
    reached_lines: dict[str, set[int]] = field(default_factory=dict)
    loops: dict[str, int] = field(default_factory=dict)  # "path:line" -> iterations run
    duration_s: float = 0.0
    python: str = ""
    torch_version: str | None = None
    isolation: str = sandbox.NOT_ISOLATED
    isolation_note: str = ""
    output: str = ""
    probe_errors: list[str] = field(default_factory=list)
    timings: dict = field(default_factory=dict)  # seconds the child spent: starting (probes, torch) and in the script

    @property
    def started(self) -> bool:
        return self.stopped is None or self.stopped.get("reason") not in ("start", "torch-missing", "probes") and \
            not (self.stopped.get("reason") == "gpu" and self.stopped.get("line") is None)


def probes_text() -> str:
    """The package's probes (autograd_lsp/audit/_child_probes.py), as text; empty until they exist."""
    try:
        return PROBES.read_text(encoding="utf-8")
    except OSError:
        return ""


MAX_PROJECT_FILES = 5000
_NOT_PROJECT = {"site-packages", "dist-packages", "node_modules", "__pycache__", "build", "dist"}


def project_files(script: str) -> list[str]:
    """The script and the .py files of its project (confirm's workspace: the folder with pyproject.toml, setup.py
    or .git above it, else its own): modules it imports from there are the user's, bounded and watched too.
    Virtual environments and hidden folders inside the project are not the user's code."""
    files = [script]
    root = sandbox.workspace_of(script)
    if root is None:
        return files
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d not in _NOT_PROJECT
                         and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))]
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                if path != script:
                    files.append(path)
                    if len(files) >= MAX_PROJECT_FILES:
                        return files
    return files


def child_cells(source: Source) -> list[dict]:
    """What the child runs, in order: the whole script, or each notebook cell (IPython syntax masked) at its
    own lines of the joined program, so that lines match `check`'s."""
    if not source.cells:
        return [{"first_line": 1, "text": source.text}]
    lines = source.lines
    # an indented cell (IPython strips its indentation) runs with the `if True:` line the joined program has before it
    return [{"first_line": cell.first_line - cell.indented,
             "text": "\n".join(lines[cell.first_line - 1 - cell.indented: cell.first_line - 1 + cell.line_count]),
             "cell": cell.index + 1} for cell in source.cells]


def run(source: Source, argv: list[str], *, steps: int = DEFAULT_STEPS, device: str = "cpu", python: str | None = None,
        timeout: float = 60.0, memory_limit: int | None = 4 << 30, probes: str | None = None) -> RunResult:
    script = os.path.abspath(source.path)
    isolated = sandbox.isolation().kind == sandbox.ISOLATED
    spec = {
        "script": script,
        "user_files": project_files(script),
        "cells": child_cells(source),
        "argv": list(argv),
        "steps": steps,
        "timeout": timeout,
        "timeout_margin": min(TIMEOUT_MARGIN_S, timeout / 4),
        "probes": probes_text() if probes is None else probes,
        "mirror": isolated,
        "launched_at": time.time(),
        "notebook": bool(source.cells),
    }
    outcome = sandbox.run("", {}, probe=None, user_path=script, device=device, timeout=timeout, python=python,
                          memory_limit=memory_limit, harness=CHILD, spec_extra=spec)
    facts = outcome.facts or {}
    result = RunResult(
        findings=[f for f in facts.get("findings", []) if isinstance(f, dict) and f.get("code")],
        stopped=facts.get("stopped"),
        reached_lines={path: set(lines) for path, lines in (facts.get("reached_lines") or {}).items()},
        loops=dict(facts.get("loops") or {}),
        duration_s=outcome.duration_s,
        python=facts.get("executable") or outcome.python,
        torch_version=facts.get("torch_version"),
        isolation=outcome.isolation,
        isolation_note=outcome.isolation_note,
        output=outcome.output,
        probe_errors=list(facts.get("probe_errors") or []),
        timings=dict(facts.get("timings") or {}),
    )
    if outcome.extra.get("start_error"):
        result.stopped = {"reason": "start", "path": None, "line": None, "message": outcome.output}
    elif not facts.get("final"):
        # Killed from outside before its last word: the latest snapshot says what it saw and where it was.
        at = facts.get("running_at") or {}
        if outcome.timed_out:
            reason, message = "timeout", f"the run took longer than {timeout:g}s and was killed"
        elif outcome.killed_by:
            memory = outcome.killed_by == "SIGKILL" or "memory" in outcome.output.lower()
            reason = "memory" if memory else "killed"
            message = f"the run was killed by {outcome.killed_by}" + (" (the memory limit?)" if memory else "")
        else:
            reason, message = "killed", f"the child ended without a report (exit status {outcome.returncode})"
        tail = outcome.output.strip().splitlines()[-3:]
        if tail and reason != "timeout":
            message += ": " + " / ".join(tail)
        result.stopped = {"reason": reason, "path": at.get("path"), "line": at.get("line"), "message": message}
    elif facts.get("child_error"):
        result.stopped = {"reason": "exception", "path": None, "line": None, "message": facts["child_error"].strip().splitlines()[-1]}
    return result
