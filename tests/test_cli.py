"""The CLI as users run it: a subprocess, real files, real exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograd_lsp.rules import ALL_RULES

BUG_AG001 = "import torch\na = torch.ones(2, 2, requires_grad=True)\na += 2\n"
BUG_AG004 = "import torch\nx = torch.tensor([1, 2, 3], requires_grad=True)\n"


def run(*args, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograd_lsp", *args], cwd=cwd, capture_output=True, text=True, timeout=120, input=input)


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_text_output_summary_and_exit_code(tmp_path):
    write(tmp_path, "bug.py", BUG_AG001)
    result = run("check", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "bug.py:3:1: AG001 in-place `+=` on `a`" in result.stdout
    assert result.stdout.strip().endswith("Found 1 problem.\n1 more fix is available with --unsafe-fixes.".split("\n")[-1])


def test_clean_tree_exits_zero(tmp_path):
    write(tmp_path, "ok.py", "import torch\na = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    a += 2\n")
    result = run("check", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "All checks passed!" in result.stdout


def test_safe_fix_marker_and_fix_rewrites_file(tmp_path):
    path = write(tmp_path, "ints.py", BUG_AG004)
    result = run("check", "ints.py", cwd=tmp_path)
    assert "AG004 [*]" in result.stdout
    assert "(1 fixable with --fix)" in result.stdout
    fixed = run("check", "ints.py", "--fix", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout
    assert "Fixed 1 problem." in fixed.stdout
    assert path.read_text() == "import torch\nx = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.float32)\n"


def test_unsafe_fixes_only_with_flag(tmp_path):
    path = write(tmp_path, "leaf.py", BUG_AG001)
    run("check", "leaf.py", "--fix", cwd=tmp_path)
    assert path.read_text() == BUG_AG001  # the only fixes are unsafe
    result = run("check", "leaf.py", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert path.read_text() == "import torch\na = torch.ones(2, 2, requires_grad=True)\nwith torch.no_grad():\n    a += 2\n"


def test_diff_does_not_write(tmp_path):
    path = write(tmp_path, "ints.py", BUG_AG004)
    result = run("check", "ints.py", "--diff", cwd=tmp_path)
    assert result.returncode == 1
    assert "+x = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.float32)" in result.stdout
    assert path.read_text() == BUG_AG004


def test_select_ignore_by_code_name_and_prefix(tmp_path):
    write(tmp_path, "both.py", BUG_AG001 + "y = torch.tensor([1, 2], requires_grad=True)\n")
    codes = lambda result: sorted({item["code"] for item in json.loads(result.stdout)})  # noqa: E731
    assert codes(run("check", ".", "--format", "json", cwd=tmp_path)) == ["AG001", "AG004"]
    assert codes(run("check", ".", "--format", "json", "--select", "AG004", cwd=tmp_path)) == ["AG004"]
    assert codes(run("check", ".", "--format", "json", "--ignore", "inplace-on-leaf", cwd=tmp_path)) == ["AG004"]
    assert codes(run("check", ".", "--format", "json", "--select", "AG00", "--ignore", "AG004", cwd=tmp_path)) == ["AG001"]
    assert codes(run("check", ".", "--format", "json", "--select", "AG004", "--extend-select", "AG001", cwd=tmp_path)) == ["AG001", "AG004"]


def test_unknown_rule_is_a_usage_error(tmp_path):
    write(tmp_path, "a.py", "x = 1\n")
    result = run("check", ".", "--select", "AG999", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown rule 'AG999'" in result.stderr


def test_exit_zero(tmp_path):
    write(tmp_path, "bug.py", BUG_AG001)
    assert run("check", ".", "--exit-zero", cwd=tmp_path).returncode == 0


def test_json_shape(tmp_path):
    write(tmp_path, "ints.py", BUG_AG004)
    items = json.loads(run("check", ".", "--format", "json", cwd=tmp_path).stdout)
    assert len(items) == 1
    item = items[0]
    assert set(item) == {"path", "cell", "cell_line", "line", "column", "end_line", "end_column", "code", "name", "severity", "message", "fix"}
    assert (item["line"], item["column"], item["code"], item["name"], item["severity"]) == (2, 29, "AG004", "nonfloat-requires-grad", "error")
    assert item["fix"]["safety"] == "safe"
    assert item["fix"]["edits"] == [{"line": 2, "column": 47, "end_line": 2, "end_column": 47, "text": ", dtype=torch.float32"}]


def test_sarif_is_2_1_0_with_rule_metadata(tmp_path):
    write(tmp_path, "bug.py", BUG_AG001)
    log = json.loads(run("check", ".", "--format", "sarif", cwd=tmp_path).stdout)
    assert log["version"] == "2.1.0" and "$schema" in log
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "autograd-lsp"
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert {rule.code for rule in ALL_RULES} <= set(rule_ids)
    for rule in driver["rules"]:
        assert {"id", "name", "shortDescription", "defaultConfiguration"} <= set(rule)
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "AG001" and driver["rules"][result["ruleIndex"]]["id"] == "AG001"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 3 and region["startColumn"] == 1
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bug.py"


def test_github_format(tmp_path):
    write(tmp_path, "bug.py", BUG_AG001)
    out = run("check", ".", "--format", "github", cwd=tmp_path).stdout.strip()
    assert out.startswith("::error file=bug.py,line=3,col=1,")
    assert "title=AG001 inplace-on-leaf::" in out


def test_statistics(tmp_path):
    write(tmp_path, "bug.py", BUG_AG001 + "b = torch.zeros(3, requires_grad=True)\nb.add_(1)\n")
    out = run("check", ".", "--statistics", cwd=tmp_path).stdout
    assert "    2  AG001  inplace-on-leaf" in out


def test_noqa_line_and_file_level(tmp_path):
    write(tmp_path, "a.py", BUG_AG001.replace("a += 2", "a += 2  # noqa: AG001"))
    assert run("check", "a.py", cwd=tmp_path).returncode == 0
    write(tmp_path, "b.py", BUG_AG001.replace("a += 2", "a += 2  # noqa: AG004"))
    assert run("check", "b.py", cwd=tmp_path).returncode == 1
    write(tmp_path, "c.py", BUG_AG001.replace("a += 2", "a += 2  # noqa"))
    assert run("check", "c.py", cwd=tmp_path).returncode == 0
    write(tmp_path, "d.py", "# autograd-lsp: noqa: AG001\n" + BUG_AG001)
    assert run("check", "d.py", cwd=tmp_path).returncode == 0
    write(tmp_path, "e.py", "# autograd-lsp: noqa\n" + BUG_AG001 + BUG_AG004)
    assert run("check", "e.py", cwd=tmp_path).returncode == 0


def test_pyproject_config_and_cli_override(tmp_path):
    write(tmp_path, "pyproject.toml", """
        [tool.autograd-lsp]
        ignore = ["AG001"]
        per-file-ignores = { "legacy/*.py" = ["AG004"] }
        exclude = ["generated"]
    """)
    write(tmp_path, "bug.py", BUG_AG001)
    write(tmp_path, "legacy/old.py", BUG_AG004)
    write(tmp_path, "generated/gen.py", BUG_AG004)
    write(tmp_path, "new.py", BUG_AG004)
    result = run("check", ".", "--format", "json", cwd=tmp_path)
    assert [(Path(i["path"]).as_posix(), i["code"]) for i in json.loads(result.stdout)] == [("new.py", "AG004")]
    overridden = run("check", ".", "--format", "json", "--select", "AG001", cwd=tmp_path)
    assert [i["code"] for i in json.loads(overridden.stdout)] == ["AG001"]


def test_invalid_config_names_the_key(tmp_path):
    write(tmp_path, "pyproject.toml", "[tool.autograd-lsp]\nselect = 'AG001'\nseverity = { AG001 = 'fatal' }\n")
    write(tmp_path, "a.py", "x = 1\n")
    result = run("check", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "severity.AG001" in result.stderr and "'fatal'" in result.stderr
    write(tmp_path, "pyproject.toml", "[tool.autograd-lsp]\nselecct = ['AG001']\n")
    result = run("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "unknown key 'selecct'" in result.stderr


def test_directory_walk_skips_venv_hidden_build_and_gitignored(tmp_path):
    for folder in (".venv/lib", ".hidden", "build", "ignored_dir", "src"):
        write(tmp_path, f"{folder}/m.py", BUG_AG001)
    write(tmp_path, ".gitignore", "ignored_dir/\n*_skip.py\n")
    write(tmp_path, "src/x_skip.py", BUG_AG001)
    items = json.loads(run("check", ".", "--format", "json", cwd=tmp_path).stdout)
    assert sorted(Path(i["path"]).as_posix() for i in items) == ["src/m.py"]


def test_explicit_file_is_checked_even_if_excluded(tmp_path):
    write(tmp_path, "build/m.py", BUG_AG001)
    assert run("check", "build/m.py", cwd=tmp_path).returncode == 1


def test_syntax_error_is_AG000_and_rest_continues(tmp_path):
    write(tmp_path, "broken.py", "import torch\ndef f(:\n    pass\n")
    write(tmp_path, "bug.py", BUG_AG001)
    out = run("check", ".", cwd=tmp_path).stdout
    assert "broken.py:2:7: AG000 SyntaxError" in out
    assert "bug.py:3:1: AG001" in out


def test_non_utf8_file_gets_a_clear_message(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"# caf\xe9\nx = 1\n")
    result = run("check", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "latin.py:1:1: AG000 not valid UTF-8" in result.stdout


def test_notebook_positions_are_cells(tmp_path):
    cells = [
        {"cell_type": "markdown", "source": ["# title"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import torch\n"]},
        {"cell_type": "code", "source": ["a = torch.ones(2, requires_grad=True)\n", "a += 1\n"]},
    ]
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {}}))
    out = run("check", ".", cwd=tmp_path).stdout
    assert "nb.ipynb:cell 3, line 2:1: AG001" in out


def test_broken_notebook_is_reported_not_fatal(tmp_path):
    (tmp_path / "nb.ipynb").write_text("{not json")
    write(tmp_path, "bug.py", BUG_AG001)
    out = run("check", ".", cwd=tmp_path).stdout
    assert "nb.ipynb:1:1: AG000 not a valid .ipynb notebook" in out
    assert "bug.py:3:1: AG001" in out


def test_parallel_jobs_give_the_same_findings(tmp_path):
    for index in range(20):
        write(tmp_path, f"m{index:02}.py", BUG_AG001 if index % 3 == 0 else BUG_AG004)
    serial = run("check", ".", "--format", "json", "--jobs", "1", cwd=tmp_path).stdout
    parallel = run("check", ".", "--format", "json", "--jobs", "2", cwd=tmp_path).stdout
    assert json.loads(serial) == json.loads(parallel)
    assert len(json.loads(serial)) == 20


@pytest.mark.parametrize("code", [rule.code for rule in ALL_RULES])
def test_rule_doc_has_the_fixed_shape(tmp_path, code):
    out = run("rule", code, cwd=tmp_path).stdout
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety", "## Runtime signature"):
        assert heading in out, f"{code} doc lacks {heading}"


def test_rule_all_lists_every_rule(tmp_path):
    out = run("rule", "--all", cwd=tmp_path).stdout
    assert [line.split()[0] for line in out.splitlines()] == [rule.code for rule in ALL_RULES]
    assert run("rule", "AG999", cwd=tmp_path).returncode == 2


def test_missing_path_is_reported_and_the_others_checked(tmp_path):
    # as ruff does (E902): a finding of its own, exit 1, every other path still checked
    write(tmp_path, "bug.py", BUG_AG001)
    result = run("check", "nope.py", "bug.py", "--no-cache", cwd=tmp_path)
    assert "nope.py:1:1: AG000 no such file or directory" in result.stdout
    assert "bug.py:3:1: AG001" in result.stdout and "Found 2 problems" in result.stdout
    assert result.returncode == 1
    (item,) = [i for i in json.loads(run("check", "nope.py", "bug.py", "--format", "json", cwd=tmp_path).stdout) if i["path"] == "nope.py"]
    assert (item["code"], item["name"]) == ("AG000", "unreadable")


HELPER = "import torch\n\ndef compose(a, b):\n    return torch.stack((a, b))\n"
TRAIN = """\
import torch
from helpers import compose

a = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(2.0, requires_grad=True)
opt = torch.optim.SGD([a, b], lr=0.1)
w = compose(a, b)
for step in range(3):
    loss = (w * 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_cross_module_helper_resolved_through_jedi(tmp_path):
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "helpers.py", HELPER)
    write(tmp_path, "train.py", TRAIN)
    items = json.loads(run("check", ".", "--format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert [(i["path"], i["line"], i["code"]) for i in items] == [("train.py", 7, "AG002"), ("train.py", 9, "AG002")]
    assert json.loads(run("check", ".", "--format", "json", "--no-cross-module", "--no-cache", cwd=tmp_path).stdout) == []


def test_cache_hits_and_invalidates_on_dependency_change(tmp_path):
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "helpers.py", HELPER)
    write(tmp_path, "train.py", TRAIN)
    first = run("check", ".", "--format", "json", cwd=tmp_path).stdout
    entries = list((tmp_path / ".autograd-lsp-cache").rglob("*.json"))
    assert len(entries) == 2  # one per file
    assert run("check", ".", "--format", "json", cwd=tmp_path).stdout == first
    # the helper stops composing from its arguments: train.py's cached finding must not survive
    write(tmp_path, "helpers.py", "import torch\n\ndef compose(a, b):\n    return torch.zeros(2)\n")
    assert json.loads(run("check", ".", "--format", "json", cwd=tmp_path).stdout) == []
    # and a changed file is re-analysed
    write(tmp_path, "train.py", BUG_AG001)
    assert [i["code"] for i in json.loads(run("check", ".", "--format", "json", cwd=tmp_path).stdout)] == ["AG001"]
