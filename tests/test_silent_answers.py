"""No silent wrong answers: what cannot be analysed says so, and what rules decide reaches the user."""
from __future__ import annotations

import asyncio
import json
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from autograd_lsp.checker import check_text, check_source
from autograd_lsp.source import Source
from server_support import SERVER, WAIT, Editor
from test_cli import run, write

LEAF_BUG = "import torch\nw = torch.zeros(3, requires_grad=True)\nw.add_(1)\na = 1.0\n"


def deep_file(terms: int) -> str:
    """A valid program with an AG001 on line 3 and a `terms`-term `a + a + ...` chain after it."""
    return LEAF_BUG + "b = " + " + ".join(["a"] * terms) + "\n"


# -- nesting deeper than the walker's recursion -----------------------------------------------------------
@pytest.mark.parametrize("terms", [600, 2900])
def test_deeply_nested_file_is_analysed_by_the_cli(tmp_path, terms):
    write(tmp_path, "deep.py", deep_file(terms))
    result = run("check", "deep.py", "--no-cache", cwd=tmp_path)
    assert "deep.py:3:1: AG001" in result.stdout, result.stdout + result.stderr
    assert "All checks passed" not in result.stdout
    assert result.returncode == 1


def test_deep_chains_of_every_shape_are_analysed():
    chains = {
        "attributes": "b = a" + ".x" * 2000,
        "calls": "b = a" + "()" * 2000,
        "conditional": "b = " + "a if a else " * 2000 + "a",
        "elif": "if a:\n    pass\n" + "elif a:\n    pass\n" * 2000,
    }
    for shape, chain in chains.items():
        result = check_text(LEAF_BUG + chain + "\n", "deep.py")
        assert [(f.code, f.span.line) for f in result.findings] == [("AG001", 3)], shape


class _Bottomless:
    """A rule whose check recurses without end: what a tree deeper than any stack looks like to the checker."""

    code, name = "AG001", "inplace-on-leaf"

    def check(self, model):
        def down(depth):
            return down(depth + 1) + 1

        return [down(0)]


def test_a_file_that_cannot_be_analysed_is_a_finding_not_a_pass():
    result = check_source(Source(deep_file(10), "deep.py"), rules=[_Bottomless()])
    (finding,) = result.findings
    assert (finding.code, finding.name, finding.severity.value) == ("AG000", "not-analysed", "error")
    assert finding.message.startswith("could not be analysed")
    assert not result.rule_errors  # not mistaken for one broken rule skipped among the others
    assert sys.getrecursionlimit() < 50_000  # the deeper limit was for the worker thread's run only


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)


async def test_deeply_nested_file_is_analysed_by_the_server(client: LanguageClient, tmp_path):
    editor = Editor(client, "visual-studio-code", tmp_path)
    await editor.start()
    uri = editor.open("deep.py", deep_file(2900))
    diagnostics = await editor.diagnostics(uri, lambda ds: any(d.code == "AG001" for d in ds))
    assert [(d.code, d.range.start.line) for d in diagnostics] == [("AG001", 2)]


# -- severities: a rule's per-case severity reaches the user; configuration still wins --------------------
RETAINED = """\
import torch
x = torch.ones(3, requires_grad=True)
y = (x * 2).sum()
y.backward(retain_graph=True)
"""


def test_a_rules_own_severity_for_a_case_reaches_json_and_sarif(tmp_path):
    from autograd_lsp.rules import BY_CODE

    write(tmp_path, "retained.py", RETAINED)
    (finding,) = check_text(RETAINED, "retained.py").findings
    # AG003 is an error by default (a retained graph reused after a step raises); never reusing it only wastes memory
    assert finding.code == "AG003" and finding.severity.value == "warning" != BY_CODE["AG003"].severity.value
    (entry,) = json.loads(run("check", "retained.py", "--format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert (entry["code"], entry["severity"]) == ("AG003", "warning")
    sarif = json.loads(run("check", "retained.py", "--format", "sarif", "--no-cache", cwd=tmp_path).stdout)
    (result,) = sarif["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("AG003", "warning")


def test_configured_severity_overrides_the_rules_own(tmp_path):
    write(tmp_path, "retained.py", RETAINED)
    write(tmp_path, "pyproject.toml", '[tool.autograd-lsp]\nseverity = { AG003 = "error" }\n')
    (entry,) = json.loads(run("check", "retained.py", "--format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert (entry["code"], entry["severity"]) == ("AG003", "error")


# -- smaller silent answers ---------------------------------------------------------------------------------
def test_rule_AG000_is_documented(tmp_path):
    for token in ("AG000", "ag000", "syntax-error", "not-analysed", "unreadable"):
        result = run("rule", token, cwd=tmp_path)
        assert result.returncode == 0, token
        assert result.stdout.startswith("# AG000 ") and "not-analysed" in result.stdout and "## Why is this bad?" in result.stdout


def test_rule_docs_name_their_examples_not_seeds(tmp_path):
    from autograd_lsp.rules import ALL_RULES

    for rule in ALL_RULES:
        out = run("rule", rule.code, cwd=tmp_path).stdout
        assert "seed 0" not in out and "seeds 0" not in out, rule.code


def test_underscore_table_is_not_read_silently(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.autograd_lsp]\nignore = ["AG001"]\n')
    write(tmp_path, "bug.py", LEAF_BUG)
    result = run("check", "bug.py", "--no-cache", cwd=tmp_path)
    assert "[tool.autograd_lsp] is not read: the table is [tool.autograd-lsp]" in result.stderr
    assert "bug.py:3:1: AG001" in result.stdout  # and, as the warning says, it was not applied


def test_pep263_declared_encoding_is_read(tmp_path):
    (tmp_path / "latin.py").write_bytes("# -*- coding: latin-1 -*-\n# café\n".encode("latin-1") + LEAF_BUG.encode())
    result = run("check", "latin.py", "--no-cache", cwd=tmp_path)
    assert "latin.py:5:1: AG001" in result.stdout and "AG000" not in result.stdout


def test_undeclared_non_utf8_and_wrongly_declared_files_get_clear_messages(tmp_path):
    (tmp_path / "plain.py").write_bytes(b"# caf\xe9\nx = 1\n")
    (tmp_path / "liar.py").write_bytes(b"# coding: utf-8\n# caf\xe9\nx = 1\n")
    (tmp_path / "odd.py").write_bytes(b"# coding: klingon\nx = 1\n")
    out = run("check", ".", "--no-cache", cwd=tmp_path).stdout
    assert "plain.py:1:1: AG000 not valid UTF-8 (byte 5) and no coding declaration" in out and "PEP 263" in out
    assert "liar.py:1:1: AG000 not valid utf-8 (byte 21), the encoding its coding declaration names" in out
    assert "odd.py:1:1: AG000 unknown encoding 'klingon'" in out


def test_sarif_says_how_columns_count(tmp_path):
    write(tmp_path, "bug.py", "import torch\na = torch.ones(2, requires_grad=True)\nb = 'é𝄞' ; a += 1\n")
    sarif = json.loads(run("check", "bug.py", "--format", "sarif", "--no-cache", cwd=tmp_path).stdout)
    assert sarif["runs"][0]["columnKind"] == "unicodeCodePoints"
    # `a` is the 12th code point of its line (it would be the 13th UTF-16 code unit)
    assert sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startColumn"] == 12


def test_confirm_without_torch_suggests_python(tmp_path):
    import subprocess
    import venv

    venv.create(tmp_path / "bare", with_pip=False)
    bare = tmp_path / "bare" / "bin" / "python"
    assert subprocess.run([str(bare), "-c", "import torch"], capture_output=True).returncode != 0
    write(tmp_path, "bug.py", LEAF_BUG)
    result = run("confirm", "bug.py:3", "--python", str(bare), cwd=tmp_path)
    assert "torch missing" in result.stdout and "pass --python PATH" in result.stdout, result.stdout + result.stderr
