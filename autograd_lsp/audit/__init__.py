"""`autograd-lsp audit`: run the user's script (loops bounded) under every rule's runtime probe, in confirm's
sandbox, and merge what it observed with `check`'s findings of the same file. The parent side never imports torch."""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..checker import DEFAULT_SETTINGS, check_source
from ..config import Settings
from ..source import Source, SourceError, read_source
from .report import AuditFinding, merge
from .runner import DEFAULT_STEPS, RunResult, run

__all__ = ["AuditError", "AuditFinding", "AuditReport", "audit", "audit_source"]


class AuditError(Exception):
    """Nothing could run (the file cannot be read)."""


@dataclass
class AuditReport:
    source: Source
    findings: list[AuditFinding]
    run: RunResult
    steps: int
    display_path: str  # the path as the user gave it

    @property
    def path(self) -> str:
        return self.source.path


def audit_source(source: Source, argv: list[str] | tuple = (), *, steps: int = DEFAULT_STEPS, device: str = "cpu",
                 python: str | None = None, timeout: float = 60.0, memory_limit: int | None = 4 << 30,
                 settings: Settings = DEFAULT_SETTINGS, probes: str | None = None, resolver=None,
                 display_path: str | None = None) -> AuditReport:
    """Audit `source` (its path must exist: the script runs from its own folder's files). `probes`: the probes'
    text (default: the package's ``_child_probes.py``)."""
    source = Source(source.text, os.path.abspath(source.path), source.cells)
    static = [f for f in check_source(source, settings, resolver=resolver).findings]
    result = run(source, list(argv), steps=steps, device=device, python=python, timeout=timeout,
                 memory_limit=memory_limit, probes=probes)
    findings = merge(source, static, result, selected=lambda code: settings.enabled(code, source.path))
    return AuditReport(source, findings, result, steps, display_path or source.path)


def audit(path: str, argv: list[str] | tuple = (), steps: int = DEFAULT_STEPS, device: str = "cpu", python: str | None = None,
          timeout: float = 60.0, **options) -> AuditReport:
    try:
        source = read_source(path)
    except SourceError as error:
        raise AuditError(str(error)) from None
    return audit_source(source, argv, steps=steps, device=device, python=python, timeout=timeout,
                        display_path=options.pop("display_path", str(path)), **options)
