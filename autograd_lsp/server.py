"""The language server (`autograd-lsp serve`): LSP types at the edge, each handler a few lines that delegate
to the checker, the rule catalog, fixes and the confirm runner.

Timing model (see PERF.md): every open document or notebook is a *unit*, analysed on one worker thread.
An edit after a quiet spell is analysed at once; edits that follow within the debounce window only restart
a timer, so a burst ends in one analysis of its newest version, and a result whose version is no longer
current is dropped, never published. The fast pass never asks jedi: names from other workspace modules are
answered from what the last background jedi pass learned, and a pass runs only when something was missing,
re-publishing if the findings change. torch is never imported here; confirmations run it in a subprocess.
"""
from __future__ import annotations

import ast
import asyncio
import collections
import concurrent.futures
import gc
import hashlib
import itertools
import logging
import queue
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from . import __version__
from .checker import check_source
from .findings import Finding, Safety, Severity, Span
from .fixes import choose_fixes
from .lsp_convert import (
    DiagnosticSupport, Place, finding_key, from_position, span_contains, spans_overlap, text_edits, to_diagnostic,
    to_range, workspace_edit,
)
from .noqa import add_noqa_edit
from .rules import SYNTAX_ERROR_CODE, find_rule
from .server_state import (
    SECTION, ClientOptions, ProjectSettings, Stopwatch, carry_over, describe_provenance, node_at,
    parse_client_options, unwrap,
)
from .source import Source, join_cells

log = logging.getLogger(__name__)

FIX_ALL_KIND = "source.fixAll.autograd-lsp"
CMD_CONFIRM = "autograd-lsp.confirm"
CMD_RULE_DOC = "autograd-lsp.showRuleDoc"
CMD_FIX_ALL = "autograd-lsp.fixAll"
CMD_SERVER_INFO = "autograd-lsp.serverInfo"
VERDICTS = ("confirmed", "not-reproduced", "inconclusive")  # confirm statuses that say something about the code
MAX_CHARS = 10_000_000  # ≈ 200k lines: past this a file is generated data, not code someone is editing
IDLE_COLLECT_S = 2.0  # a full GC this long after the last publish (measured: rare automatic ones cut the p95)
KEEP_MODELS = 8  # analysis models kept (for hover) of the most recently analysed units; others re-analyse on hover
GC_THRESHOLDS = (20_000, 50, 100)  # instead of (700, 10, 10): an ast.parse of 2,000 lines no longer triggers several


class DaemonExecutor(concurrent.futures.Executor):
    """One daemon worker thread running jobs in order: analyses never pile up threads, and exit never waits
    for a jedi pass or a workspace scan still running."""

    def __init__(self, name: str):
        self._name = name
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, fn, /, *args, **kwargs):
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._jobs.put((future, fn, args, kwargs))
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                self._thread.start()
        return future

    def _work(self):
        while True:
            future, fn, args, kwargs = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:  # handed to whoever awaits the future
                future.set_exception(error)

    def shutdown(self, wait=True, *, cancel_futures=False):
        pass


# -- cross-module names --------------------------------------------------------------------------------
_MISSING = object()


class MemoResolver:
    """The fast pass's resolver: answers from the jedi memo and counts names it could not answer. A miss
    behaves exactly like having no resolver at all, so the fast pass is never wrong, only less informed."""

    def __init__(self, memo: dict):
        self.memo = memo
        self.misses = 0

    def resolve(self, source, node, qualname=None):
        key = ast.unparse(node)
        definition = self.memo.get(key, _MISSING)
        if definition is _MISSING:
            self.misses += 1
            return None
        return definition


class RecordingResolver:
    """Wraps a JediResolver and writes what it learns into the memo."""

    def __init__(self, jedi_resolver, memo: dict):
        self.jedi = jedi_resolver
        self.memo = memo

    def resolve(self, source, node, qualname=None):
        definition = self.jedi.resolve(source, node, qualname=qualname)
        self.jedi.complete(definition)  # the fast pass (main thread) reads its summaries without walking
        self.memo[ast.unparse(node)] = definition
        return definition


# -- units: what one analysis covers -------------------------------------------------------------------
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
    memo: dict = field(default_factory=dict)  # jedi: unparsed callee -> definition
    jedi_pending: bool = False
    generation: int = 0  # bumps whenever what the unit shows changes (pull result ids)
    last_edit: float = float("-inf")  # loop time of the last didChange (debounce)
    refresh_needed: bool = False  # settings changed: pull clients must be told to pull again
    opened_at: Stopwatch | None = None


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _uri_path(uri: str) -> str | None:
    try:
        return to_fs_path(uri) if uri.startswith("file:") else None
    except Exception:
        return None


class AutogradProtocol(LanguageServerProtocol):
    """pygls cancels a `workspace/executeCommand` request's response but not the command's coroutine (it runs
    as an inner task); commands register here to be cancelled with their request."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cancel_callbacks: dict = {}

    def _handle_cancel_notification(self, msg_id):
        for callback in self.cancel_callbacks.pop(msg_id, []):
            callback()
        super()._handle_cancel_notification(msg_id)


class AutogradLanguageServer(LanguageServer):
    def __init__(self):
        super().__init__(
            "autograd-lsp",
            __version__,
            protocol_cls=AutogradProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(
                    cells=[types.NotebookCellLanguage(language="python")], notebook="*")],
                save=True,
            ),
        )
        self.units: dict[str, Unit] = {}
        self.options = ClientOptions()
        self.options_seq = 0  # bumps on every settings change (a slow workspace/configuration answer must not undo a newer push)
        self.init_options_raw = None
        self.project = ProjectSettings()
        self.check_executor = DaemonExecutor("autograd-lsp-check")
        self.jedi_executor = DaemonExecutor("autograd-lsp-jedi")
        self.workspace_executor = DaemonExecutor("autograd-lsp-workspace")
        self.confirmations: dict = {}  # (content hash, finding key, device, python) -> ConfirmResult
        self.confirmed_text: dict = {}  # (content hash, finding key) -> summary shown in the message
        self.resolvers: dict = {}
        self.with_model: collections.OrderedDict = collections.OrderedDict()  # unit key -> unit whose model is kept, newest last
        self.logged_errors: set = set()
        self.timings: dict = {"open_ms": [], "check_ms": []}
        self.pull_mode = False
        self.workspace_changed: asyncio.Event | None = None
        self.settings_generation = 0
        self._progress_ids = itertools.count(1)
        self._gc_timer: asyncio.TimerHandle | None = None

    # -- capabilities ----------------------------------------------------------------------------------
    @property
    def encoding(self):
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    @property
    def support(self) -> DiagnosticSupport:
        return DiagnosticSupport.of(self.client_capabilities, self.pull_mode)

    def client_has(self, *path: str) -> bool:
        value = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
            if value is None:
                return False
        return bool(value)

    @property
    def markdown(self) -> bool:
        hover = self.client_capabilities.text_document.hover if self.client_capabilities.text_document else None
        formats = hover.content_format if hover else None
        return not formats or types.MarkupKind.Markdown in formats

    @property
    def resolve_edits(self) -> bool:
        code_action = self.client_capabilities.text_document.code_action if self.client_capabilities.text_document else None
        resolve = code_action.resolve_support if code_action else None
        return bool(resolve and "edit" in resolve.properties and code_action.data_support)

    @property
    def document_changes(self) -> bool:
        return self.client_has("workspace", "workspace_edit", "document_changes")

    @property
    def root(self) -> str | None:
        try:
            return self.workspace.root_path
        except Exception:
            return None

    # -- messages --------------------------------------------------------------------------------------
    def log_message(self, message: str, kind=types.MessageType.Log):
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show_message(self, message: str, kind=types.MessageType.Info):
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    # -- settings --------------------------------------------------------------------------------------
    def apply_options(self, raw, origin: str) -> bool:
        options, problems = parse_client_options(raw)
        if problems:
            self.show_message(f"autograd-lsp: invalid {origin}: " + "; ".join(problems) + " — using the defaults for those",
                              types.MessageType.Warning)
        changed = options != self.options
        self.options = options
        self.options_seq += 1
        return changed

    def settings_for(self, path: str | None):
        base = self.project.for_path(path, self.root)
        for problem in self.project.problems:
            self.show_message(f"autograd-lsp: {problem}", types.MessageType.Warning)
        self.project.problems.clear()
        try:
            return self.options.apply(base)
        except Exception as error:  # validated already; a crash here must still not stop analysis
            self.log_message(f"settings: {error}", types.MessageType.Warning)
            return base

    async def pull_configuration(self):
        if not self.client_has("workspace", "configuration"):
            return
        seq = self.options_seq
        try:
            items = await asyncio.wait_for(self.workspace_configuration_async(types.ConfigurationParams(
                items=[types.ConfigurationItem(section=SECTION, scope_uri=self.workspace.root_uri)])), 10)
        except Exception as error:
            self.log_message(f"workspace/configuration failed: {error}", types.MessageType.Warning)
            return
        if seq != self.options_seq:
            return  # settings pushed while we asked are newer than the answer
        value = items[0] if items else None
        if value is None or value == {}:
            value = self.init_options_raw  # the client has nothing under our section: keep initializationOptions
        if self.apply_options(value, f"{SECTION} settings"):
            self.settings_changed()

    def settings_changed(self):
        self.settings_generation += 1
        for unit in list(self.units.values()):
            unit.refresh_needed = True
            self.schedule(unit, 0)
        if self.workspace_changed is not None:
            self.workspace_changed.set()

    # -- units -----------------------------------------------------------------------------------------
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
            return Snapshot((document.version, len(raw)), Source(_normalise(raw), _uri_path(unit.key)), [unit.key], {unit.key: document.version})
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
            cells.append((len(uris), _normalise(document.source)))
            uris.append(cell.document)
            versions[cell.document] = document.version
        source = join_cells(cells, _uri_path(unit.key))
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

    def schedule(self, unit: Unit, delay_ms: float | None = None):
        """Analyse soon. An edit after a quiet spell is analysed at once (leading edge: a lone keystroke waits
        for nothing); edits that follow within the debounce window only restart a timer (trailing edge), so a
        burst costs at most two analyses, the last of the newest text."""
        loop = asyncio.get_running_loop()
        delay = (self.options.debounce_ms if delay_ms is None else delay_ms) / 1000
        now = loop.time()
        quiet = now - unit.last_edit >= delay
        if delay_ms is None:
            unit.last_edit = now
        if unit.timer is not None:
            unit.timer.cancel()
            unit.timer = None
        running = unit.task is not None and not unit.task.done()
        if delay <= 0 or (quiet and not running):
            self._kick(unit)
        else:
            unit.timer = loop.call_later(delay, self._kick, unit)

    def _kick(self, unit: Unit):
        unit.timer = None
        if self.units.get(unit.key) is not unit:
            return
        if unit.task is not None and not unit.task.done():
            unit.dirty = True  # the running analysis goes round once more with the newest text
            return
        unit.task = asyncio.get_running_loop().create_task(self._run(unit))

    async def _run(self, unit: Unit):
        try:
            await self._analyse_until_current(unit)
        except asyncio.CancelledError:
            raise
        except Exception:  # never let one document's failure go unnoticed or stop the others
            self.log_message(f"analysis of {unit.key} failed:\n{traceback.format_exc()}", types.MessageType.Error)

    async def _analyse_until_current(self, unit: Unit):
        loop = asyncio.get_running_loop()
        while self.units.get(unit.key) is unit:
            unit.dirty = False
            snap = self.snapshot(unit)
            if snap is None:
                return
            settings = self.settings_for(snap.source.path)
            analysis = await loop.run_in_executor(self.check_executor, self.analyse, unit, snap, settings, unit.analysis)
            if self.units.get(unit.key) is not unit:
                self.retire(analysis)
                return
            if self.current_key(unit) != snap.key:
                # superseded while analysing: never publish it; a pending timer or `dirty` brings the newest
                self.retire(analysis)
                if unit.timer is not None and not unit.dirty:
                    return
                continue
            self.store(unit, analysis)
            if not unit.dirty:
                return

    def analyse(self, unit: Unit, snap: Snapshot, settings, shown: Analysis | None) -> Analysis:
        """Runs on the check thread: the fast pass; while the text does not parse, the findings last shown
        (`shown`) that lie outside the edit are carried over, so the editor does not flicker to nothing."""
        watch = Stopwatch()
        resolver = MemoResolver(unit.memo) if self.options.cross_module and snap.source.path else None
        try:
            if len(snap.source.text) > MAX_CHARS:
                message = f"not analysed: {len(snap.source.text):,} characters is more than autograd-lsp reads ({MAX_CHARS:,})"
                return Analysis(snap, [Finding(SYNTAX_ERROR_CODE, "too-large", Severity.INFO, message, Span(1, 0, 1, 0))],
                                None, [], 0, watch.ms, _hash(snap.source.text))
            result = check_source(snap.source, settings, resolver=resolver)
            findings, model, errors = result.findings, result.model, result.rule_errors
        except Exception:  # the checker guards rules; this is the last line of defence for the server
            errors = [f"analysis of {unit.key} failed:\n{traceback.format_exc()}"]
            findings, model = [], None
        carried = False
        if model is None and shown is not None and any(f.code == SYNTAX_ERROR_CODE for f in findings):
            error = next(f for f in findings if f.code == SYNTAX_ERROR_CODE)
            try:
                findings = [error, *carry_over(shown.snapshot.source.text, shown.findings, snap.source.text, error)]
                carried = True
            except Exception:
                errors.append(f"keeping findings failed:\n{traceback.format_exc()}")
        return Analysis(snap, findings, model, errors, resolver.misses if resolver else 0, watch.ms, _hash(snap.source.text), carried)

    def store(self, unit: Unit, analysis: Analysis, background: bool = False):
        """Make an analysis current: remember it, publish it, wake pull requests, maybe start a jedi pass.
        `background`: nothing the client did asked for it (jedi pass, settings): pull clients get a refresh."""
        previous = unit.analysis
        unit.analysis = analysis
        self.retire(previous, keep=analysis)
        self.keep_model(unit)
        if previous is None or _shown(previous) != _shown(analysis) or previous.snapshot.versions != analysis.snapshot.versions:
            unit.generation += 1
        self.timings["check_ms"].append(round(analysis.elapsed_ms, 2))
        del self.timings["check_ms"][:-200]
        if unit.opened_at is not None:
            self.timings["open_ms"].append(round(unit.opened_at.ms, 2))
            unit.opened_at = None
        for error in analysis.rule_errors:
            first_line = error.splitlines()[0]
            if first_line not in self.logged_errors:
                self.logged_errors.add(first_line)
                self.log_message(error, types.MessageType.Error)
        background = background or unit.refresh_needed
        unit.refresh_needed = False
        self.publish(unit, force=background and not unit.waiters)
        self.collect_when_idle()
        waiters, unit.waiters = unit.waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(analysis)
        if analysis.misses and not unit.jedi_pending:
            self.start_jedi_pass(unit, analysis)

    def retire(self, analysis: Analysis | None, keep: Analysis | None = None):
        """An analysis nobody will show again: release its model (break its reference cycles) so it is freed at
        once. Garbage models, ~10 MB each for 2,000 lines, otherwise piled up while the user typed and were
        freed by full collections that paused the server for up to a second. Released on the next turn of the
        event loop: a request handler that was just handed this analysis runs first."""
        model = analysis.model if analysis is not None else None
        if keep is None or keep.model is not model:
            self.retire_model(model)

    def keep_model(self, unit: Unit):
        """A model is ~20x its text in memory and only hover reads it: keep those of the last KEEP_MODELS units
        analysed (what the user is working on); the others are dropped and rebuilt when hovered."""
        self.with_model.pop(unit.key, None)
        self.with_model[unit.key] = unit
        while len(self.with_model) > KEEP_MODELS:
            _, oldest = self.with_model.popitem(last=False)
            if oldest.analysis is not None and oldest.analysis.model is not None:
                self.retire_model(oldest.analysis.model)
                oldest.analysis.model = None

    async def model_of(self, unit: Unit, analysis: Analysis):
        """The model of a shown analysis, rebuilt (same text, same memo) when it was dropped to save memory."""
        if analysis.model is not None or any(f.code == SYNTAX_ERROR_CODE for f in analysis.findings):
            return analysis.model  # (text that does not parse, or too large to read, has no model to rebuild)
        snap = analysis.snapshot
        settings = self.settings_for(snap.source.path)
        resolver = MemoResolver(unit.memo) if self.options.cross_module and snap.source.path else None
        try:
            result = await asyncio.get_running_loop().run_in_executor(
                self.check_executor, lambda: check_source(snap.source, settings, resolver=resolver))
        except Exception:  # it failed when first analysed too: hover still shows the findings
            return None
        if unit.analysis is analysis and analysis.model is None and result.model is not None:
            analysis.model = result.model
            self.keep_model(unit)
            return result.model
        self.retire_model(result.model)
        return analysis.model

    def retire_model(self, model):
        if model is not None:
            asyncio.get_running_loop().call_soon(model.release)

    def collect_when_idle(self):
        """Full garbage collections (old models are cyclic garbage) run when the user stops typing, not in the
        middle of an analysis: the automatic ones are made rare at start-up (see serve())."""
        if self._gc_timer is not None:
            self._gc_timer.cancel()
        self._gc_timer = asyncio.get_running_loop().call_later(IDLE_COLLECT_S, self._collect)

    def _collect(self):
        self._gc_timer = None
        if any(unit.task is not None and not unit.task.done() or unit.timer is not None for unit in self.units.values()):
            self.collect_when_idle()
            return
        # Everything still alive after a full collection is frozen: the automatic collections while the user
        # types then scan only what was made since (superseded models are released, not left to the collector).
        gc.unfreeze()
        gc.collect()
        gc.freeze()

    async def current_analysis(self, unit: Unit) -> Analysis | None:
        """The analysis of the unit's current text, waiting for it if an edit is still being analysed."""
        key = self.current_key(unit)
        if unit.analysis is not None and unit.analysis.snapshot.key == key:
            return unit.analysis
        waiter = asyncio.get_running_loop().create_future()
        unit.waiters.append(waiter)
        if unit.timer is None and (unit.task is None or unit.task.done()):
            self._kick(unit)
        try:
            return await asyncio.wait_for(waiter, 30)
        except asyncio.TimeoutError:
            return unit.analysis

    # -- cross-module pass -----------------------------------------------------------------------------
    def resolver_for(self, path: str):
        from .analysis.crossmodule import JediResolver

        root = Path(self.root) if self.root else JediResolver.project_root(Path(path))
        if root not in self.resolvers:
            self.resolvers[root] = JediResolver(root)
        return self.resolvers[root]

    def start_jedi_pass(self, unit: Unit, analysis: Analysis):
        snap = analysis.snapshot
        if not snap.source.path or not self.options.cross_module:
            return
        unit.jedi_pending = True
        settings = self.settings_for(snap.source.path)
        loop = asyncio.get_running_loop()

        def run():
            watch = Stopwatch()
            resolver = RecordingResolver(self.resolver_for(snap.source.path), unit.memo)
            result = check_source(snap.source, settings, resolver=resolver)
            return result, watch.ms

        future = loop.run_in_executor(self.jedi_executor, run)
        future.add_done_callback(lambda done: self._jedi_done(unit, analysis, done))

    def _jedi_done(self, unit: Unit, analysis: Analysis, done: asyncio.Future):
        unit.jedi_pending = False
        if done.cancelled():
            return
        if done.exception() is not None:
            self.log_message(f"cross-module pass failed: {''.join(traceback.format_exception(done.exception()))}", types.MessageType.Warning)
            return
        result, elapsed = done.result()
        if self.units.get(unit.key) is not unit:
            self.retire_model(result.model)
            return
        current = unit.analysis
        if current is not analysis:
            self.retire_model(result.model)
            # the text moved on; its fast pass ran with an older memo — check again if it still had misses
            if current is not None and current.misses and not current.cross_module:
                self.schedule(unit, 0)
            return
        if self.current_key(unit) != analysis.snapshot.key or result.model is None:
            self.retire_model(result.model)
            return
        enriched = Analysis(analysis.snapshot, result.findings, result.model, result.rule_errors, 0, elapsed,
                            analysis.content_hash, cross_module=True)
        if _shown(enriched) != _shown(analysis):
            self.store(unit, enriched, background=True)
        else:
            unit.analysis = enriched  # same findings; keep the richer model for hover, publish nothing
            self.retire(analysis, keep=enriched)
            self.keep_model(unit)

    # -- diagnostics -----------------------------------------------------------------------------------
    def diagnostics(self, unit: Unit, analysis: Analysis) -> dict[str, list[types.Diagnostic]]:
        snap = analysis.snapshot
        out: dict[str, list[types.Diagnostic]] = {uri: [] for uri in snap.uris}
        support, encoding = self.support, self.encoding
        for finding in analysis.findings:
            extra = self.confirmed_text.get((analysis.content_hash, tuple(finding_key(finding))))
            converted = to_diagnostic(finding, snap.locate, encoding, support, extra)
            if converted is not None:
                out.setdefault(converted[0], []).append(converted[1])
        return out

    def publish(self, unit: Unit, force: bool = False):
        analysis = unit.analysis
        if analysis is None:
            return
        if self.pull_mode:
            if force:
                self.request_refresh()
            return
        by_uri = self.diagnostics(unit, analysis)
        for uri in unit.published - set(by_uri):
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        for uri, items in by_uri.items():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=items, version=analysis.snapshot.versions.get(uri)))
        unit.published = {uri for uri, items in by_uri.items() if items}

    def request_refresh(self):
        if self.client_has("workspace", "diagnostics", "refresh_support"):
            self.workspace_diagnostic_refresh(None)

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

    # -- code actions ----------------------------------------------------------------------------------
    def edit_for(self, analysis: Analysis, edits) -> types.WorkspaceEdit | None:
        grouped = text_edits(edits, analysis.snapshot.locate, self.encoding)
        if grouped is None:
            return None
        return workspace_edit(grouped, analysis.snapshot.versions, self.document_changes)

    def find(self, analysis: Analysis, key) -> Finding | None:
        return next((f for f in analysis.findings if finding_key(f) == list(key)), None)

    def action_edit(self, analysis: Analysis, data: dict) -> types.WorkspaceEdit | None:
        kind = data.get("action")
        if kind == "fixAll":
            fixes = choose_fixes([f for f in analysis.findings if f.code != SYNTAX_ERROR_CODE], unsafe=False)
            return self.edit_for(analysis, [edit for fix in fixes for edit in fix.edits]) if fixes else None
        finding = self.find(analysis, data.get("key", ()))
        if finding is None:
            return None
        if kind == "fix":
            index = data.get("fix", 0)
            if not 0 <= index < len(finding.fixes):
                return None
            return self.edit_for(analysis, finding.fixes[index].edits)
        if kind == "noqa":
            line = finding.span.line
            return self.edit_for(analysis, [add_noqa_edit(analysis.snapshot.source.line_text(line), line, finding.code)])
        return None


def _shown(analysis: Analysis) -> list:
    return [(f.code, f.span, f.message, f.severity, len(f.fixes), f.related) for f in analysis.findings]


server = AutogradLanguageServer()


# -- lifecycle -------------------------------------------------------------------------------------------
@server.feature(types.INITIALIZE)
def initialize(ls: AutogradLanguageServer, params: types.InitializeParams):
    ls.init_options_raw = params.initialization_options
    ls.apply_options(params.initialization_options, "initializationOptions")
    # Pull diagnostics only for clients that ask for them: clients that both pull and receive pushes
    # (VS Code) would show everything twice.
    text_document = params.capabilities.text_document
    ls.pull_mode = bool(text_document and text_document.diagnostic is not None)
    if ls.pull_mode:
        ls.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
            identifier="autograd-lsp", inter_file_dependencies=False, workspace_diagnostics=False))(document_diagnostic)
        if ls.options.workspace_diagnostics:
            ls.feature(types.WORKSPACE_DIAGNOSTIC)(workspace_diagnostic)


@server.feature(types.INITIALIZED)
async def initialized(ls: AutogradLanguageServer, params: types.InitializedParams):
    ls.workspace_changed = asyncio.Event()
    registrations = []
    if ls.client_has("workspace", "did_change_watched_files", "dynamic_registration"):
        registrations.append(types.Registration(
            id="autograd-lsp-pyproject", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml"), types.FileSystemWatcher(glob_pattern="**/*.py")])))
    if ls.client_has("workspace", "did_change_configuration", "dynamic_registration"):
        registrations.append(types.Registration(id="autograd-lsp-config", method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                                                register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION)))
    if registrations:
        try:
            await asyncio.wait_for(ls.client_register_capability_async(types.RegistrationParams(registrations=registrations)), 10)
        except Exception as error:
            ls.log_message(f"client/registerCapability failed: {error}", types.MessageType.Warning)
    # No jedi warm-up here: with two cores its import competes with the first analysis for the GIL.
    # jedi is imported by the first background pass, which only runs when a workspace import is unresolved.
    await ls.pull_configuration()


@server.feature(types.SHUTDOWN)
def shutdown(ls: AutogradLanguageServer, params):
    for unit in ls.units.values():
        if unit.timer is not None:
            unit.timer.cancel()
        if unit.task is not None and not unit.task.done():
            unit.task.cancel()


# -- text documents --------------------------------------------------------------------------------------
@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: AutogradLanguageServer, params: types.DidOpenTextDocumentParams):
    uri = params.text_document.uri
    if not _is_python(uri, params.text_document.language_id):
        return
    old = ls.units.get(uri)
    if old is not None:
        ls.clear(old)
    unit = ls.units[uri] = Unit(uri, notebook=False, opened_at=Stopwatch())
    ls.schedule(unit, 0)


def _module_name(uri: str) -> str | None:
    """`helpers` for .../helpers.py, `pkg` for .../pkg/__init__.py; None for what is not a Python module."""
    path = Path(_uri_path(uri) or "")
    if path.suffix not in (".py", ".pyi"):
        return None
    return path.parent.name if path.stem == "__init__" else path.stem


def _is_python(uri: str, language_id: str | None) -> bool:
    return language_id in ("python", None) or uri.endswith((".py", ".pyi"))


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: AutogradLanguageServer, params: types.DidChangeTextDocumentParams):
    unit = ls.units.get(params.text_document.uri)
    if unit is not None:
        ls.schedule(unit)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: AutogradLanguageServer, params: types.DidSaveTextDocumentParams):
    uri = params.text_document.uri
    if uri.endswith("pyproject.toml"):
        ls.project.clear()
        ls.settings_changed()
        return
    for resolver in ls.resolvers.values():
        resolver.forget_files()  # a new module can now be found where none was
    module = _module_name(uri)
    for other in ls.units.values():
        # a saved module can change what other files' imports resolve to: those that consulted one, or whose
        # text names this module (it may have been created just now), look again
        shown = other.analysis
        consulted = bool(other.memo) or bool(shown and (shown.misses or module and module in shown.snapshot.source.text))
        other.memo.clear()
        if consulted and other.key != uri:
            ls.schedule(other)
    if ls.workspace_changed is not None:
        ls.workspace_changed.set()
    unit = ls.units.get(uri)
    if unit is not None:
        ls.schedule(unit, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: AutogradLanguageServer, params: types.DidCloseTextDocumentParams):
    unit = ls.units.pop(params.text_document.uri, None)
    if unit is not None:
        ls.clear(unit)


# -- notebooks -------------------------------------------------------------------------------------------
@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: AutogradLanguageServer, params: types.DidOpenNotebookDocumentParams):
    uri = params.notebook_document.uri
    unit = ls.units[uri] = Unit(uri, notebook=True, opened_at=Stopwatch())
    ls.schedule(unit, 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: AutogradLanguageServer, params: types.DidChangeNotebookDocumentParams):
    unit = ls.units.get(params.notebook_document.uri)
    if unit is not None:
        ls.schedule(unit)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: AutogradLanguageServer, params: types.DidSaveNotebookDocumentParams):
    unit = ls.units.get(params.notebook_document.uri)
    if unit is not None:
        ls.schedule(unit, 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: AutogradLanguageServer, params: types.DidCloseNotebookDocumentParams):
    unit = ls.units.pop(params.notebook_document.uri, None)
    if unit is not None:
        ls.clear(unit)


# -- settings and files ----------------------------------------------------------------------------------
@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: AutogradLanguageServer, params: types.DidChangeConfigurationParams):
    settings = params.settings
    if isinstance(settings, dict) and (SECTION in settings or set(settings) & {"select", "ignore", "severity", "confirm", "python"}):
        if ls.apply_options(unwrap(settings), f"{SECTION} settings"):
            ls.settings_changed()
        return
    await ls.pull_configuration()


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: AutogradLanguageServer, params: types.DidChangeWatchedFilesParams):
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.project.clear()
        ls.settings_changed()
    elif params.changes:
        for unit in ls.units.values():
            unit.memo.clear()
        if ls.workspace_changed is not None:
            ls.workspace_changed.set()


# -- pull diagnostics ------------------------------------------------------------------------------------
async def document_diagnostic(ls: AutogradLanguageServer, params: types.DocumentDiagnosticParams):
    uri = params.text_document.uri
    unit = ls.unit_for(uri)
    if unit is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    analysis = await ls.current_analysis(unit)
    if analysis is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    result_id = f"{unit.generation}.{ls.settings_generation}.{len(ls.confirmed_text)}"
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    items = ls.diagnostics(unit, analysis).get(uri, [])
    return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)


async def workspace_diagnostic(ls: AutogradLanguageServer, params: types.WorkspaceDiagnosticParams):
    """Every .py file of the workspace (opt-in: `workspaceDiagnostics`), with $/progress; a repeat request
    with nothing changed is held until something does (clients poll this request in a loop)."""
    from .discovery import iter_files

    root = ls.root
    if not root:
        return types.WorkspaceDiagnosticReport(items=[])
    previous = {item.uri: item.value for item in params.previous_result_ids or []}
    loop = asyncio.get_running_loop()
    while True:
        ls.workspace_changed.clear()
        settings = ls.settings_for(str(Path(root) / "pyproject.toml"))
        files = await loop.run_in_executor(ls.workspace_executor, lambda: [p for p in iter_files([root], settings) if p.suffix in (".py", ".pyi")])
        stamps = {}
        for path in files:
            try:
                stat = path.stat()
            except OSError:
                continue
            stamps[Path(path).resolve().as_uri()] = f"{stat.st_mtime_ns}-{stat.st_size}-{ls.settings_generation}"
        if not previous or any(previous.get(uri) != stamp for uri, stamp in stamps.items()):
            break
        await ls.workspace_changed.wait()

    token = params.work_done_token
    if token is None and ls.client_has("window", "work_done_progress"):
        token = f"autograd-lsp-workspace-{next(ls._progress_ids)}"
        try:
            await asyncio.wait_for(ls.work_done_progress.create_async(token), 10)
        except Exception:
            token = None
    if token is not None:
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title="autograd-lsp: checking the workspace", percentage=0, cancellable=True))
    items = []
    try:
        open_paths = {}
        for unit in ls.units.values():
            if not unit.notebook and unit.analysis is not None:
                open_paths[unit.key] = unit
        for index, (uri, stamp) in enumerate(sorted(stamps.items())):
            if token is not None and index % 10 == 0:
                ls.work_done_progress.report(token, types.WorkDoneProgressReport(
                    message=f"{index}/{len(stamps)} files", percentage=int(100 * index / max(len(stamps), 1))))
            if uri in open_paths:
                continue  # open documents are reported by textDocument/diagnostic
            if previous.get(uri) == stamp:
                items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=stamp))
                continue
            path = to_fs_path(uri)
            findings, locate = await loop.run_in_executor(ls.workspace_executor, _check_file, path, settings)
            diagnostics = [d for f in findings if (d := to_diagnostic(f, locate, ls.encoding, ls.support)) is not None]
            items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=[d[1] for d in diagnostics], version=None, result_id=stamp))
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=f"{len(items)} files checked"))
    return types.WorkspaceDiagnosticReport(items=items)


def _check_file(path: str, settings):
    from .source import SourceError, read_source

    uri = Path(path).resolve().as_uri()
    try:
        source = read_source(path)
    except SourceError:
        return [], lambda line: None
    findings = check_source(source, settings).findings
    return findings, (lambda line: Place(uri, line - 1, source.line_text(line)))


# -- code actions ----------------------------------------------------------------------------------------
def _wanted(kind: str, only) -> bool:
    return not only or any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND], resolve_provider=True))
async def code_action(ls: AutogradLanguageServer, params: types.CodeActionParams):
    uri = params.text_document.uri
    unit = ls.unit_for(uri)
    if unit is None:
        return None
    analysis = await ls.current_analysis(unit)
    if analysis is None:
        return None
    snap = analysis.snapshot
    only = params.context.only
    lazy = ls.resolve_edits
    actions: list[types.CodeAction] = []

    def action(title, kind, data, diagnostic=None, preferred=None):
        item = types.CodeAction(title=title, kind=kind, diagnostics=[diagnostic] if diagnostic else None,
                                is_preferred=preferred, data={"uri": uri, **data} if lazy else None)
        if not lazy:
            item.edit = ls.action_edit(analysis, data)
            if item.edit is None:
                return
        actions.append(item)

    if _wanted(types.CodeActionKind.QuickFix, only):
        start_line = snap.joined_line(uri, params.range.start.line)
        end_line = snap.joined_line(uri, params.range.end.line)
        if start_line is not None and end_line is not None:
            start = from_position(types.Position(start_line - 1, params.range.start.character), snap.source.line_text(start_line), ls.encoding)
            end = from_position(types.Position(end_line - 1, params.range.end.character), snap.source.line_text(end_line), ls.encoding)
            for finding in analysis.findings:
                if finding.code == SYNTAX_ERROR_CODE or not spans_overlap(finding.span, start, end):
                    continue
                converted = to_diagnostic(finding, snap.locate, ls.encoding, ls.support)
                diagnostic = converted[1] if converted and converted[0] == uri else None
                key = finding_key(finding)
                for index, fix in enumerate(finding.fixes):
                    safe = fix.safety is Safety.SAFE
                    action(fix.title if safe else f"{fix.title} (unsafe)", types.CodeActionKind.QuickFix,
                           {"action": "fix", "key": key, "fix": index}, diagnostic, True if safe else None)
                action(f"Ignore {finding.code} on this line", types.CodeActionKind.QuickFix, {"action": "noqa", "key": key}, diagnostic)
                if ls.options.confirm_enabled:
                    place = snap.locate(finding.span.line)
                    if place is not None:
                        for device, label in (("cpu", "CPU"), ("cuda", "CUDA")):
                            actions.append(types.CodeAction(
                                title=f"Confirm {finding.code} by running on {label}", kind=types.CodeActionKind.QuickFix,
                                diagnostics=[diagnostic] if diagnostic else None,
                                command=types.Command(title=f"Confirm {finding.code} on {label}", command=CMD_CONFIRM,
                                                      arguments=[place.uri, place.line, finding.code, device])))
    if _wanted(FIX_ALL_KIND, only):
        if any(f.safe_fix for f in analysis.findings if f.code != SYNTAX_ERROR_CODE):
            action("Fix all safe autograd-lsp problems", FIX_ALL_KIND, {"action": "fixAll"})
    return actions or None


@server.feature(types.CODE_ACTION_RESOLVE)
async def code_action_resolve(ls: AutogradLanguageServer, action: types.CodeAction):
    data = action.data if isinstance(action.data, dict) else {}
    unit = ls.unit_for(data.get("uri", ""))
    if unit is None or action.edit is not None:
        return action
    analysis = await ls.current_analysis(unit)
    if analysis is not None:
        action.edit = ls.action_edit(analysis, data)
    return action


# -- hover -----------------------------------------------------------------------------------------------
@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: AutogradLanguageServer, params: types.HoverParams):
    uri = params.text_document.uri
    unit = ls.unit_for(uri)
    if unit is None:
        return None
    analysis = await ls.current_analysis(unit)
    if analysis is None:
        return None
    snap = analysis.snapshot
    line = snap.joined_line(uri, params.position.line)
    if line is None:
        return None
    line_text = snap.source.line_text(line)
    _, col = from_position(params.position, line_text, ls.encoding)
    markdown = ls.markdown
    parts, hover_range = [], None
    shown = set()
    for finding in analysis.findings:
        if not span_contains(finding.span, line, col) or finding.code in shown:
            continue
        shown.add(finding.code)
        rule = find_rule(finding.code)
        head = f"**{finding.code} {finding.name}** ({finding.severity.value}): {finding.message}" if markdown else f"{finding.code} {finding.name} ({finding.severity.value}): {finding.message}"
        extra = ls.confirmed_text.get((analysis.content_hash, tuple(finding_key(finding))))
        parts.append(head + (f"\n\n{extra}" if extra else "") + (f"\n\n{rule.doc}" if rule else ""))
        placed = to_range(finding.span, snap.locate, ls.encoding)
        if placed is not None and placed[0] == uri:
            hover_range = placed[1]
    model = await ls.model_of(unit, analysis)
    if model is not None:
        byte_col = len(line_text[:col].encode("utf-8", "surrogatepass"))
        node = node_at(model.tree, line, byte_col)
        if node is not None:
            try:
                text = describe_provenance(model, node)
            except Exception:
                text = None
            if text:
                name = ast.unparse(node)
                parts.insert(0, f"`{name}`: {text}" if markdown else f"{name}: {text}")
                if hover_range is None:
                    span = model.span(node)
                    placed = to_range(span, snap.locate, ls.encoding)
                    hover_range = placed[1] if placed and placed[0] == uri else None
    if not parts:
        return None
    separator = "\n\n---\n\n" if markdown else "\n\n"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText,
                                                    value=separator.join(parts)), range=hover_range)


# -- commands --------------------------------------------------------------------------------------------
@server.command(CMD_RULE_DOC)
def show_rule_doc(ls: AutogradLanguageServer, *args):
    code = str(args[0]) if args else ""
    rule = find_rule(code)
    if rule is None:
        ls.show_message(f"autograd-lsp: unknown rule {code!r}", types.MessageType.Warning)
        return None
    return f"# {rule.code} {rule.name} ({rule.severity.value})\n\n{rule.doc}"


@server.command(CMD_FIX_ALL)
async def fix_all(ls: AutogradLanguageServer, *args):
    uri = str(args[0]) if args else ""
    unit = ls.unit_for(uri)
    if unit is None:
        ls.show_message(f"autograd-lsp: {uri or 'no document'} is not open", types.MessageType.Warning)
        return {"applied": False, "fixes": 0}
    analysis = await ls.current_analysis(unit)
    fixes = choose_fixes([f for f in analysis.findings if f.code != SYNTAX_ERROR_CODE], unsafe=False) if analysis else []
    if not fixes:
        return {"applied": False, "fixes": 0}
    edit = ls.edit_for(analysis, [edit for fix in fixes for edit in fix.edits])
    if edit is None:
        return {"applied": False, "fixes": 0}
    result = await asyncio.wait_for(ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="autograd-lsp: fix all")), 30)
    return {"applied": bool(result.applied), "fixes": len(fixes)}


@server.command(CMD_SERVER_INFO)
def server_info(ls: AutogradLanguageServer, *args):
    """For tests and bug reports: what the server process has loaded and how long checks took."""
    return {
        "version": __version__,
        "pid": __import__("os").getpid(),
        "torch_imported": any(name == "torch" or name.startswith("torch.") for name in sys.modules),
        "jedi_imported": "jedi" in sys.modules,
        "open_units": sorted(ls.units),
        "units_with_model": list(ls.with_model),
        "pull_mode": ls.pull_mode,
        "encoding": str(getattr(ls.encoding, "value", ls.encoding)),
        "timings": ls.timings,
        "options": {"confirm_enabled": ls.options.confirm_enabled, "confirm_device": ls.options.confirm_device,
                    "confirm_timeout": ls.options.confirm_timeout, "python": ls.options.python,
                    "debounce_ms": ls.options.debounce_ms, "select": ls.options.select, "ignore": ls.options.ignore},
    }


@server.command(CMD_CONFIRM)
async def confirm(ls: AutogradLanguageServer, *args):
    """[uri, line (0-based), code, device]: run the finding's reproducer; only ever on this explicit command."""
    if len(args) < 3:
        ls.show_message(f"autograd-lsp: {CMD_CONFIRM} needs [uri, line, code, device]", types.MessageType.Error)
        return {"status": "error", "message": "bad arguments"}
    request_id, task = ls.protocol.msg_id, asyncio.current_task()
    if request_id is not None and task is not None:
        ls.protocol.cancel_callbacks.setdefault(request_id, []).append(task.cancel)
    try:
        return await _confirm(ls, args)
    finally:
        ls.protocol.cancel_callbacks.pop(request_id, None)


async def _confirm(ls: AutogradLanguageServer, args):
    uri, line0, code = str(args[0]), args[1], str(args[2]).upper()
    device = str(args[3]).lower() if len(args) > 3 and args[3] else ls.options.confirm_device
    if not ls.options.confirm_enabled:
        ls.show_message(f"autograd-lsp: runtime confirmation is disabled ({SECTION}.confirm.enabled = false)", types.MessageType.Warning)
        return {"status": "disabled"}
    unit = ls.unit_for(uri)
    analysis = await ls.current_analysis(unit) if unit is not None else None
    if analysis is None or not isinstance(line0, int):
        ls.show_message(f"autograd-lsp: cannot confirm {code}: {uri} is not open", types.MessageType.Warning)
        return {"status": "error", "message": "document not open"}
    line = analysis.snapshot.joined_line(uri, line0)
    candidates = [f for f in analysis.findings if f.code == code and line is not None and f.span.line <= line <= f.span.end_line]
    finding = next((f for f in candidates if f.span.line == line), candidates[0] if candidates else None)
    if finding is None:
        ls.show_message(f"autograd-lsp: no {code} finding on line {line0 + 1}", types.MessageType.Warning)
        return {"status": "error", "message": f"no {code} finding on line {line0 + 1}"}
    cache_key = (analysis.content_hash, tuple(finding_key(finding)), device, ls.options.python)
    result = ls.confirmations.get(cache_key)
    if result is None:
        try:
            from .confirm import confirm_finding
        except Exception as error:  # the confirm package is optional at run time; say so, do not crash
            message = f"runtime confirmation is not available: {type(error).__name__}: {error}"
            ls.show_message(f"autograd-lsp: {message}", types.MessageType.Error)
            return {"status": "error", "message": message}
        token = await _begin_progress(ls, f"autograd-lsp: confirming {code}", f"running the reproducer on {device}…")
        before = _harness_processes()
        job = _in_thread(confirm_finding, analysis.snapshot.source, finding, device=device,
                         timeout=ls.options.confirm_timeout, python=ls.options.python)
        waits = [asyncio.wrap_future(job)]
        cancel = ls.work_done_progress.tokens.get(token) if token is not None else None
        if cancel is not None:
            waits.append(asyncio.wrap_future(cancel))
        outcome = "error"
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if waits[0] not in done:
                _kill_new_harnesses(before, job, ls.options.confirm_timeout + 5)
                outcome = "cancelled"
                ls.show_message(f"autograd-lsp: confirmation of {code} cancelled")
                return {"status": "cancelled"}
            try:
                result = waits[0].result()
            except Exception as error:
                ls.log_message(f"confirmation of {code} failed:\n{traceback.format_exc()}", types.MessageType.Error)
                ls.show_message(f"autograd-lsp: confirmation of {code} failed: {type(error).__name__}: {error}", types.MessageType.Error)
                return {"status": "error", "message": f"{type(error).__name__}: {error}"}
            outcome = "done"
        except asyncio.CancelledError:  # $/cancelRequest on the command
            _kill_new_harnesses(before, job, ls.options.confirm_timeout + 5)
            outcome = "cancelled"
            raise
        finally:
            if token is not None:
                ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=outcome))
                ls.work_done_progress.tokens.pop(token, None)
        if getattr(result, "status", None) not in ("timeout", "error"):
            ls.confirmations[cache_key] = result
    summary = _summary(result)
    status = getattr(result, "status", None)
    if status in VERDICTS:  # a verdict about the code goes on the diagnostic; "cuda unavailable" and the like do not
        ls.confirmed_text[(analysis.content_hash, tuple(finding_key(finding)))] = summary
        unit.generation += 1
        ls.publish(unit, force=True)
    place = analysis.snapshot.locate(finding.span.line)
    where = f"line {place.line + 1}" if place else f"line {finding.span.line}"
    ls.show_message(f"autograd-lsp: {code} at {where}: {summary}",
                    types.MessageType.Info if status in VERDICTS else types.MessageType.Warning)
    try:
        return result.to_json()
    except Exception:
        return {"status": str(getattr(result, "status", "unknown")), "summary": summary}


def _in_thread(fn, *args, **kwargs) -> concurrent.futures.Future:
    """Run one confirmation on its own daemon thread: a cancelled run still finishing must not delay the next."""
    future: concurrent.futures.Future = concurrent.futures.Future()

    def work():
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:
                future.set_exception(error)

    threading.Thread(target=work, name="autograd-lsp-confirm", daemon=True).start()
    return future


def _harness_processes() -> set[int]:
    """Child processes running the confirm harness (Linux /proc; empty elsewhere)."""
    found = set()
    try:
        tasks = list(Path("/proc/self/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in children:
            try:
                if b"__agl_harness__" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.add(int(pid))
            except OSError:
                continue
    return found


def _kill_new_harnesses(before: set[int], job: concurrent.futures.Future, limit_s: float) -> None:
    """Cancelling a confirmation stops its sandboxed run: the confirm API has no cancel hook, so the harness
    processes started since the run began are killed (each leads its own process group), watching until the
    job ends in case the harness had not started yet."""
    import os
    import signal
    import time

    def watch():
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            for pid in _harness_processes() - before:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            if job.done():
                return
            time.sleep(0.1)

    threading.Thread(target=watch, name="autograd-lsp-confirm-cancel", daemon=True).start()


def _summary(result) -> str:
    try:
        return str(result.summary())
    except Exception:
        return str(getattr(result, "status", result))


async def _begin_progress(ls: AutogradLanguageServer, title: str, message: str):
    if not ls.client_has("window", "work_done_progress"):
        return None
    token = f"autograd-lsp-{next(ls._progress_ids)}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), 10)
    except Exception:
        return None
    ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, message=message, cancellable=True))
    return token


# -- entry point -----------------------------------------------------------------------------------------
def serve(tcp: str | None = None) -> int:
    """Run the server on stdio (default) or on `HOST:PORT`; returns the exit status LSP prescribes."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="autograd-lsp %(levelname)s %(name)s: %(message)s")
    gc.collect()
    gc.freeze()  # the start-up objects (rules, lsprotocol types) never need scanning again: fewer GC pauses
    gc.set_threshold(*GC_THRESHOLDS)
    if tcp:
        host, _, port = tcp.rpartition(":")
        try:
            server.start_tcp(host or "127.0.0.1", int(port))
        except ValueError:
            print(f"autograd-lsp: error: --tcp expects HOST:PORT, got {tcp!r}", file=sys.stderr)
            return 2
    else:
        server.start_io()
    return 0 if getattr(server.protocol, "_shutdown", False) else 1
