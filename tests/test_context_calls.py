"""Calls walked with what the caller passes (walker.call_in_context): grad mode across modules, memo, depth bound."""
from __future__ import annotations

import textwrap

from autograd_lsp.analysis import callsite
from autograd_lsp.analysis.crossmodule import JediResolver
from autograd_lsp.checker import check_path, check_source
from autograd_lsp.config import Settings
from autograd_lsp.source import Source

AG001 = Settings(select=frozenset({"AG001"}))

HELPERS = """\
import torch

scale = torch.ones(3, requires_grad=True)


def shrink(weights):
    weights.mul_(0.5)


def shrink_scale():
    scale.mul_(0.5)
"""


def _lines(result, code="AG001"):
    return [f.span.line for f in result.findings if f.code == code]


def test_a_helper_whose_only_callers_are_elsewhere_has_no_known_grad_mode(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from helpers import shrink, shrink_scale
        w = torch.randn(3, requires_grad=True)
        with torch.no_grad():
            shrink(w)
            shrink_scale()
    """))
    resolver = JediResolver(tmp_path)
    assert _lines(check_path(tmp_path / "helpers.py", settings=AG001, resolver=resolver)) == []  # (an error before: scale.mul_)
    assert _lines(check_path(tmp_path / "train.py", settings=AG001, resolver=resolver)) == []


def test_a_visible_caller_in_grad_mode_makes_it_an_error(tmp_path):
    source = HELPERS + "\nshrink_scale()\nw = torch.randn(3, requires_grad=True)\nshrink(w)\nshrink(w * 2)\n"
    result = check_source(Source(source, str(tmp_path / "one.py")), AG001)
    assert _lines(result) == [7, 11]  # the helpers' own lines; `w * 2` is no leaf


def test_another_modules_helper_is_reported_at_the_call_in_the_checked_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "train.py").write_text("import torch\nfrom helpers import shrink\nw = torch.randn(3, requires_grad=True)\nshrink(w)\n")
    result = check_path(tmp_path / "train.py", settings=AG001, resolver=JediResolver(tmp_path))
    assert _lines(result) == [4]
    assert "helpers.py:7" in result.findings[0].message


def test_calls_passing_the_same_facts_share_one_walk(tmp_path):
    calls = "\n".join(f"shrink(torch.randn({n}, requires_grad=True))" for n in range(2, 52))
    result = check_source(Source(HELPERS + "\n" + calls + "\n", str(tmp_path / "many.py")), AG001)
    assert _lines(result) == [7]
    assert result.model._walker.context_walks == 1


def test_the_call_depth_is_bounded():
    chain = ["import torch", "def f1(x):\n    f2(x)", "def f2(x):\n    f3(x)", "def f3(x):\n    x.add_(1)\n    f4(x)",
             "def f4(x):\n    x.sub_(1)", "f1(torch.zeros(2, requires_grad=True))"]
    text = "\n".join(chain) + "\n"
    assert callsite.MAX_DEPTH == 3
    result = check_source(Source(text, "chain.py"), AG001)
    assert _lines(result) == [text.splitlines().index("    x.add_(1)") + 1]  # f4 is a fourth call deep: its summary only
