"""Scheduling: when a unit is analysed, on which thread, and which result becomes current.

An edit after a quiet spell (longer than the unit's last analysis took, at most the debounce window) is analysed
at once; edits that follow faster only restart a timer, so a burst ends in one analysis of its newest version,
and a result whose version is no longer current is dropped, never published. Analyses run in order on one worker thread (see PERF.md).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
import traceback

from lsprotocol import types

from ..checker import NOT_ANALYSED_NAME, check_source, not_analysed
from ..findings import Finding, Severity, Span
from ..rules import SYNTAX_ERROR_CODE
from .carry_over import carry_over
from .documents import Analysis, Snapshot, Stopwatch, Unit, content_hash
from .jedi_pass import MemoResolver

BURST_GAP_S = 0.002  # edits closer than this are one burst (a paste, a macro, replayed changes), never typing
MAX_CHARS = 10_000_000  # ≈ 200k lines: past this a file is generated data, not code someone is editing


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


class Scheduling:
    """Debouncing and coalescing of edits, the analysis on the check thread, and making a result current."""

    def schedule(self, unit: Unit, delay_ms: float | None = None):
        """Analyse soon. An edit after a quiet spell is analysed at once (leading edge: a lone keystroke waits
        for nothing); edits that follow faster only restart a timer (trailing edge), so a burst costs at most two
        analyses, the last of the newest text."""
        loop = asyncio.get_running_loop()
        delay = (self.options.debounce_ms if delay_ms is None else delay_ms) / 1000
        now = loop.time()
        # Edits that come further apart than an analysis of this unit takes are each analysed at once (the
        # check thread is then idle at least half the time); faster ones, a burst, wait for the pause.
        shown = unit.analysis
        window = delay if shown is None else min(delay, max(shown.elapsed_ms / 1000, BURST_GAP_S))
        quiet = now - unit.last_edit >= window
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
                self.retire(analysis, keep=unit.analysis)  # (its model may be the shown one's, reused)
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
        memo_version, misses = None, 0
        try:
            if len(snap.source.text) > MAX_CHARS:
                message = f"not analysed: {len(snap.source.text):,} characters is more than autograd-lsp reads ({MAX_CHARS:,})"
                return Analysis(snap, [Finding(SYNTAX_ERROR_CODE, "too-large", Severity.INFO, message, Span(1, 0, 1, 0))],
                                None, [], 0, watch.ms, content_hash(snap.source.text))
            memo_version = unit.memo.version if resolver is not None else None
            # the walk of the shown analysis stands for a text whose tree is unchanged, if it read the same memo
            reuse = shown.model if (shown is not None and not shown.cross_module and not shown.carried
                                    and shown.memo_version == memo_version) else None
            result = unit.incremental.check(snap.source, settings, resolver=resolver, reuse=reuse)
            findings, model, errors = result.findings, result.model, result.rule_errors
            if model is not None and model is reuse:
                # the walk kept: its misses stand, plus those of the function walked again (analysis/rewalk.py)
                misses = shown.misses + (resolver.misses if resolver is not None and result.walked == "function" else 0)
                resolver = None
        except Exception as error:  # the checker guards the walk and rules; this is the server's last line of defence
            errors = [f"analysis of {unit.key} failed:\n{traceback.format_exc()}"]
            findings = [not_analysed(f"internal error of the server's analysis ({type(error).__name__}: {error}); "
                                     "please report it")]
            model = None
        carried = False
        if model is None and shown is not None and any(f.code == SYNTAX_ERROR_CODE and f.name != NOT_ANALYSED_NAME
                                                       for f in findings):  # (a text that does not parse)
            error = next(f for f in findings if f.code == SYNTAX_ERROR_CODE)
            try:
                findings = [error, *carry_over(shown.snapshot.source.text, shown.findings, snap.source.text, error)]
                carried = True
            except Exception:
                errors.append(f"keeping findings failed:\n{traceback.format_exc()}")
        if resolver is not None:
            misses = resolver.misses
        return Analysis(snap, findings, model, errors, misses, watch.ms, content_hash(snap.source.text), carried,
                        memo_version=memo_version)

    def store(self, unit: Unit, analysis: Analysis, background: bool = False):
        """Make an analysis current: remember it, publish it, wake pull requests, maybe start a jedi pass.
        `background`: nothing the client did asked for it (jedi pass, settings): pull clients get a refresh."""
        previous = unit.analysis
        unit.analysis = analysis
        self.retire(previous, keep=analysis)
        self.keep_model(unit)
        if previous is None or previous.shown() != analysis.shown() or previous.snapshot.versions != analysis.snapshot.versions:
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
