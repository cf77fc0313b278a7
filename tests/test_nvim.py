"""A real editor: headless Neovim opens a file with an AG001 bug, gets the diagnostic, applies the
`torch.no_grad()` quick fix and sees the diagnostic clear (tests/nvim/init.lua does the editor side); and it
explains seed 001's graph through the "Explain autograd graph here" action (tests/nvim/explain.lua)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

INIT = Path(__file__).resolve().parent / "nvim" / "init.lua"
EXPLAIN = INIT.with_name("explain.lua")
SEED001 = Path(__file__).resolve().parent / "explain_fixtures" / "seed001_three_weights.py"
BUGGY = "import torch\na = torch.ones(2, 2, requires_grad=True)\na += 2\n"


def test_neovim_quick_fix_round_trip(tmp_path):
    assert shutil.which("nvim"), "Neovim is required for this test: apt-get install -y --no-install-recommends neovim (.ci/run does)"
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    target = tmp_path / "leaf.py"
    target.write_text(BUGGY, encoding="utf-8")
    result_path = tmp_path / "result.json"
    env = dict(os.environ, AGL_RESULT=str(result_path), AGL_PYTHON=sys.executable, XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    done = subprocess.run(["nvim", "--headless", "-n", "-i", "NONE", "-u", str(INIT), str(target)],
                          cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert result_path.exists(), f"Neovim wrote no result (exit {done.returncode}): {done.stderr.decode()[-2000:]}"
    result = json.loads(result_path.read_text(encoding="utf-8"))
    assert done.returncode == 0 and result["status"] == 0, result
    assert result["steps"] == ["diagnostics", "hover", "applied", "cleared"]
    assert result["diagnostic"]["code"] == "AG001" and result["diagnostic"]["lnum"] == 2
    assert result["diagnostic"]["source"] == "autograd-lsp"
    assert "leaf · requires grad" in result["hover"]
    assert any(title.startswith("Ignore AG001") for title in result["actions"])
    assert result["text"] == "import torch\na = torch.ones(2, 2, requires_grad=True)\nwith torch.no_grad():\n    a += 2"


def test_neovim_explain_action_receives_the_markdown(tmp_path):
    assert shutil.which("nvim"), "Neovim is required for this test: apt-get install -y --no-install-recommends neovim (.ci/run does)"
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    target = tmp_path / SEED001.name
    shutil.copy(SEED001, target)
    result_path = tmp_path / "result.json"
    env = dict(os.environ, AGL_RESULT=str(result_path), AGL_PYTHON=sys.executable, AGL_LINE="38", XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    done = subprocess.run(["nvim", "--headless", "-n", "-i", "NONE", "-u", str(EXPLAIN), str(target)],
                          cwd=tmp_path, env=env, capture_output=True, timeout=300)
    assert result_path.exists(), f"Neovim wrote no result (exit {done.returncode}): {done.stderr.decode()[-2000:]}"
    result = json.loads(result_path.read_text(encoding="utf-8"))
    assert done.returncode == 0 and result["status"] == 0, result
    assert result["steps"] == ["diagnostics", "action", "explained", "shown"]
    assert result["command"]["command"] == "autograd-lsp.explain" and result["command"]["arguments"][1:] == [38, "cpu"]
    assert result["reply_status"] == "explained"
    markdown = result["markdown"]
    assert "line 40" in markdown and "optim.step()" in markdown  # the culprit: the step that bumped model.w2
    assert "line 20" in markdown  # the forward op that saved it
    assert all(name in markdown for name in ("model.w1", "model.w2", "model.w3"))  # the leaves, by the user's names
    assert result["culprit"]["line"] == 39 and result["culprit"]["uri"].endswith(SEED001.name)
    assert result["float_lines"] > 5
