"""The cross-module pass: the fast pass never asks jedi; names from other workspace modules are answered from
what the last background jedi pass learned (the memo), and a pass runs only when something was missing,
re-publishing if the findings change."""
from __future__ import annotations

import ast
import asyncio
import traceback
from pathlib import Path

from lsprotocol import types

from ..checker import check_source
from .documents import Analysis, Stopwatch, Unit

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


class JediPass:
    """The background jedi pass of a unit, on its own thread; its result replaces the fast pass's only while
    the text it read is still current."""

    def resolver_for(self, path: str):
        from ..analysis.crossmodule import JediResolver

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
        # the fast pass's tree: trees are never modified (the incremental parse copies what it changes)
        tree = analysis.model.tree if analysis.model is not None else None

        def run():
            watch = Stopwatch()
            resolver = RecordingResolver(self.resolver_for(snap.source.path), unit.memo)
            result = check_source(snap.source, settings, resolver=resolver, tree=tree)
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
        if enriched.shown() != analysis.shown():
            self.store(unit, enriched, background=True)
        else:
            unit.analysis = enriched  # same findings; keep the richer model for hover, publish nothing
            self.retire(analysis, keep=enriched)
            self.keep_model(unit)
