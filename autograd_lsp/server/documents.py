"""Document state: every open document or notebook is a *unit*, analysed as one text; a snapshot is the text
of a unit at one moment, an analysis what was found in it. The mixin answers the text-document and notebook
notifications."""
from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from ..analysis.incremental import IncrementalCheck
from ..findings import Finding
from ..lsp_convert import Place
from ..source import Source, join_cells


class Stopwatch:
    def __init__(self):
        self.start = time.perf_counter()

    @property
    def ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000


@dataclass
class Snapshot:
    key: tuple  # changes whenever any text of the unit changes
    source: Source
    uris: list[str]  # file: [uri]; notebook: code-cell uris in order (index = cell index in source.cells)
    versions: dict  # uri -> document version

    def locate(self, line: int) -> Place | None:
        text = self.source.line_text(line)
        if self.source.cells is None:
            return Place(self.uris[0], line - 1, text)
        cell = self.source.cell_of(line)
        if cell is None or cell[0] >= len(self.uris):
            return None
        return Place(self.uris[cell[0]], cell[1] - 1, text)

    def joined_line(self, uri: str, line0: int) -> int | None:
        """The 1-based analysed line of a 0-based line of `uri`."""
        if self.source.cells is None:
            return line0 + 1 if uri == self.uris[0] else None
        try:
            index = self.uris.index(uri)
        except ValueError:
            return None
        return self.source.cells[index].first_line + line0


@dataclass
class Analysis:
    snapshot: Snapshot
    findings: list[Finding]  # shown (the last good ones carried over while the text does not parse)
    model: object | None
    rule_errors: list[str]
    misses: int  # workspace names the fast pass could not resolve (→ background jedi pass)
    elapsed_ms: float
    content_hash: str
    carried: bool = False
    cross_module: bool = False  # produced by the jedi pass
    memo_version: int | None = None  # the memo's version the fast pass read (None: no resolver)

    def shown(self) -> list:
        """What the user sees of it: two analyses with equal `shown()` need not be published again."""
        return [(f.code, f.span, f.message, f.severity, len(f.fixes), f.related) for f in self.findings]


class Memo(dict):
    """A unit's memo (unparsed callee -> definition) with a version that changes with every write: a walk made
    with one version's answers is reused only while the version holds (analysis/incremental.py)."""

    version = 0

    def __setitem__(self, key, value):
        self.version += 1
        super().__setitem__(key, value)

    def __delitem__(self, key):
        self.version += 1
        super().__delitem__(key)

    def clear(self):
        self.version += 1
        super().clear()

    def pop(self, *args):
        self.version += 1
        return super().pop(*args)

    def popitem(self):
        self.version += 1
        return super().popitem()

    def setdefault(self, key, default=None):
        self.version += 1
        return super().setdefault(key, default)

    def update(self, *args, **kwargs):
        self.version += 1
        super().update(*args, **kwargs)


@dataclass(eq=False)
class Unit:
    key: str  # the document's uri, or the notebook's
    notebook: bool
    analysis: Analysis | None = None
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task | None = None
    dirty: bool = False
    waiters: list = field(default_factory=list)
    published: set = field(default_factory=set)  # uris that were last sent a non-empty list
    memo: dict = field(default_factory=Memo)  # jedi: unparsed callee -> definition
    incremental: IncrementalCheck = field(default_factory=IncrementalCheck)  # parses edits incrementally
    jedi_pending: bool = False
    generation: int = 0  # bumps whenever what the unit shows changes (pull result ids)
    last_edit: float = float("-inf")  # loop time of the last didChange (debounce)
    refresh_needed: bool = False  # settings changed: pull clients must be told to pull again
    opened_at: Stopwatch | None = None


def normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def uri_path(uri: str) -> str | None:
    try:
        return to_fs_path(uri) if uri.startswith("file:") else None
    except Exception:
        return None


def module_name(uri: str) -> str | None:
    """`helpers` for .../helpers.py, `pkg` for .../pkg/__init__.py; None for what is not a Python module."""
    path = Path(uri_path(uri) or "")
    if path.suffix not in (".py", ".pyi"):
        return None
    return path.parent.name if path.stem == "__init__" else path.stem


def is_python(uri: str, language_id: str | None) -> bool:
    return language_id in ("python", None) or uri.endswith((".py", ".pyi"))


class Documents:
    """The units of the open documents and notebooks, their snapshots, and what opening, editing, saving and
    closing one does."""

    def unit_for(self, uri: str) -> Unit | None:
        unit = self.units.get(uri)
        if unit is not None:
            return unit
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return self.units.get(notebook.uri) if notebook is not None else None

    def snapshot(self, unit: Unit) -> Snapshot | None:
        if not unit.notebook:
            try:
                document = self.workspace.get_text_document(unit.key)
            except Exception:
                return None
            raw = document.source
            return Snapshot((document.version, len(raw)), Source(normalise(raw), uri_path(unit.key)), [unit.key], {unit.key: document.version})
        notebook = self.workspace.get_notebook_document(notebook_uri=unit.key)
        if notebook is None:
            return None
        cells, uris, versions = [], [], {}
        for cell in notebook.cells:
            if cell.kind != types.NotebookCellKind.Code:
                continue
            try:
                document = self.workspace.get_text_document(cell.document)
            except Exception:
                continue
            if document.language_id not in (None, "python"):
                continue
            cells.append((len(uris), normalise(document.source)))
            uris.append(cell.document)
            versions[cell.document] = document.version
        source = join_cells(cells, uri_path(unit.key))
        key = (notebook.version, tuple(uris), tuple(versions[u] for u in uris), len(source.text))
        return Snapshot(key, source, uris, versions)

    def current_key(self, unit: Unit):
        if not unit.notebook:
            try:
                document = self.workspace.get_text_document(unit.key)
            except Exception:
                return None
            return document.version, len(document.source)
        snap = self.snapshot(unit)
        return snap.key if snap else None

    # -- notifications ---------------------------------------------------------------------------------
    def document_opened(self, uri: str, language_id: str | None):
        if not is_python(uri, language_id):
            return
        old = self.units.get(uri)
        if old is not None:
            self.clear(old)
        unit = self.units[uri] = Unit(uri, notebook=False, opened_at=Stopwatch())
        self.schedule(unit, 0)

    def notebook_opened(self, uri: str):
        unit = self.units[uri] = Unit(uri, notebook=True, opened_at=Stopwatch())
        self.schedule(unit, 0)

    def unit_changed(self, uri: str):
        unit = self.units.get(uri)
        if unit is not None:
            self.schedule(unit)

    def notebook_saved(self, uri: str):
        unit = self.units.get(uri)
        if unit is not None:
            self.schedule(unit, 0)

    def document_saved(self, uri: str):
        if uri.endswith("pyproject.toml"):
            self.project.clear()
            self.settings_changed()
            return
        for resolver in self.resolvers.values():
            resolver.forget_files()  # a new module can now be found where none was
        module = module_name(uri)
        for other in self.units.values():
            # a saved module can change what other files' imports resolve to: those that consulted one, or whose
            # text names this module (it may have been created just now), look again
            shown = other.analysis
            consulted = bool(other.memo) or bool(shown and (shown.misses or module and module in shown.snapshot.source.text))
            other.memo.clear()
            if consulted and other.key != uri:
                self.schedule(other)
        if self.workspace_changed is not None:
            self.workspace_changed.set()
        unit = self.units.get(uri)
        if unit is not None:
            self.schedule(unit, 0)

    def unit_closed(self, uri: str):
        unit = self.units.pop(uri, None)
        if unit is not None:
            self.clear(unit)

    def watched_files_changed(self, changes):
        if any(change.uri.endswith("pyproject.toml") for change in changes):
            self.project.clear()
            self.settings_changed()
        elif changes:
            for unit in self.units.values():
                unit.memo.clear()
            if self.workspace_changed is not None:
                self.workspace_changed.set()

    def clear(self, unit: Unit):
        self.retire(unit.analysis)
        self.with_model.pop(unit.key, None)
        if unit.timer is not None:
            unit.timer.cancel()
        if unit.task is not None and not unit.task.done():
            unit.task.cancel()
        for waiter in unit.waiters:
            if not waiter.done():
                waiter.cancel()
        if not self.pull_mode:
            uris = set(unit.published) | (set(unit.analysis.snapshot.uris) if unit.analysis else {unit.key})
            for uri in uris:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def stop_all(self):
        """shutdown: no analysis starts or goes on after the client said it is done."""
        for unit in self.units.values():
            if unit.timer is not None:
                unit.timer.cancel()
            if unit.task is not None and not unit.task.done():
                unit.task.cancel()
