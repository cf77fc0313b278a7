"""Bad input never crashes the analyzer: half-typed code, absurd nesting, huge files, NUL bytes."""
from __future__ import annotations

from pathlib import Path

import pytest

from autograd_lsp.checker import check_text

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "samples").glob("ag0*.py"))


@pytest.mark.parametrize("sample", SAMPLES[:8], ids=lambda p: p.stem)
def test_every_prefix_of_a_sample_is_handled(sample):
    """What an editor sends while the user types: every prefix, cut mid-line, must analyse or report AG000."""
    text = sample.read_text(encoding="utf-8")
    for end in range(0, len(text), 7):
        result = check_text(text[:end], "typing.py")
        assert all(f.code.startswith("AG") for f in result.findings)
        assert not result.rule_errors, result.rule_errors


def test_deeply_nested_parentheses_is_a_syntax_finding():
    result = check_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    assert [f.code for f in result.findings] == ["AG000"]


def test_very_long_expression_chain_does_not_crash():
    # 20k-term left-deep BinOp: deeper than Python's recursion limit for a naive recursive walk
    text = "import torch\nx = torch.ones(2, requires_grad=True)\ny = " + " + ".join(["x"] * 20000) + "\n"
    result = check_text(text)
    assert not result.rule_errors


def test_nul_byte_is_a_syntax_finding():
    result = check_text("x = 1\x00\n")
    assert [f.code for f in result.findings] == ["AG000"]


def test_huge_file_is_analysed():
    block = "a{i} = torch.ones(2, requires_grad=True)\nb{i} = a{i} * 2\n"
    text = "import torch\n" + "".join(block.format(i=i) for i in range(25000)) + "a7 += 1\n"
    result = check_text(text)
    assert [(f.code, f.span.line) for f in result.findings] == [("AG001", 50002)]


def test_non_ascii_columns_are_characters():
    text = "import torch\na = torch.ones(2, requires_grad=True)\nb = 'é' ; a += 1\n"
    (finding,) = check_text(text).findings
    assert (finding.span.line, finding.span.col) == (3, 10)
