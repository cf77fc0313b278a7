"""Model retention and garbage collection: which analysis models stay in memory (only hover reads them), when
a superseded one is released, and when the full collections run (when the user stops typing)."""
from __future__ import annotations

import asyncio
import gc

from ..checker import check_source
from ..rules import SYNTAX_ERROR_CODE
from .documents import Analysis, Unit
from .jedi_pass import MemoResolver

IDLE_COLLECT_S = 2.0  # a full GC this long after the last publish (measured: rare automatic ones cut the p95)
KEEP_MODELS = 8  # analysis models kept (for hover) of the most recently analysed units; others re-analyse on hover
GC_THRESHOLDS = (20_000, 50, 100)  # instead of (700, 10, 10): an ast.parse of 2,000 lines no longer triggers several


def tune_gc():
    """At start-up: the objects made so far (rules, lsprotocol types) never need scanning again, and the
    automatic collections become rare (fewer GC pauses while the user types)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class Retention:
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
            oldest.incremental.reparser.forget()  # its tree too: an edit there parses the whole text again
            if oldest.analysis is not None and oldest.analysis.model is not None:
                if oldest.task is None or oldest.task.done():  # (a running analysis may be re-running its rules on it)
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
        middle of an analysis: the automatic ones are made rare at start-up (tune_gc)."""
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
