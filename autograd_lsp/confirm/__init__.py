"""Runtime confirmation: run the flagged code and check the rule's runtime signature.

    from autograd_lsp.confirm import confirm_finding
    result = confirm_finding(source, finding, device="cpu", timeout=30.0)
    result.status    # confirmed | not-reproduced | inconclusive | timeout | resource-limit
                     # | cuda-unavailable | torch-missing | error
    result.summary() # "confirmed on cpu (torch 2.13.0): RuntimeError: a leaf Variable ..."

``build_reproducer`` (``reproducer.py``) makes the smallest program that exercises the finding from
the user's own code; ``sandbox.py`` runs it in a separate, limited process of the configured
interpreter (isolated by bubblewrap where it can be; ``result.isolation`` says), with ``_harness.py``, which is the only code that imports torch; ``verdict.py`` compares
what happened with the rule's runtime signature (``signatures.py``).

Importing this package never imports torch, and nothing runs until ``confirm_finding`` is called.
"""
from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from ..findings import Finding
from ..source import Source
from .reproducer import Inconclusive, Reproducer, build as _build
from .signatures import SIGNATURES, RuntimeSignature, signature_of

__all__ = [
    "ConfirmResult",
    "Inconclusive",
    "Reproducer",
    "RuntimeSignature",
    "SIGNATURES",
    "STATUSES",
    "build_reproducer",
    "clear_cache",
    "confirm_finding",
    "signature_of",
]

STATUSES = ("confirmed", "not-reproduced", "inconclusive", "timeout", "resource-limit", "cuda-unavailable", "torch-missing", "error")
DEVICES = ("cpu", "cuda")
CACHE_SIZE = 128


@dataclass
class ConfirmResult:
    status: str
    code: str
    path: str | None
    line: int
    device: str
    observed: str  # exception type and first line, or the symptom measured, or why there is no verdict
    user_line: int | None  # the line of the user's file where it happened
    duration_s: float
    python: str  # the interpreter that ran it
    torch_version: str | None
    reproducer: str = ""  # the program that ran ("" when none could be built)
    python_version: str | None = None  # of the interpreter that ran it
    forward_line: int | None = None  # for backward errors: the forward op (from anomaly detection)
    user_cell: tuple[int, int] | None = None  # notebooks: (cell index, line in cell) of user_line
    mode: str | None = None  # script | function | method | class
    notes: list[str] = field(default_factory=list)  # what the reproducer rewrote
    output: str = ""  # captured stdout+stderr of the run (capped)
    workdir: str | None = None  # the temporary directory it ran in (deleted afterwards)
    cached: bool = False
    isolation: str | None = None  # "bubblewrap" (sandboxed) or "none" (not isolated); None when nothing ran
    isolation_note: str = ""  # why it was not isolated

    def to_json(self, include_reproducer: bool = False) -> dict:
        data = {
            "status": self.status,
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "device": self.device,
            "observed": self.observed,
            "user_line": self.user_line,
            "duration_s": round(self.duration_s, 3),
            "python": self.python,
            "torch_version": self.torch_version,
            "python_version": self.python_version,
            "forward_line": self.forward_line,
            "user_cell": list(self.user_cell) if self.user_cell else None,
            "mode": self.mode,
            "notes": list(self.notes),
            "isolation": self.isolation,
        }
        if self.isolation == "none":
            data["isolation_note"] = f"not isolated: {self.isolation_note}"
        if include_reproducer:
            data["reproducer"] = self.reproducer
        return data

    def summary(self) -> str:
        torch = f" (torch {self.torch_version})" if self.torch_version else ""
        where = ""
        if self.user_line and self.status == "confirmed":
            where = f" at line {self.user_line}"
            if self.user_cell:
                where += f" (cell {self.user_cell[0] + 1}, line {self.user_cell[1]})"
        heads = {
            "confirmed": f"confirmed on {self.device}{torch}{where}",
            "not-reproduced": f"not reproduced on {self.device}{torch}",
            "inconclusive": f"inconclusive on {self.device}{torch}",
            "timeout": f"timeout on {self.device}",
            "resource-limit": f"resource limit hit on {self.device}",
            "cuda-unavailable": "cuda unavailable",
            "torch-missing": "torch missing",
            "error": "error",
        }
        text = f"{heads.get(self.status, self.status)}: {self.observed}"
        if self.isolation == "none":
            text += f" [not isolated: {self.isolation_note}]"
        return text


def build_reproducer(source: Source, finding: Finding) -> Reproducer | Inconclusive:
    """The program that exercises `finding` from `source`, or why none can be built soundly."""
    return _build(source, finding)


_cache: OrderedDict[tuple, ConfirmResult] = OrderedDict()
_cache_lock = threading.Lock()


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def _cache_key(source: Source, finding: Finding, device: str, python: str, memory_limit, timeout) -> tuple:
    from .sandbox import isolation

    digest = hashlib.sha256(source.text.encode("utf-8", "surrogatepass")).hexdigest()
    return (digest, source.path, finding.code, finding.span.line, device, python, memory_limit, timeout, isolation().kind)


def confirm_finding(
    source: Source,
    finding: Finding,
    device: str = "cpu",
    timeout: float = 30.0,
    python: str | None = None,
    memory_limit: int | None = 4 << 30,
    use_cache: bool = True,
) -> ConfirmResult:
    """Run the reproducer for `finding` in a sandboxed child process and judge it (blocking).

    Results are cached in-process per (file content, path, code, line, device, interpreter, limits);
    statuses that say nothing about the code (timeout, error) are not cached.
    """
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    python = python or sys.executable
    key = _cache_key(source, finding, device, python, memory_limit, timeout)
    if use_cache:
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
                return _replace(hit, cached=True)
    result = _confirm(source, finding, device, timeout, python, memory_limit)
    if use_cache and result.status not in ("timeout", "error"):
        with _cache_lock:
            _cache[key] = result
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return result


def _replace(result: ConfirmResult, **changes) -> ConfirmResult:
    from dataclasses import replace

    return replace(result, **changes)


def _confirm(source: Source, finding: Finding, device: str, timeout: float, python: str, memory_limit) -> ConfirmResult:
    from . import sandbox, verdict

    started = time.perf_counter()
    code = finding.code.upper()
    signature = signature_of(code)
    base = dict(code=code, path=source.path, line=finding.span.line, device=device, python=python)
    if signature is None:
        return ConfirmResult("inconclusive", observed=f"{code} has no runtime signature", user_line=None,
                             duration_s=time.perf_counter() - started, torch_version=None, **base)
    reproducer = build_reproducer(source, finding)
    if isinstance(reproducer, Inconclusive):
        return ConfirmResult("inconclusive", observed=f"no sound reproducer: {reproducer.reason}", user_line=None,
                             duration_s=time.perf_counter() - started, torch_version=None, **base)
    attempts = [reproducer]
    while True:
        outcome = sandbox.run(
            reproducer.code, reproducer.line_map, probe=reproducer.probe, user_path=source.path,
            device=device, timeout=timeout, python=python, memory_limit=memory_limit,
        )
        judged = verdict.decide(signature, reproducer, outcome, timeout, memory_limit)
        # Script mode ran the module but never reached a flagged function/method: call it directly.
        if judged.status == "inconclusive" and "never executed" in judged.observed and reproducer.mode == "script" and len(attempts) == 1:
            alternative = _build(source, finding, force_mode="entry")
            if isinstance(alternative, Reproducer):
                attempts.append(alternative)
                reproducer = alternative
                remaining = timeout - (time.perf_counter() - started)
                if remaining > 1:
                    timeout = remaining
                    continue
        break
    facts = outcome.facts or {}
    user_line = judged.user_line
    return ConfirmResult(
        judged.status,
        observed=judged.observed,
        user_line=user_line,
        duration_s=time.perf_counter() - started,
        torch_version=facts.get("torch_version"),
        python_version=facts.get("python"),
        reproducer=reproducer.code,
        forward_line=judged.forward_line,
        user_cell=source.cell_of(user_line) if user_line else None,
        mode=reproducer.mode,
        notes=list(reproducer.notes),
        output=outcome.output,
        workdir=outcome.workdir,
        isolation=outcome.isolation,
        isolation_note=outcome.isolation_note,
        **base,
    )
