"""Notebooks as Jupyter writes them: IPython syntax, positions per cell, fixes written back into the cells."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from autograd_lsp.notebook import mask_cell
from test_cli import run


def code(source, **extra) -> dict:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
    cell.update(extra)
    return cell


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": [text]}


def notebook(*cells) -> dict:
    return {"cells": list(cells), "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def dumps(nb: dict) -> str:
    """How Jupyter (nbformat) writes a notebook: indent 1, non-ASCII kept, a final newline."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def write_notebook(root: Path, nb: dict, name: str = "nb.ipynb") -> Path:
    path = root / name
    path.write_text(dumps(nb), encoding="utf-8")
    return path


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


IPYTHON_SETUP = lines("%pip install torch\n%load_ext autoreload\n%autoreload 2\n!nvidia-smi\n%matplotlib inline\n"
                      "import torch\ntorch.ones?\n??torch.zeros\nfiles = !ls\n")
INDENTED_MAGICS = lines("import sys\nif 'google.colab' in sys.modules:\n    !pip install -q torch\n"
                        "elif sys.platform == 'darwin':\n    %pip install torch\nelse:\n    torch?\n"
                        "for name in ['a']:\n    %time print(name)\n")
BUG_CELL = lines("a = torch.ones(2, requires_grad=True)\na += 1\n")


# -- IPython syntax is masked into Python of the same shape --------------------------------------------
def test_valid_notebook_with_ipython_syntax_is_analysed_whole(tmp_path):
    write_notebook(tmp_path, notebook(
        markdown("# Training"),
        code(IPYTHON_SETUP),
        code(["%%time\n", "x = torch.randn(3, requires_grad=True)\n"]),
        code(["%%capture captured\n", *INDENTED_MAGICS]),
        code(BUG_CELL),
    ))
    result = run("check", "nb.ipynb", "--no-cache", cwd=tmp_path)
    assert "AG000" not in result.stdout, result.stdout
    assert "nb.ipynb:cell 5, line 2:1: AG001" in result.stdout
    assert result.returncode == 1


def test_statement_after_a_time_magic_is_analysed(tmp_path):
    write_notebook(tmp_path, notebook(code(["import torch\n", "a = torch.ones(2, requires_grad=True)\n", "%time a += 1\n"])))
    out = run("check", "nb.ipynb", "--no-cache", cwd=tmp_path).stdout
    assert "nb.ipynb:cell 1, line 3:7: AG001" in out  # the column of `a` in `%time a += 1`


def test_non_python_cell_magic_is_not_analysed(tmp_path):
    write_notebook(tmp_path, notebook(code(["%%bash\n", "for f in *.py; do echo $f; done\n"]), code(["import torch\n", *BUG_CELL])))
    out = run("check", "nb.ipynb", "--no-cache", cwd=tmp_path).stdout
    assert "AG000" not in out and "nb.ipynb:cell 2, line 3:1: AG001" in out


@pytest.mark.parametrize("cell", [
    "".join(IPYTHON_SETUP), "".join(INDENTED_MAGICS), "%%time\nx = 1\n", "\n%%capture\nx = 1", "%%html\n<b>?</b>\n",
    "%time x = f()\n%timeit -n 3 f()\n%timeit for i in x: pass\n", "%pip install a \\\n    b\nz = 2", "a, b = %sx ls",
    "/print x\n,print a b\n;print c d\n",
], ids=lambda c: c.split("\n")[0][:20])
def test_masked_cells_parse_and_keep_their_shape(cell):
    masked, numbers = mask_cell(cell)
    ast.parse("\n".join(masked))
    original = cell.split("\n")
    assert len(masked) == len(original)
    assert numbers, "some line was IPython"
    for number, (before, after) in enumerate(zip(original, masked)):
        if number not in numbers:
            assert before == after  # Python lines are untouched: same columns


def test_python_that_looks_like_ipython_is_left_alone():
    cell = "x = (a\n     % b)\ns = '''\n!not a magic\nwhy?\n'''\ny = 1  # why?\nz = [\n    !x\n]"
    masked, numbers = mask_cell(cell)
    assert masked[:7] == cell.split("\n")[:7] and not numbers & set(range(7))


# -- positions: the cell and the line within it -----------------------------------------------------------
def test_json_and_sarif_give_cell_and_line_in_cell(tmp_path):
    write_notebook(tmp_path, notebook(markdown("# Intro"), code(IPYTHON_SETUP), code(BUG_CELL)))
    (item,) = json.loads(run("check", "nb.ipynb", "--format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert (item["code"], item["cell"], item["cell_line"], item["column"]) == ("AG001", 3, 2, 1)
    assert item["line"] == len(IPYTHON_SETUP) + 1 + 2  # the line in the code cells joined (cell 2 ends with a newline)
    sarif = json.loads(run("check", "nb.ipynb", "--format", "sarif", "--no-cache", cwd=tmp_path).stdout)
    run_ = sarif["runs"][0]
    assert run_["columnKind"] == "unicodeCodePoints"
    (location,) = run_["results"][0]["locations"]
    assert location["physicalLocation"]["region"]["startLine"] == 2
    assert location["logicalLocations"][0]["name"] == "cell 3"
    related = run_["results"][0]["relatedLocations"][0]
    assert related["physicalLocation"]["region"]["startLine"] == 1 and related["logicalLocations"][0]["name"] == "cell 3"


def test_python_files_have_null_cells_in_json(tmp_path):
    (tmp_path / "bug.py").write_text("".join(BUG_CELL).replace("a =", "import torch\na ="), encoding="utf-8")
    (item,) = json.loads(run("check", "bug.py", "--format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert (item["cell"], item["cell_line"], item["line"]) == (None, None, 3)


# -- invalid notebooks ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text, reason", [
    ('{"cells": "notalist"}', "'cells' is str, not a list"),
    ('{"cells": [{"cell_type": "code", "source": 5}]}', "'source' is neither a string nor a list of strings"),
    ('{"cells": [3]}', "cell 1 is not an object"),
    ("[]", "no 'cells' list"),
])
def test_invalid_notebook_is_a_clear_finding(tmp_path, text, reason):
    (tmp_path / "bad.ipynb").write_text(text, encoding="utf-8")
    result = run("check", "bad.ipynb", "--no-cache", cwd=tmp_path)
    assert "bad.ipynb:1:1: AG000 not a valid .ipynb notebook" in result.stdout and reason in result.stdout
    assert result.returncode == 1
