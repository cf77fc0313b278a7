"""The flake8 plugin, run as teams run it: `flake8 --select AG` in a subprocess, compared with `autograd-lsp check`."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FORMAT = "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s"
BUG_AG001 = "import torch\na = torch.ones(2, 2, requires_grad=True)\na += 2\n"
BUG_AG004 = "import torch\nx = torch.tensor([1, 2, 3], requires_grad=True)\n"


def flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def flake8_rows(*args: str, cwd: Path) -> set[tuple]:
    result = flake8("--format", FORMAT, *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    rows = set()
    for line in result.stdout.splitlines():
        path, row, col, code, text = line.split("|", 4)  # flake8's text is the message without the code
        rows.add((Path(path).as_posix(), int(row), int(col), code, text))
    return rows


def check_rows(*paths: str, cwd: Path) -> set[tuple]:
    result = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--no-cache", "--format", "json", *paths],
                            cwd=cwd, capture_output=True, text=True, timeout=300)
    assert result.returncode in (0, 1), result.stderr
    return {(Path(f["path"]).as_posix(), f["line"], f["column"], f["code"], f["message"]) for f in json.loads(result.stdout)}


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_plugin_is_registered_under_the_ag_prefix():
    result = flake8("--version", cwd=REPO)
    assert result.returncode == 0, result.stderr
    # Missing here means the installed metadata predates the entry point: `pip install -e '.[dev]'` again.
    assert "autograd-lsp" in result.stdout, result.stdout


def test_same_findings_as_check_on_samples_and_fixtures():
    """Every .py under samples/ and tests/fixtures/ (buggy, fixed, cross-module helpers): the same lines, columns,
    codes and messages. Notebooks are left out: flake8 does not read .ipynb files."""
    from_check = {row for row in check_rows("samples", "tests/fixtures", cwd=REPO) if row[0].endswith(".py")}
    from_flake8 = flake8_rows("--select", "AG", "samples", "tests/fixtures", cwd=REPO)
    assert from_flake8 == from_check
    assert {row[3] for row in from_flake8} >= {f"AG{n:03d}" for n in range(1, 19)}  # every rule took part


def test_select_ignore_noqa_and_pyproject_are_honoured(tmp_path):
    write(tmp_path, "leaf.py", BUG_AG001)
    write(tmp_path, "ints.py", BUG_AG004)
    write(tmp_path, "quiet.py", BUG_AG001.replace("a += 2", "a += 2  # noqa: AG001"))
    write(tmp_path, "style.py", "import os\n")  # F401 for flake8's own checks
    everything = flake8_rows(".", cwd=tmp_path)
    assert {(row[0], row[3]) for row in everything} == {("leaf.py", "AG001"), ("ints.py", "AG004"), ("style.py", "F401")}
    assert {row[3] for row in flake8_rows("--select", "AG004", ".", cwd=tmp_path)} == {"AG004"}
    assert {row[3] for row in flake8_rows("--select", "AG", "--extend-ignore", "AG004", ".", cwd=tmp_path)} == {"AG001"}
    assert flake8_rows("--select", "F", ".", cwd=tmp_path) == {("style.py", 1, 1, "F401", "'os' imported but unused")}

    write(tmp_path, "pyproject.toml", '[tool.autograd-lsp]\nignore = ["AG001"]\n')
    assert {row[3] for row in flake8_rows("--select", "AG", ".", cwd=tmp_path)} == {"AG004"}
    assert flake8_rows("--select", "AG", ".", cwd=tmp_path) == check_rows(".", cwd=tmp_path)


def test_exit_codes_follow_flake8(tmp_path):
    write(tmp_path, "ok.py", "import torch\na = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    a += 2\n")
    clean = flake8("--select", "AG", ".", cwd=tmp_path)
    assert (clean.returncode, clean.stdout) == (0, "")
    write(tmp_path, "leaf.py", BUG_AG001)
    found = flake8("--select", "AG", ".", cwd=tmp_path)
    assert found.returncode == 1
    assert found.stdout.startswith("./leaf.py:3:1: AG001 in-place `+=` on `a`"), found.stdout


def test_invalid_configuration_fails_with_its_message(tmp_path):
    write(tmp_path, "leaf.py", BUG_AG001)
    write(tmp_path, "pyproject.toml", '[tool.autograd-lsp]\nselect = ["AG999"]\n')
    result = flake8("--select", "AG", ".", cwd=tmp_path)
    assert result.returncode != 0
    assert "unknown rule 'AG999'" in result.stdout + result.stderr
