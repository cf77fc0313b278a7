"""The server as a subprocess over LSP: after each of many seeded one-keystroke edits (incremental sync), the
diagnostics it shows are those of a fresh full check of the same text (the server parses edits incrementally
and reuses its walk when an edit changed no node; see tests/test_incremental.py for the analysis level)."""
from __future__ import annotations

import ast
import asyncio
import random
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from autograd_lsp.checker import check_source
from autograd_lsp.source import Source

from server_support import SERVER, WAIT, Editor

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ["ag015_loss_accumulation_keeps_graph.py", "ag008_data_attribute.py", "ag012_uninitialized_tensor.py"]


@pytest_lsp.fixture(config=SERVER, params=["visual-studio-code", "neovim"])  # pulled and pushed diagnostics
async def client(lsp_client: LanguageClient, request):
    lsp_client.client_name = request.param
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)


@pytest.fixture
async def editor(client: LanguageClient, tmp_path):
    editor = Editor(client, client.client_name, tmp_path)
    await editor.start()
    return editor


def _expected(text: str, path: Path) -> list:
    """(code, range, message) of a full check of `text`, as LSP positions (the texts are ASCII: units = chars)."""
    findings = check_source(Source(text, str(path))).findings
    return sorted((f.code, (f.span.line - 1, f.span.col, f.span.end_line - 1, f.span.end_col), f.message) for f in findings)


def _shown(diagnostics) -> list:
    return sorted((d.code, (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character),
                   d.message.split(" — ")[0]) for d in diagnostics)


def _keystroke(text: str, rng: random.Random) -> tuple[int, int, str]:
    """(start, end, new text) of one edit that keeps the text parsing: a trailing space or comment, `# noqa`,
    a character typed into a name, a digit changed, a new line."""
    lines = text.split("\n")
    while True:
        index = rng.randrange(len(lines))
        line = lines[index]
        offset = sum(len(item) + 1 for item in lines[:index])
        kind = rng.random()
        if kind < 0.3:
            edit = (offset + len(line), offset + len(line), rng.choice([" ", "  # c", "x"]))
        elif kind < 0.4:
            edit = (offset + len(line), offset + len(line), "  # noqa")
        elif kind < 0.7:
            spots = [k + 1 for k, c in enumerate(line) if c.isalnum() or c == "_"]
            if not spots:
                continue
            at = offset + rng.choice(spots)
            edit = (at, at, rng.choice("z_1"))
        elif kind < 0.85:
            spots = [k for k, c in enumerate(line) if c.isdigit()]
            if not spots:
                continue
            at = offset + rng.choice(spots)
            edit = (at, at + 1, rng.choice("0123456789"))
        else:
            edit = (offset + len(line), offset + len(line), "\n")
        new = text[:edit[0]] + edit[2] + text[edit[1]:]
        try:
            ast.parse(new)
        except (SyntaxError, ValueError):
            continue
        return edit


@pytest.mark.parametrize("sample", SAMPLES)
async def test_diagnostics_after_each_edit_are_those_of_a_full_check(editor: Editor, sample: str):
    rng = random.Random(sample)
    text = (ROOT / "samples" / sample).read_text("utf-8")
    uri = editor.open(sample, text)
    path = editor.root / sample
    expected = _expected(text, path)
    assert expected, "a sample with findings"
    await editor.diagnostics(uri, lambda ds: _shown(ds) == expected)
    changed = 0
    for _ in range(25):
        start, end, new_text = _keystroke(editor.texts[uri], rng)
        editor.edit(uri, start, end, new_text)
        wanted = _expected(editor.texts[uri], path)
        changed += wanted != expected
        expected = wanted
        await editor.diagnostics(uri, lambda ds: _shown(ds) == wanted)
    assert changed, "some edit changed the findings (else nothing incremental was tested)"


def _code_keystroke(text: str, rng: random.Random) -> tuple[int, int, str] | None:
    """(start, end, new text) of one edit of code inside a function body that keeps the text parsing (a digit,
    a character appended to a name read, a character typed into a string, a returned value changed): the edits
    the server answers by walking the edited function again (analysis/rewalk.py)."""
    from test_incremental import _code_edit

    lines = text.split("\n")
    edited = _code_edit(lines, rng)
    if edited is None:
        return None
    index = next(k for k, (a, b) in enumerate(zip(lines, edited)) if a != b)
    old, new = lines[index], edited[index]
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    offset = sum(len(line) + 1 for line in lines[:index])
    return offset + prefix, offset + len(old) - suffix, new[prefix:len(new) - suffix]


def _code_texts() -> dict:
    """Modules with functions: real trainers (pinned wheels, tests/test_incremental.py) and a helper whose edit
    changes what its caller reads."""
    from test_incremental import _HELPER, _real_modules

    texts = {path.name: path.read_text("utf-8") for path in _real_modules()}
    texts["helper.py"] = _HELPER
    return texts


@pytest.mark.parametrize("name", ["dpo_trainer.py", "net.py", "helper.py"])
async def test_diagnostics_after_code_edits_are_those_of_a_full_check(editor: Editor, name: str):
    rng = random.Random("code " + name)
    text = _code_texts()[name]
    uri = editor.open(name, text)
    path = editor.root / name
    expected = _expected(text, path)
    await editor.diagnostics(uri, lambda ds: _shown(ds) == expected)
    edits = 0
    for _ in range(30):
        edit = _code_keystroke(editor.texts[uri], rng)
        if edit is None:
            continue
        editor.edit(uri, *edit)
        edits += 1
        wanted = _expected(editor.texts[uri], path)
        await editor.diagnostics(uri, lambda ds: _shown(ds) == wanted)
    assert edits >= 15, edits
