"""AG008 sets its severity per finding: a warning only where `.data` corrupts or cuts gradients (a pending graph saved
the tensor, or a read leaves the backpropagated value without a path), info for the harmless updates. The rule's own
findings are checked (the checker's severity settings are a separate concern)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograd_lsp.analysis import build_model
from autograd_lsp.findings import Severity
from autograd_lsp.rules import data_attribute
from autograd_lsp.source import Source

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "data_attribute"
SAMPLES = Path(__file__).resolve().parent.parent / "samples"
W, I = Severity.WARNING, Severity.INFO

CASES = {
    FIXTURES / "pending_graphs.py": {9: W, 16: W, 22: W, 28: I, 31: I, 44: I},
    FIXTURES / "clipping_and_sgd.py": {17: W, 26: I, 36: I, 37: I, 45: W},
    FIXTURES / "reads.py": {17: I, 25: W},
    FIXTURES / "data_aliases.py": {9: W, 10: W, 17: W},  # (9: the binding to `.data`, where the fix goes)
    FIXTURES / "reads_and_steps.py": {16: W, 27: I},
    SAMPLES / "ag008_data_attribute.py": {20: W},
    FIXTURES / "clip_between_forward_and_backward.py": {13: W},
    FIXTURES / "discarded_second_order_graph.py": {9: W, 10: W, 18: W},
    FIXTURES / "gan_stop_gradient.py": {15: I, 28: W},
    FIXTURES / "layer_and_retained_updates.py": {17: W, 20: I, 21: I, 37: W},
    FIXTURES / "helper_parameter_writes.py": {7: W},
    FIXTURES / "layer_passed_to_helper.py": {7: W},
    FIXTURES / "rebound_before_write.py": {13: I, 23: W, 31: W},  # (13: `q` rebound after the op that saved the old one)
}


@pytest.mark.parametrize("path", list(CASES), ids=lambda path: path.name)
def test_severity_per_finding(path: Path):
    text = path.read_text(encoding="utf-8")
    model = build_model(ast.parse(text), Source(text=text, path=str(path)))
    found = {finding.span.line: finding.severity for finding in data_attribute.check(model)}
    assert found == CASES[path]
