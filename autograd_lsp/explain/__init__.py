"""Explain: the autograd graph at a line, and the in-place change (or freed graph) that broke it.

    from autograd_lsp.explain import explain
    result = explain(source, line, device="cpu", timeout=60.0)
    result.doc             # the JSON document below
    result.to_text()       # indented tree, culprit, versions table (the CLI's default)
    result.to_markdown()   # for the LSP command / hover (svg=True appends the picture)
    result.to_dot(), result.to_svg()

The user's program runs once in confirm's child process (same reproducer, limits, sandbox and
``--python``) under ``_child_instrument.py``; the parent never imports torch. ``runner.py`` builds and runs
it, ``graph.py`` collapses the raw graph, ``culprit.py`` ranks and words the findings,
``render.py`` draws.

JSON document (``schema`` 1; ``null`` where unknown; lines are the user's 1-based lines):

    {
      "schema": 1, "path": str|null, "line": int, "statement": [first, last],
      "status": "explained" | "not-run" | "timeout" | "torch-missing" | "cuda-unavailable" | "error",
      "observed": str|null,          # the exception the run ended with (first line), or why no status
      "exception_line": int|null,    # where it was raised in the user's file
      "device": "cpu"|"cuda", "torch_version": str|null,
      "run": {"mode": script|function|method|class, "entry": str|null, "duration_s": float,
              "python": str, "notes": [str]},
      "capture": {"how": "after"|"before"|"backward"|"autograd.grad", "execution": int,
                  "executions": int} | null,   # which run of the line the graph is from (the last)
      "targets": [{"expr": str, "node": int|null, "shape": [int], "dtype": str, "requires_grad": bool,
                   "is_leaf": bool, "version": int, "grad_fn": str|null,
                   "leaf": LEAF|null, "cut": {"kind", "line"}|null}],
      "graph": {"nodes": [NODE], "edges": [[consumer_id, input_id]], "collapsed": bool,
                "raw_nodes": int, "truncated": bool},
      "culprit": CULPRIT|null,       # the one to blame (errors before silent findings), see culprit.py
      "culprits": [CULPRIT],
      "versions": {"leaves": [{"name": str|null, "shape": [int]}],
                   "rows": [{"event": "backward"|"autograd.grad"|"step"|"zero_grad", "line": int|null,
                             "cells": [[version, grad_is_set], ...]}]},   # one cell per leaf
      "backwards": [{"index", "line", "call", "retain_graph", "status": ok|error|running}],
      "notes": [str]
    }
    NODE = {"id", "kind": "op"|"module"|"repeat"|"leaf", "name": str|null, "line": int|null,
            "lines": [int], "ops": [str], "module": {"name", "cls"}|null,
            "saved": [{"attr", "op", "shape", "dtype", "saved_version", "version", "state": ok|modified|freed|unknown}],
            "problem": bool, "freed_by": int|null, "cuts": [{"kind": detach|.data|no_grad, "line", "name", "shape"}],
            "consts": [{"name", "shape", "dtype"}], "members": [raw ids]}
           + for leaves: "shape", "dtype", "requires_grad", "is_leaf", "version", "grad", "param", "device"
           + for repeat: "count", "params"
    CULPRIT = {"kind": "version"|"freed"|"inplace-on-leaf"|"requires-grad-after-forward"|"data-write"|"stale-graph",
               "line": int|null (the statement to blame), "message": str, "backward": {"index", "line", "call"}, ...}
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..source import Source
from . import culprit as _culprit
from . import graph as _graph
from . import render as _render
from .runner import ExplainError

__all__ = ["Explanation", "ExplainError", "explain", "SCHEMA"]

SCHEMA = 1


@dataclass
class Explanation:
    doc: dict
    source: Source | None = field(default=None, repr=False)

    def _line(self, number) -> str:
        return self.source.line_text(number) if self.source is not None and number else ""

    def to_text(self) -> str:
        return _render.to_text(self.doc, self._line)

    def to_markdown(self, svg: bool = False) -> str:
        return _render.to_markdown(self.doc, self._line, svg=svg)

    def to_json(self) -> str:
        return _render.to_json(self.doc)

    def to_dot(self) -> str:
        return _render.to_dot(self.doc)

    def to_svg(self) -> str:
        return _render.to_svg(self.doc)


def explain(source: Source, line: int, *, device: str = "cpu", timeout: float = 60.0, python: str | None = None,
            memory_limit: int | None = 4 << 30, expand: bool = False) -> Explanation:
    """Run the program once under instrumentation and explain the graph at `line` (blocking).

    Raises ``ExplainError`` when nothing can run (no statement at the line, no reproducer)."""
    from . import runner

    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be cpu or cuda, not {device!r}")
    started = time.perf_counter()
    facts, info = runner.run(source, line, device=device, timeout=timeout, python=python, memory_limit=memory_limit)
    return Explanation(assemble(facts, info, source, line, device, expand, time.perf_counter() - started), source)


def _status(facts: dict, info: dict) -> tuple[str, str | None]:
    if info.get("timed_out"):
        return "timeout", "the run did not finish in time"
    if facts.get("status") in ("torch-missing", "cuda-unavailable"):
        return facts["status"], facts.get("observed")
    if facts.get("harness_error"):
        return "error", facts["harness_error"].strip().splitlines()[-1]
    if "explain" not in facts:
        if not facts:
            return "error", f"the child process reported nothing (exit {info.get('returncode')}, {info.get('killed_by') or 'no signal'})"
        return "error", "the confirm harness did not run the instrumentation (its hooks changed?)"
    return "explained", None


def assemble(facts: dict, info: dict, source: Source, line: int, device: str, expand: bool, duration: float) -> dict:
    status, why = _status(facts, info)
    ex = facts.get("explain") or {}
    capture = ex.get("capture")
    exception = facts.get("exception") or {}
    observed = why
    if status == "explained" and exception:
        kinds = exception.get("types") or ["Exception"]
        observed = f"{kinds[0]}: {_culprit._clean_message((exception.get('message') or '').splitlines()[0] if exception.get('message') else '')}"
    culprits = _culprit.tidy(ex.get("culprits") or [])
    notes = list(ex.get("notes") or [])
    if status == "explained" and not capture:
        notes.append(f"line {line} did not run, or computed no tensor the explanation could follow")
    graph = _graph.build(capture["graph"], expand=expand) if capture else {"nodes": [], "edges": [], "collapsed": not expand, "raw_nodes": 0, "truncated": False}
    targets = []
    if capture:
        owner = {}
        for node in graph["nodes"]:
            for member in node.get("members", []):
                owner[member] = node["id"]
        for target in capture["targets"]:
            target = dict(target)
            target["node"] = owner.get(target.get("node")) if target.get("node") is not None else None
            targets.append(target)
    return {
        "schema": SCHEMA, "path": source.path, "line": line,
        "statement": list(info.get("wanted", {}).get("statement") or (line, line)),
        "status": status, "observed": observed,
        "exception_line": exception.get("user_line"),
        "device": device, "torch_version": facts.get("torch_version"),
        "run": {"mode": info.get("mode"), "entry": info.get("entry"), "duration_s": round(duration, 3),
                "python": info.get("python"), "notes": info.get("notes", [])},
        "capture": {"how": capture["how"], "execution": capture["execution"], "executions": ex.get("executions")} if capture else None,
        "targets": targets, "graph": graph,
        "culprit": _culprit.primary(culprits), "culprits": culprits,
        "versions": ex.get("versions") or {"leaves": [], "rows": []},
        "backwards": ex.get("backwards") or [],
        "notes": notes,
    }
