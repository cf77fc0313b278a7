"""Notebooks as Jupyter writes them: IPython syntax, positions per cell, fixes written back into the cells."""
from __future__ import annotations

import ast
import asyncio
import copy
import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from autograd_lsp.notebook import mask_cell
from server_support import SERVER, WAIT, Editor
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
    cell = "x = (a\n     % b)\ns = '''\n!not a magic\nwhy?\n'''\ny = 1  # why?\ndef f():\n    \"\"\"Is it?\n    \"\"\"\nz = [\n    !x\n]"
    masked, numbers = mask_cell(cell)
    assert masked[:10] == cell.split("\n")[:10] and not numbers & set(range(10))


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


def test_messages_name_lines_by_cell(tmp_path):
    write_notebook(tmp_path, notebook(code(IPYTHON_SETUP), code(["a = torch.ones(2, requires_grad=True)\n"]), code(["a += 1\n"])))
    out = run("check", "nb.ipynb", "--no-cache", cwd=tmp_path).stdout
    assert "nb.ipynb:cell 3, line 1:1: AG001" in out and "(`torch.ones(2, requires_grad=True)` at cell 2, line 1)" in out
    (item,) = json.loads(run("check", "nb.ipynb", "--format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert "at cell 2, line 1)" in item["message"]


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


# -- --fix and --diff on notebooks ----------------------------------------------------------------------
AG004_CELL = ["import torch\n", "x = torch.tensor([1, 2, 3], requires_grad=True)\n", "print(x)"]
FIXED_AG004 = "x = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.float32)\n"


def fixable_notebook() -> dict:
    return notebook(
        markdown("# Intro — données"),
        code(IPYTHON_SETUP, execution_count=1, metadata={"tags": ["setup"]},
             outputs=[{"output_type": "stream", "name": "stdout", "text": ["Requirement already satisfied: torch\n"]}]),
        code(AG004_CELL, execution_count=2,
             outputs=[{"output_type": "execute_result", "execution_count": 2, "metadata": {}, "data": {"text/plain": ["tensor([1, 2, 3])"]}}]),
        code("b = torch.tensor([4, 5], requires_grad=True)", execution_count=3),  # a string source, as some tools write
    )


def test_fix_rewrites_only_the_changed_cells(tmp_path):
    original = fixable_notebook()
    path = write_notebook(tmp_path, original)
    result = run("check", "nb.ipynb", "--fix", "--no-cache", cwd=tmp_path)
    assert "Fixed 2 problems." in result.stdout, result.stdout
    expected = json.loads(json.dumps(original))
    expected["cells"][2]["source"][1] = FIXED_AG004
    expected["cells"][3]["source"] = "b = torch.tensor([4, 5], requires_grad=True, dtype=torch.float32)"
    assert path.read_text(encoding="utf-8") == dumps(expected)  # byte for byte: outputs, metadata, layout kept


def test_fix_keeps_another_indent(tmp_path):
    original = fixable_notebook()
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(original, indent=2), encoding="utf-8")  # ASCII-escaped, indent 2, no final newline
    run("check", "nb.ipynb", "--fix", "--no-cache", cwd=tmp_path)
    expected = json.loads(json.dumps(original))
    expected["cells"][2]["source"][1] = FIXED_AG004
    expected["cells"][3]["source"] = "b = torch.tensor([4, 5], requires_grad=True, dtype=torch.float32)"
    assert path.read_text(encoding="utf-8") == json.dumps(expected, indent=2)


def test_diff_shows_notebook_cells_and_writes_nothing(tmp_path):
    path = write_notebook(tmp_path, fixable_notebook())
    before = path.read_bytes()
    result = run("check", "nb.ipynb", "--diff", "--no-cache", cwd=tmp_path)
    assert "--- a/nb.ipynb:cell 3\n+++ b/nb.ipynb:cell 3\n" in result.stdout
    assert "+" + FIXED_AG004 in result.stdout
    assert "--- a/nb.ipynb:cell 4" in result.stdout and "\\ No newline at end of file" in result.stdout
    assert "Would fix 2 problems." in result.stderr
    assert result.returncode == 1 and path.read_bytes() == before


def test_fix_inside_a_time_magic_keeps_the_magic(tmp_path):
    path = write_notebook(tmp_path, notebook(code(["import torch\n", "a = torch.ones(2, requires_grad=True)\n", "%time a += 1\n"])))
    run("check", "nb.ipynb", "--fix", "--unsafe-fixes", "--no-cache", cwd=tmp_path)
    assert json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"][2] == "%time a = a + 1\n"


def test_edits_that_would_rewrite_ipython_syntax_are_refused():
    from autograd_lsp.cli import _cell_edits
    from autograd_lsp.findings import Edit, Fix, Safety, Span
    from autograd_lsp.source import join_cells

    source = join_cells([(0, "import torch\n%time a += 1\n%pip install x\n")])
    inside = Fix("out of place", Safety.UNSAFE, (Edit(Span(2, 6, 2, 12), "a = a + 1"),))
    assert _cell_edits(source, inside) == [(0, Edit(Span(2, 6, 2, 12), "a = a + 1"))]
    for edit in (Edit(Span(2, 0, 2, 12), "with x:\n    a += 1"),  # over the `%time`
                 Edit(Span(2, 6, 2, 12), "with x:\n    a += 1"),  # a block inside a line magic
                 Edit(Span(3, 0, 3, 4), "x"),  # the `pass` standing for `%pip`
                 Edit(Span(2, 6, 3, 2), "")):  # across into a masked line
        assert _cell_edits(source, Fix("t", Safety.UNSAFE, (edit,))) is None, edit


# -- line endings of .py files ----------------------------------------------------------------------------
@pytest.mark.parametrize("endings", [["\r\n"] * 4, ["\n", "\r\n", "\n", "\r\n"]], ids=["crlf", "mixed"])
def test_fix_keeps_line_endings(tmp_path, endings):
    body = ["import torch", "a = torch.ones(2, requires_grad=True)", "a += 1", "x = torch.tensor([1, 2, 3], requires_grad=True)"]
    path = tmp_path / "bug.py"
    path.write_bytes("".join(line + ending for line, ending in zip(body, endings)).encode())
    result = run("check", "bug.py", "--fix", "--unsafe-fixes", "--no-cache", cwd=tmp_path)
    assert "Fixed 2 problems." in result.stdout, result.stdout
    # the no_grad wrap inserts a line: it takes the ending of the line it was made from
    wanted = ["import torch", "a = torch.ones(2, requires_grad=True)", "with torch.no_grad():", "    a += 1",
              "x = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.float32)"]
    wanted_endings = endings[:2] + [endings[2], endings[2]] + endings[3:]
    assert path.read_bytes() == "".join(line + ending for line, ending in zip(wanted, wanted_endings)).encode()


def test_fix_keeps_a_declared_encoding(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes("# -*- coding: latin-1 -*-\n# café\nimport torch\nx = torch.tensor([1, 2], requires_grad=True)\n".encode("latin-1"))
    run("check", "latin.py", "--fix", "--no-cache", cwd=tmp_path)
    assert path.read_bytes().decode("latin-1").endswith("# café\nimport torch\nx = torch.tensor([1, 2], requires_grad=True, dtype=torch.float32)\n")


# -- the language server reads notebooks through the same masking ---------------------------------------
@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)


async def open_notebook(client: LanguageClient, tmp_path: Path, name: str, texts: list[str]) -> tuple[Editor, list[str]]:
    """A VS Code-like client that syncs notebooks opens one whose code cells hold `texts`: the editor and cell URIs."""
    editor = Editor(client, "visual-studio-code", tmp_path)
    capabilities = copy.deepcopy(pytest_lsp.client_capabilities("visual-studio-code"))
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(dynamic_registration=False))
    await editor.start(capabilities=capabilities)
    path = tmp_path / name
    uris = [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(texts))]
    editor.client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=path.as_uri(), notebook_type="jupyter-notebook", version=1,
                                                 cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=uri) for uri in uris]),
        cell_text_documents=[types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text) for uri, text in zip(uris, texts)]))
    return editor, uris


async def test_server_analyses_notebook_cells_with_ipython_syntax(client: LanguageClient, tmp_path):
    texts = ["".join(IPYTHON_SETUP), "%%time\n" + "".join(INDENTED_MAGICS), "".join(BUG_CELL)]
    editor, uris = await open_notebook(client, tmp_path, "nb.ipynb", texts)
    diagnostics = await editor.diagnostics(uris[2], lambda ds: any(d.code == "AG001" for d in ds))
    assert [(d.code, d.range.start.line) for d in diagnostics] == [("AG001", 1)]
    for uri in uris[:2]:
        assert await editor.diagnostics(uri, lambda ds: True) == []  # no AG000 on the IPython lines


async def test_server_reports_a_broken_cell_and_analyses_the_others(client: LanguageClient, tmp_path):
    texts = ["import torch\nw = torch.ones(3, requires_grad=True)\n", "loss_fn = # TODO\n", "w += 1\n"]
    editor, uris = await open_notebook(client, tmp_path, "exercise.ipynb", texts)
    diagnostics = await editor.diagnostics(uris[2], lambda ds: any(d.code == "AG001" for d in ds))
    assert [(d.code, d.range.start.line) for d in diagnostics] == [("AG001", 0)]
    broken = await editor.diagnostics(uris[1], lambda ds: any(d.code == "AG000" for d in ds))
    assert [(d.code, d.range.start.line) for d in broken] == [("AG000", 0)]


# -- a cell that is not Python (an exercise's placeholder) ---------------------------------------------
def exercise_notebook() -> dict:
    return notebook(code(["import torch\n", "w = torch.ones(3, requires_grad=True)\n"]),
                    markdown("Define the loss yourself:"),
                    code(["criterion = # TODO: define the loss\n"]),
                    code(["for step in range(3):\n", "    w += 1\n"]),
                    code(["def f(:\n", "    pass\n"]))


def test_broken_cells_are_reported_and_the_others_analysed(tmp_path):
    write_notebook(tmp_path, exercise_notebook())
    result = run("check", "nb.ipynb", "--no-cache", "--format", "json", cwd=tmp_path)
    found = [(f["code"], f["cell"], f["cell_line"]) for f in json.loads(result.stdout)]
    assert found == [("AG000", 3, 1), ("AG001", 4, 2), ("AG000", 5, 1)], result.stdout
    assert result.returncode == 1


def test_fix_leaves_broken_cells_as_they_are(tmp_path):
    original = exercise_notebook()
    path = write_notebook(tmp_path, original)
    result = run("check", "nb.ipynb", "--fix", "--unsafe-fixes", "--no-cache", cwd=tmp_path)
    assert "Fixed 1 problem." in result.stdout, result.stdout
    cells = [json.loads(path.read_text(encoding="utf-8"))["cells"][i]["source"] for i in (2, 3, 4)]
    assert cells[0] == original["cells"][2]["source"] and cells[2] == original["cells"][4]["source"]
    assert "with torch.no_grad():" in "".join(cells[1])


def test_fix_keeps_a_cells_crlf_line_endings(tmp_path):
    original = notebook(code(["import torch\r\n", "x = torch.tensor([1, 2, 3], requires_grad=True)\r\n", "print(x)\r\n"]))
    path = write_notebook(tmp_path, original)
    run("check", "nb.ipynb", "--fix", "--no-cache", cwd=tmp_path)
    assert json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"] == [
        "import torch\r\n", FIXED_AG004.replace("\n", "\r\n"), "print(x)\r\n"]


REPO = Path(__file__).resolve().parent.parent
PYTHON_FILES = sorted(REPO.glob("samples/*.py")) + sorted(REPO.glob("tests/fixtures/**/*.py")) + sorted(REPO.glob("autograd_lsp/**/*.py"))


def test_valid_python_is_never_masked():
    for path in PYTHON_FILES:
        text = path.read_text(encoding="utf-8")
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        assert not mask_cell(text)[1], path


def test_magics_at_any_statement_start_still_parse():
    import random

    chooser = random.Random(11)
    magics = ["%pip install x", "!ls -la", "%matplotlib inline", "x?", "??torch.zeros", "files = !ls", "%time f()", "%load_ext autoreload"]
    for path in PYTHON_FILES:
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.split("\n")
        starts = {node.lineno: node.col_offset for node in ast.walk(tree)
                  if isinstance(node, ast.stmt) and not getattr(node, "decorator_list", None)}
        for line in sorted(chooser.sample(sorted(starts), min(4, len(starts))), reverse=True):
            if not lines[line - 1][: starts[line]].strip() and not lines[line - 1].lstrip().startswith(("elif", "else")):
                lines.insert(line - 1, " " * starts[line] + chooser.choice(magics))
        masked, _ = mask_cell("\n".join(lines))
        ast.parse("\n".join(masked))  # raises on the first one that does not


# -- a cell whose first line is indented (IPython strips that indentation) ----------------------------------------
def indented_notebook() -> dict:
    return notebook(code(["import torch\n"]),
                    code(["  # the weights\n", "  w = torch.ones(3, requires_grad=True)\n", "  w += 1\n"]),
                    code(["w2 = torch.zeros(2, requires_grad=True)\n", "w2.add_(1)\n"]),
                    code(["  x = 1\n", " y = 2\n"]))


def test_indented_cell_is_analysed_in_place(tmp_path):
    write_notebook(tmp_path, indented_notebook())
    result = run("check", "nb.ipynb", "--no-cache", "--format", "json", cwd=tmp_path)
    found = [(f["code"], f["cell"], f["cell_line"], f["column"] if f["code"] != "AG000" else None) for f in json.loads(result.stdout)]
    # cell 2 runs in Jupyter and keeps its own lines and columns; cell 4's second line is less indented than its
    # first, which IPython cannot run either
    assert found == [("AG001", 2, 3, 3), ("AG001", 3, 2, 1), ("AG000", 4, 2, None)], result.stdout


def test_fix_in_an_indented_cell_keeps_its_indentation(tmp_path):
    path = write_notebook(tmp_path, indented_notebook())
    result = run("check", "nb.ipynb", "--select", "AG001", "--fix", "--unsafe-fixes", "--no-cache", cwd=tmp_path)
    assert "Fixed 2 problems." in result.stdout, result.stdout
    fixed = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][1]["source"])
    assert fixed.startswith("  # the weights\n  w = torch.ones(3, requires_grad=True)\n  with torch.no_grad():"), fixed
    compile("if True:\n" + fixed, "cell", "exec")


@pytest.mark.parametrize("cell, masked", [
    ("pip install torch torchvision\nimport torch", {0}),          # automagic: IPython runs %pip
    ("cd data\nrun prepare.py --fast", {0, 1}),
    ("time = 5\nls = [1,\n  2]\ncd = time", set()),                 # Python that uses the names
    ("if not ok:\n    pip install -q timm", {1}),
])
def test_automagic_lines_are_masked(cell, masked):
    lines, found = mask_cell(cell)
    assert set(found) == masked
    ast.parse("\n".join(lines))


def test_doctest_prompts_are_read_as_ipython_reads_them(tmp_path):
    nb = notebook(code([">>> import torch\n", ">>> w = torch.ones(2, requires_grad=True)\n", ">>> for _ in range(2):\n",
                        "...     w += 1\n"]))
    write_notebook(tmp_path, nb)
    result = run("check", "nb.ipynb", "--no-cache", "--format", "json", cwd=tmp_path)
    found = [(f["code"], f["cell"], f["cell_line"], f["column"]) for f in json.loads(result.stdout)]
    assert found == [("AG001", 1, 4, 9)], result.stdout
