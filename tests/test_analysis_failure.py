"""A defect of the analyzer on one file (an exception while walking it, or inside one rule) is that file's AG000
finding: the other files are still checked, the run exits 2 (an internal error, as ruff), and the file is never
reported as passing. The defect is injected into our own code in a child process (the CLI as a subprocess); torch,
jedi and pygls are the real ones."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from autograd_lsp import rules
from autograd_lsp.checker import check_source
from autograd_lsp.source import Source

# The walk fails on any file whose text holds the marker: a stand-in for a walker bug on one real file.
WALK_FAILS = (
    "import autograd_lsp.checker as checker\n"
    "real = checker.build_model\n"
    "def build_model(tree, source, **kw):\n"
    "    if 'EXPLODE' in source.text:\n"
    "        raise IndexError('list index out of range in the walk')\n"
    "    return real(tree, source, **kw)\n"
    "checker.build_model = build_model\n"
    "from autograd_lsp.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n")

LEAF_INPLACE = "import torch\nw = torch.zeros(3, requires_grad=True)\nw.add_(1)\n"


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-c", "import sys\n" + WALK_FAILS, *args],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.mark.parametrize("jobs", ["1", "2"])  # in this process, and in worker processes
def test_a_walk_that_fails_on_one_file_is_its_finding_and_the_run_goes_on(tmp_path, jobs):
    (tmp_path / "a_bad.py").write_text("import torch\n# EXPLODE\nx = torch.ones(2)\n")
    (tmp_path / "b_good.py").write_text(LEAF_INPLACE)
    done = run_cli("check", ".", "--no-cache", "--jobs", jobs, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "a_bad.py:1:1: AG000 could not be analysed: internal error of the analysis (IndexError" in done.stdout
    assert "b_good.py:3:1: AG001" in done.stdout  # the file after it is still checked
    assert "passed" not in done.stdout.lower()
    assert "Traceback" in done.stderr and "the analyzer failed on 1 file" in done.stderr


def test_exit_zero_does_not_hide_a_defect_and_json_carries_the_finding(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\n# EXPLODE\n")
    done = run_cli("check", "bad.py", "--format", "json", "--exit-zero", cwd=tmp_path)
    assert done.returncode == 2
    (entry,) = json.loads(done.stdout)
    assert (entry["code"], entry["severity"]) == ("AG000", "error") and "internal error" in entry["message"]


def test_a_defect_is_not_cached_so_the_next_run_tries_again(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.autograd-lsp]\n")
    (tmp_path / "m.py").write_text("import torch\n# EXPLODE\nw = torch.zeros(3, requires_grad=True)\nw.add_(1)\n")
    assert run_cli("check", "m.py", cwd=tmp_path).returncode == 2
    again = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "m.py"], capture_output=True, text=True,
                           cwd=tmp_path, timeout=120)  # the analyzer without the defect, same cache directory
    assert again.returncode == 1 and "m.py:4:1: AG001" in again.stdout and "internal error" not in again.stdout


def test_a_crashing_rule_leaves_the_others_findings_and_a_warning(monkeypatch):
    def boom(model):
        raise ZeroDivisionError("rule exploded")

    broken = [dataclasses.replace(r, check=boom) if r.code == "AG004" else r for r in rules.ALL_RULES]
    text = LEAF_INPLACE + "i = torch.arange(3, requires_grad=True)\n"
    result = check_source(Source(text, "mix.py"), rules=broken)
    codes = [(f.code, f.severity.value) for f in result.findings]
    assert ("AG001", "error") in codes and not any(code == "AG004" for code, _ in codes)
    (warning,) = [f for f in result.findings if f.code == "AG000"]
    assert warning.severity.value == "warning"
    assert warning.message.startswith("rule AG004") and "ZeroDivisionError: rule exploded" in warning.message
    assert len(result.rule_errors) == 1


def test_a_crashing_rule_fails_the_cli_run(tmp_path):
    (tmp_path / "m.py").write_text(LEAF_INPLACE)
    script = ("import sys, dataclasses, autograd_lsp.rules as rules\n"
              "def boom(model):\n    raise ZeroDivisionError('rule exploded')\n"
              "rules.ALL_RULES[:] = [dataclasses.replace(r, check=boom) if r.code == 'AG001' else r for r in rules.ALL_RULES]\n"
              "from autograd_lsp.cli import main\nraise SystemExit(main(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", script, "check", "m.py", "--no-cache"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert "m.py:1:1: AG000 rule AG001 (inplace-on-leaf) could not check this file" in done.stdout
