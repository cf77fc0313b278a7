"""An analysed file is freed by reference counting as soon as its results are dropped.

The CLI runs with the cyclic collector off (cli._quiet_gc: it found nothing to free but rescanned millions of
nodes), so a reference cycle through a tree keeps that tree, and everything hanging off it, until a full collection
long after. One such cycle (a value kept on a tree that pointed back at it) took the benchmark run from 216 MB to
322 MB. These tests walk real code with the collector off and fail on any tree or model left behind."""
from __future__ import annotations

import ast
import gc
import weakref
from pathlib import Path

import pytest

from autograd_lsp.analysis.crossmodule import JediResolver
from autograd_lsp.analysis.model import ModuleModel
from autograd_lsp.checker import check_source, parse
from autograd_lsp.source import SourceError, read_source

from crossmodule_programs import HELPER, TRAIN

REPO = Path(__file__).resolve().parent.parent
CODE = sorted([*(REPO / "tests" / "fixtures").rglob("*.py"), *(REPO / "samples").glob("*.py")])


@pytest.fixture
def collector_off():
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def _analysed_and_dropped(path: Path, resolver=None) -> weakref.ref | None:
    try:
        source = read_source(path)
    except SourceError:
        return None
    tree = parse(source)
    if not isinstance(tree, ast.Module):
        return None
    kept = weakref.ref(tree)
    result = check_source(source, resolver=resolver, tree=tree)
    if result.model is not None:
        result.model.release()  # (as the CLI does after each file)
    return kept


def test_every_fixture_and_sample_tree_is_freed_without_the_collector(collector_off):
    assert len(CODE) > 500  # (the whole fixture set: a pattern of any rule can hold the cycle)
    left = []
    for path in CODE:
        kept = _analysed_and_dropped(path)
        if kept is not None and kept() is not None:
            left.append(path.relative_to(REPO))
    assert left == []


def test_cross_module_run_leaves_no_cycle_of_trees_or_models(tmp_path, collector_off):
    """With a resolver (consulted modules' summaries, helpers walked per call site): after the resolver forgets its
    models, the collector finds no tree node, model or closure of the analysis in a cycle."""
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / "train.py").write_text(TRAIN.format(module="helpers"))
    for path in CODE[:200]:
        (tmp_path / f"f_{len(list(tmp_path.iterdir()))}.py").write_text(path.read_text(encoding="utf-8", errors="replace"))
    resolver = JediResolver(tmp_path)
    for path in sorted(tmp_path.glob("*.py")):
        _analysed_and_dropped(path, resolver)
    resolver.forget_models()
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    ours = [obj for obj in gc.garbage if isinstance(obj, (ast.AST, ModuleModel))
            or type(obj).__module__.startswith("autograd_lsp")
            or getattr(obj, "__module__", None) and str(getattr(obj, "__module__", "")).startswith("autograd_lsp")]
    assert [type(obj).__qualname__ if not callable(obj) else obj.__qualname__ for obj in ours[:20]] == []
