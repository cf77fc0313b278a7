"""`autograd-lsp explain`: run as a subprocess on the samples and the seeds' programs, torch for real.

Each buggy program must name the statement to blame (exact lines) and the graph's leaves must carry
the user's names; each fixed twin must come out clean. The graph model and renderers are also
checked on their own (pure Python, no torch).
"""
from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path

import pytest

from autograd_lsp.explain import graph as explain_graph
from autograd_lsp.explain import render

pytestmark = pytest.mark.slow  # torch runs in subprocesses

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
FIXTURES = Path(__file__).resolve().parent / "explain_fixtures"


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograd_lsp", "explain", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


@lru_cache(maxsize=None)
def explain_json(path: Path, line: int, *extra: str) -> dict:
    run = _cli(f"{path}:{line}", "--format", "json", *extra)
    assert run.returncode in (0, 1), run.stderr + run.stdout[-2000:]
    doc = json.loads(run.stdout)
    assert doc["status"] == "explained", doc
    assert (run.returncode == 1) == (doc["culprit"] is not None)
    return doc


def leaf_names(doc: dict) -> set[str]:
    names = {n["name"] for n in doc["graph"]["nodes"] if n["kind"] == "leaf"}
    names |= {t["leaf"]["name"] for t in doc["targets"] if t.get("leaf")}
    return names


# ---------------------------------------------------------------------------------------------
# Buggy programs: the culprit, exactly
# ---------------------------------------------------------------------------------------------
def test_ag001_inplace_on_leaf():
    doc = explain_json(SAMPLES / "ag001_inplace_on_leaf.py", 11)
    c = doc["culprit"]
    assert (c["kind"], c["line"], c["variable"], c["op"]) == ("inplace-on-leaf", 11, "a", "add_")
    assert doc["exception_line"] == 11
    target = doc["targets"][0]
    assert target["leaf"]["name"] == "a" and target["leaf"]["requires_grad"] and target["leaf"]["is_leaf"]
    assert target["leaf"]["line"] == 9  # `a = torch.ones(2, 2, requires_grad=True)`


def test_ag002_stale_composed_weight():
    doc = explain_json(SAMPLES / "ag002_stale_composed_weight.py", 22)
    c = doc["culprit"]
    assert c["kind"] == "stale-graph"
    assert c["line"] == 17 and c["carrier"]["name"] == "w"  # `w = concatAB(a, b)` before the loop
    assert c["modified_by"][0]["line"] == 24  # optimizer.step()
    assert c["leaf"]["name"] in {"a", "b"} and c["leaf"]["saved_version"] == 0 and c["leaf"]["version"] >= 1
    assert c["backward"]["line"] == 23
    assert leaf_names(doc) == {"a", "b"}
    assert doc["observed"] is None  # silent in torch 2.13


def test_ag003_retain_graph_misuse():
    doc = explain_json(SAMPLES / "ag003_retain_graph_misuse.py", 31)
    c = doc["culprit"]
    assert c["kind"] == "version"
    assert (c["line"], c["variable"]) == (32, "model.w2")  # the first optimizer.step() bumped w2 0 -> 1
    assert (c["version_expected"], c["version_now"]) == (0, 1)
    assert c["saved_by"]["line"] == 16 and c["saved_by"]["op"] == "MulBackward0"
    assert c["backward"]["line"] == 31
    assert doc["capture"]["execution"] == 2  # the iteration that failed
    assert leaf_names(doc) == {"model.w1", "model.w2"}
    saved = [s for n in doc["graph"]["nodes"] for s in n.get("saved", [])]
    assert any(s["state"] == "modified" and (s["saved_version"], s["version"]) == (0, 1) for s in saved)


def test_ag006_inplace_on_saved_tensor():
    doc = explain_json(SAMPLES / "ag006_inplace_on_saved_tensor.py", 16)
    c = doc["culprit"]
    assert (c["kind"], c["line"], c["op"], c["variable"]) == ("version", 14, "clamp_", "probs")
    assert c["saved_by"] == {**c["saved_by"], "line": 13, "op": "SigmoidBackward0", "attr": "result"}
    assert c["backward"]["line"] == 16
    assert leaf_names(doc) == {"w"}
    # the constant inputs are shown as not requiring grad
    consts = {k["name"] for n in doc["graph"]["nodes"] for k in n.get("consts", [])}
    assert {"x", "targets"} <= consts


def test_ag014_requires_grad_toggle_after_forward():
    doc = explain_json(SAMPLES / "ag014_requires_grad_toggle_after_forward.py", 23)
    c = doc["culprit"]
    assert (c["kind"], c["line"], c["graph_line"]) == ("requires-grad-after-forward", 22, 19)
    assert sorted(c["variables"]) == ["backbone.bias", "backbone.weight"]
    assert c["backward"]["line"] == 23
    assert leaf_names(doc) == {"head.weight", "head.bias"}  # the backbone is not in the graph


def test_ag017_missing_detach_shared_graph():
    doc = explain_json(SAMPLES / "ag017_missing_detach_shared_graph.py", 24)
    c = doc["culprit"]
    assert c["kind"] == "freed"
    assert c["line"] == 19 and c["freed_by"]["line"] == 19  # d_loss.backward() freed G's graph
    assert (c["carrier"]["name"], c["carrier"]["line"]) == ("fake", 16)
    assert c["backward"]["line"] == 24
    assert {"G.0.weight", "G.2.bias", "D.0.weight", "D.2.bias"} <= leaf_names(doc)
    assert any(s["state"] == "freed" for n in doc["graph"]["nodes"] for s in n.get("saved", []))


def test_ag008_write_through_data_after_save():
    doc = explain_json(SAMPLES / "ag008_data_attribute.py", 21)
    c = doc["culprit"]
    assert (c["kind"], c["line"], c["op"], c["variable"]) == ("data-write", 20, "clamp_", "w")
    assert c["saved_by"]["line"] == 7 and c["backward"]["line"] == 21
    assert leaf_names(doc) == {"w"}


def test_seed000_composed_weight_second_backward():
    doc = explain_json(FIXTURES / "seed000_composed_weight.py", 29)
    c = doc["culprit"]
    assert c["kind"] == "freed"
    assert c["freed_by"]["line"] == 24  # the first out.backward()
    assert (c["carrier"]["name"], c["carrier"]["line"]) == ("w", 19)  # w = concatAB(a, b), built once
    assert c["backward"]["line"] == 29
    assert leaf_names(doc) == {"a", "b"}


def test_seed001_three_weights_versions_table():
    doc = explain_json(FIXTURES / "seed001_three_weights.py", 39)
    c = doc["culprit"]
    assert (c["kind"], c["line"], c["variable"]) == ("version", 40, "model.w2")
    assert c["saved_by"]["line"] == 20 and c["backward"]["line"] == 39
    assert leaf_names(doc) == {"model.w1", "model.w2"}
    versions = doc["versions"]
    assert [leaf["name"] for leaf in versions["leaves"]] == ["model.w1", "model.w2", "model.w3"]
    rows = [(r["event"], r["line"], r["cells"]) for r in versions["rows"]]
    assert rows[:6] == [
        ("zero_grad", 38, [[0, False], [0, False], [0, False]]),
        ("backward", 39, [[0, True], [0, True], [0, False]]),
        ("step", 40, [[1, True], [1, True], [0, False]]),  # w3 has no grad: the step leaves it alone
        ("zero_grad", 41, [[1, False], [1, False], [0, False]]),
        ("backward", 42, [[1, True], [1, False], [0, True]]),
        ("step", 43, [[2, True], [1, False], [1, True]]),
    ]


# ---------------------------------------------------------------------------------------------
# Fixed twins: clean
# ---------------------------------------------------------------------------------------------
FIXED = [
    ("ag001_inplace_on_leaf_fixed.py", 19, {"a"}),
    ("ag002_stale_composed_weight_fixed.py", 23, {"a", "b"}),
    ("ag003_retain_graph_misuse_fixed.py", 30, {"model.w1", "model.w2", "model.w3"}),
    ("ag006_inplace_on_saved_tensor_fixed.py", 16, {"w"}),
    ("ag014_requires_grad_toggle_after_forward_fixed.py", 23, {"backbone.weight", "backbone.bias", "head.weight", "head.bias"}),
    ("ag017_missing_detach_shared_graph_fixed.py", 24, {"G.0.weight", "D.0.weight"}),
    ("ag008_data_attribute_fixed.py", 20, {"w"}),
]


@pytest.mark.parametrize("name,line,leaves", FIXED, ids=[f[0] for f in FIXED])
def test_fixed_twin_is_clean(name, line, leaves):
    doc = explain_json(SAMPLES / name, line)
    assert doc["culprit"] is None and doc["culprits"] == []
    assert doc["observed"] is None
    assert leaves <= leaf_names(doc)
    assert not any(n.get("problem") for n in doc["graph"]["nodes"])


def test_detach_shown_as_graph_cut():
    doc = explain_json(SAMPLES / "ag017_missing_detach_shared_graph_fixed.py", 18)
    cuts = [cut for n in doc["graph"]["nodes"] for cut in n.get("cuts", [])]
    assert [(c["kind"], c["line"], c["of"]) for c in cuts] == [("detach", 18, "fake")]
    assert not any(n["name"] and n["name"].startswith("G.") for n in doc["graph"]["nodes"])


# ---------------------------------------------------------------------------------------------
# Large graphs stay readable
# ---------------------------------------------------------------------------------------------
def test_200_layer_model_is_collapsed():
    doc = explain_json(FIXTURES / "deep_mlp.py", 14)
    graph = doc["graph"]
    assert graph["raw_nodes"] > 1000
    assert len(graph["nodes"]) <= 16
    repeat = [n for n in graph["nodes"] if n["kind"] == "repeat"]
    assert len(repeat) == 1 and repeat[0]["count"] == 396 and repeat[0]["params"] == 396  # 198 folded Linear: weight and bias
    kept = {n["module"]["name"] for n in graph["nodes"] if n.get("module")}
    assert kept == {"model.0", "model.1", "model.398", "model.399"}
    assert doc["culprit"] is None


def test_expand_shows_every_node():
    doc = explain_json(SAMPLES / "ag006_inplace_on_saved_tensor.py", 16, "--expand")
    assert len(doc["graph"]["nodes"]) == doc["graph"]["raw_nodes"] == 12
    assert doc["graph"]["collapsed"] is False


# ---------------------------------------------------------------------------------------------
# Formats and usage
# ---------------------------------------------------------------------------------------------
def test_text_svg_dot_markdown_formats():
    target = f"{FIXTURES / 'seed001_three_weights.py'}:39"
    text = _cli(target)
    assert text.returncode == 1
    assert "Culprit: line 40 `optim.step()`" in text.stdout
    assert "Versions across steps" in text.stdout and "model.w3" in text.stdout
    svg = _cli(target, "--format", "svg")
    root = ET.fromstring(svg.stdout)
    assert root.tag.endswith("svg")
    lines = {g.get("data-line") for g in root.iter("{http://www.w3.org/2000/svg}g")}
    assert {"20", "34"} <= lines  # nodes carry their source lines for click-to-source
    dot = _cli(target, "--format", "dot")
    assert dot.stdout.startswith("digraph autograd {") and 'URL="#L20"' in dot.stdout
    assert 'label="y1_pred\\nMul  L20\\nsaved other v0→v1"' in dot.stdout  # rows break with dot's \n, not a literal backslash
    assert "\\\\n" not in dot.stdout
    markdown = _cli(target, "--format", "markdown")
    assert "**Culprit:** line 40 `optim.step()`" in markdown.stdout and "| after | line |" in markdown.stdout


def test_usage_errors():
    bad = _cli("no_line_here.py")
    assert bad.returncode == 2 and "PATH:LINE" in bad.stderr
    blank = _cli(f"{SAMPLES / 'ag006_inplace_on_saved_tensor.py'}:4")
    assert blank.returncode == 2 and "holds no statement" in blank.stderr


# ---------------------------------------------------------------------------------------------
# The graph model on its own (no torch)
# ---------------------------------------------------------------------------------------------
def _op(i, op, line, seq, modules=(), saved=(), name=None):
    return {"id": i, "kind": "op", "op": op, "line": line, "stack": [["<module>", line]], "seq": seq, "tagged": True,
            "name": name, "modules": list(modules), "saved": list(saved), "cuts": [], "consts": []}


def test_graph_groups_lines_and_stays_acyclic():
    # line 3 calls f (line 9) between two of its own ops: the two runs of line 3 must stay apart
    raw = {"nodes": [_op(0, "AddBackward0", 3, 30, name="y"), _op(1, "MulBackward0", 9, 20), _op(2, "ExpBackward0", 3, 10),
                     {"id": 3, "kind": "leaf", "name": "w", "shape": [2], "requires_grad": True, "version": 0}],
           "edges": [[0, 1], [1, 2], [2, 3]]}
    model = explain_graph.build(raw)
    assert [n["lines"] for n in model["nodes"] if n["kind"] != "leaf"] == [[3], [9], [3]]
    order = {n["id"]: i for i, n in enumerate(model["nodes"])}
    assert all(order[a] > order[b] for a, b in model["edges"] if model["nodes"][b]["kind"] != "leaf")


def test_graph_module_call_is_one_node_and_text_marks_modified():
    linear = [{"call": 7, "name": "model.fc", "cls": "Linear", "user": False, "container": False}]
    saved = [{"attr": "mat1", "shape": [4, 2], "dtype": "float32", "saved_version": 0, "version": 1, "state": "modified"}]
    raw = {"nodes": [_op(0, "AddmmBackward0", 5, 12, linear, saved, name="out"), _op(1, "TBackward0", 5, 11, linear),
                     {"id": 2, "kind": "leaf", "name": "model.fc.weight", "shape": [2, 2], "requires_grad": True, "version": 1}],
           "edges": [[0, 1], [1, 2]]}
    model = explain_graph.build(raw)
    ops = [n for n in model["nodes"] if n["kind"] == "module"]
    assert len(ops) == 1 and ops[0]["module"]["name"] == "model.fc" and ops[0]["problem"]
    doc = {"graph": model, "targets": [{"expr": "out", "node": ops[0]["id"]}], "status": "explained"}
    text = "\n".join(render.tree_lines(doc))
    assert "model.fc (Linear)" in text and "saved mat1 at v0, now v1 ✗ MODIFIED" in text and "model.fc.weight" in text


def test_parent_side_never_imports_torch():
    """Only the child imports torch: the explain package, its CLI, the checker and the server load without it,
    and a usage error from `explain` (which builds nothing) still leaves torch unloaded."""
    probe = (
        "import sys, autograd_lsp.explain, autograd_lsp.explain.runner, autograd_lsp.explain.cli, "
        "autograd_lsp.cli, autograd_lsp.server\n"
        "from autograd_lsp.cli import main\n"
        "code = main(['explain', 'no-such-file.py:1'])\n"
        "print(code, 'torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.split()[-2:] == ["2", "False"], done.stdout + done.stderr
