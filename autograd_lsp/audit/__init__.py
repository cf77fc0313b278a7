"""`autograd-lsp audit`: run the user's script (loops bounded) under every rule's runtime probe, in confirm's
sandbox, and merge what it observed with `check`'s findings of the same file. The parent side never imports torch."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..checker import DEFAULT_SETTINGS, check_source
from ..config import Settings
from ..source import Source, SourceError, read_source
from .report import AuditFinding, merge
from .runner import DEFAULT_STEPS, RunResult, run

__all__ = ["AuditError", "AuditFinding", "AuditReport", "AuditedFile", "audit", "audit_source"]


class AuditError(Exception):
    """Nothing could run (the file cannot be read)."""


@dataclass
class AuditedFile:
    """Another file of the user's project the script imported, with what the run observed in it."""

    display_path: str
    source: Source
    findings: list[AuditFinding]


@dataclass
class AuditReport:
    source: Source
    findings: list[AuditFinding]  # the script's
    run: RunResult
    steps: int
    display_path: str  # the path as the user gave it
    other_files: list[AuditedFile] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def files(self) -> list[AuditedFile]:
        """The script first, then each imported project file the run observed something in."""
        return [AuditedFile(self.display_path, self.source, self.findings), *self.other_files]

    @property
    def all_findings(self) -> list[AuditFinding]:
        return [a for f in self.files for a in f.findings]


def audit_source(source: Source, argv: list[str] | tuple = (), *, steps: int = DEFAULT_STEPS, device: str = "cpu",
                 python: str | None = None, timeout: float = 60.0, memory_limit: int | None = 4 << 30,
                 settings: Settings = DEFAULT_SETTINGS, probes: str | None = None, resolver=None,
                 display_path: str | None = None) -> AuditReport:
    """Audit `source` (its path must exist: the script runs from its own folder's files). `probes`: the probes'
    text (default: the package's ``_child_probes.py``)."""
    source = Source(source.text, os.path.abspath(source.path), source.cells)
    # The static check runs here while the child runs the script (another process: they overlap).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="autograd-lsp-audit-check") as pool:
        checking = pool.submit(check_source, source, settings, resolver=resolver)
        result = run(source, list(argv), steps=steps, device=device, python=python, timeout=timeout,
                     memory_limit=memory_limit, probes=probes)
        static = checking.result().findings
    selected = lambda code: settings.enabled(code, source.path)  # noqa: E731
    findings = merge(source, static, result, selected=selected)
    return AuditReport(source, findings, result, steps, display_path or source.path,
                       _imported_files(source.path, result, settings, resolver))


def _imported_files(script: str, result: RunResult, settings: Settings, resolver) -> list[AuditedFile]:
    """Project modules the script imported in which the run observed something: what it saw there, merged with
    their own static findings on those lines (a static finding the run did not see there is not listed)."""
    out = []
    for path in sorted({o.get("path") for o in result.findings} - {script, None}):
        try:
            other = read_source(path)
        except SourceError:
            continue
        merged = merge(other, check_source(other, settings, resolver=resolver).findings, result,
                       selected=lambda code, path=path: settings.enabled(code, path))
        observed = [a for a in merged if a.observed]
        if observed:
            out.append(AuditedFile(_display(path), other, observed))
    return out


def _display(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def audit(path: str, argv: list[str] | tuple = (), steps: int = DEFAULT_STEPS, device: str = "cpu", python: str | None = None,
          timeout: float = 60.0, **options) -> AuditReport:
    try:
        source = read_source(path)
    except SourceError as error:
        raise AuditError(str(error)) from None
    return audit_source(source, argv, steps=steps, device=device, python=python, timeout=timeout,
                        display_path=options.pop("display_path", str(path)), **options)
