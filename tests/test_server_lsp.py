"""End to end: the server as a subprocess, driven with the capabilities of VS Code, Neovim and Emacs."""
from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from server_support import AG001_TEXT, AG004_TEXT, CLIENTS, SERVER, WAIT, Editor, codes, edits_by_uri, apply_text_edits


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(lsp_client: LanguageClient, request):
    lsp_client.client_name = request.param
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)


@pytest.fixture
async def editor(client: LanguageClient, tmp_path):
    editor = Editor(client, client.client_name, tmp_path)
    await editor.start()
    return editor


def ag(diagnostics, code):
    return [d for d in diagnostics if d.code == code]


async def test_open_publishes_diagnostics(editor: Editor):
    uri = editor.open("leaf.py", AG001_TEXT)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    (diagnostic,) = ag(diagnostics, "AG001")
    assert diagnostic.source == "autograd-lsp"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range == types.Range(start=types.Position(2, 0), end=types.Position(2, 6))
    assert "in-place" in diagnostic.message
    publish = editor.capabilities.text_document.publish_diagnostics
    if publish.code_description_support:
        assert diagnostic.code_description.href.endswith("#ag001")
    else:
        assert diagnostic.code_description is None
    if publish.related_information:
        (related,) = diagnostic.related_information
        assert related.location.uri == uri and related.location.range.start.line == 1
    else:
        assert diagnostic.related_information is None
    if publish.data_support:
        assert diagnostic.data["key"][0] == "AG001"


async def test_quick_fix_clears_the_diagnostic(editor: Editor):
    uri = editor.open("leaf.py", AG001_TEXT)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    actions = await editor.actions(uri, 2, diagnostics=ag(diagnostics, "AG001"))
    titles = [a.title for a in actions]
    assert any("no_grad" in title for title in titles), titles
    fix = await editor.resolve(next(a for a in actions if "no_grad" in a.title))
    assert fix.kind == types.CodeActionKind.QuickFix
    editor.apply(fix.edit)
    assert "with torch.no_grad():\n    a += 2" in editor.texts[uri]
    await editor.diagnostics(uri, lambda ds: not ag(ds, "AG001"))


async def test_ignore_action_adds_noqa(editor: Editor):
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    actions = await editor.actions(uri, 2)
    ignore = await editor.resolve(next(a for a in actions if a.title == "Ignore AG001 on this line"))
    editor.apply(ignore.edit)
    assert editor.texts[uri].split("\n")[2] == "a += 2  # noqa: AG001"
    await editor.diagnostics(uri, lambda ds: not ag(ds, "AG001"))


async def test_safe_fix_is_preferred_and_fix_all(editor: Editor):
    uri = editor.open("ints.py", AG004_TEXT)
    await editor.diagnostics(uri, lambda ds: len(ag(ds, "AG004")) == 2)
    actions = await editor.actions(uri, 1)
    add_dtype = next(a for a in actions if "dtype" in a.title)
    assert add_dtype.is_preferred is True
    fix_all = await editor.actions(uri, 0, only=[types.CodeActionKind.SourceFixAll])
    assert [a.kind for a in fix_all] == ["source.fixAll.autograd-lsp"]
    editor.apply((await editor.resolve(fix_all[0])).edit)
    assert editor.texts[uri].count("dtype=torch.float32") == 2
    await editor.diagnostics(uri, lambda ds: not ag(ds, "AG004"))


async def test_fix_all_command_uses_apply_edit(editor: Editor):
    uri = editor.open("ints.py", AG004_TEXT)
    await editor.diagnostics(uri, lambda ds: len(ag(ds, "AG004")) == 2)
    result = await editor.command("autograd-lsp.fixAll", uri)
    assert result["applied"] is True and result["fixes"] == 2
    assert editor.texts[uri].count("dtype=torch.float32") == 2
    await editor.diagnostics(uri, lambda ds: not ag(ds, "AG004"))


async def test_unsafe_fixes_are_not_applied_in_bulk(editor: Editor):
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    assert await editor.actions(uri, 0, only=[types.CodeActionKind.SourceFixAll]) == []
    assert (await editor.command("autograd-lsp.fixAll", uri))["fixes"] == 0


async def test_hover_shows_rule_doc_and_provenance(editor: Editor):
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    over_finding = await editor.hover(uri, 2, 3)
    assert "AG001" in over_finding.contents.value and "What it does" in over_finding.contents.value
    over_name = await editor.hover(uri, 1, 0)
    assert "leaf · requires grad · float" in over_name.contents.value
    assert await editor.hover(uri, 0, 0) is None  # `import` keyword: nothing to say


async def test_hover_names_what_a_leaf_is_composed_into(editor: Editor):
    text = ("import torch\n"
            "a = torch.tensor(1.0, requires_grad=True)\n"
            "b = torch.tensor(2.0, requires_grad=True)\n"
            "w = torch.stack((a, b))\n")
    uri = editor.open("compose.py", text)
    await editor.diagnostics(uri)
    hover = await editor.hover(uri, 1, 0)
    assert "composed into `w` at line 4" in hover.contents.value
    hover_w = await editor.hover(uri, 3, 0)
    assert "composed from `a`, `b`" in hover_w.contents.value


async def test_show_rule_doc_command(editor: Editor):
    doc = await editor.command("autograd-lsp.showRuleDoc", "AG002")
    assert doc.startswith("# AG002 stale-composed-weight") and "Runtime signature" in doc


async def test_syntax_error_keeps_last_good_findings(editor: Editor):
    text = AG001_TEXT + "\n\ndef f():\n    return 1\n"
    uri = editor.open("typing.py", text)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    # the user starts typing a call at the end of the file: it does not parse for a while
    editor.edit(uri, len(text), len(text), "print(a")
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG000"))
    assert ag(diagnostics, "AG001"), "the finding above the edit must stay while the file does not parse"
    # an edit above the finding shifts it; it stays, on its new line
    editor.edit(uri, 0, 0, "# comment\n")
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG000") and ag(ds, "AG001") and ag(ds, "AG001")[0].range.start.line == 3)
    editor.edit(uri, len(editor.texts[uri]), len(editor.texts[uri]), ")\n")
    diagnostics = await editor.diagnostics(uri, lambda ds: not ag(ds, "AG000"))
    assert ag(diagnostics, "AG001")[0].range.start.line == 3


async def test_syntax_error_on_the_finding_line_drops_it(editor: Editor):
    uri = editor.open("typing.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    text = editor.texts[uri]
    at = text.index("a += 2")
    editor.edit(uri, at, at + len("a += 2"), "a += (")
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG000"))
    assert not ag(diagnostics, "AG001")


async def test_many_quick_edits_end_on_the_newest_text(editor: Editor):
    uri = editor.open("burst.py", "import torch\n")
    await editor.diagnostics(uri)
    line = "a = torch.ones(2, 2, requires_grad=True)\na += 2\n"
    for char in line:
        editor.edit(uri, len(editor.texts[uri]), len(editor.texts[uri]), char)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    assert ag(diagnostics, "AG001")[0].range.start.line == 2
    info = await editor.command("autograd-lsp.serverInfo")
    assert len(info["timings"]["check_ms"]) < len(line), "queued versions must be coalesced"


async def test_close_clears_pushed_diagnostics(editor: Editor):
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    editor.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    if not editor.pull:
        await editor.diagnostics(uri, lambda ds: ds == [])


async def test_non_ascii_positions_follow_the_negotiated_encoding(editor: Editor):
    text = "import torch\nα = torch.ones(2, requires_grad=True)\nprint('😀'); α += 2\n"
    uri = editor.open("unicode.py", text)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    (diagnostic,) = ag(diagnostics, "AG001")
    line = text.split("\n")[2]
    start = line.index("α +=")
    expected = {"utf-8": len(line[:start].encode()), "utf-16": len(line[:start].encode("utf-16-le")) // 2, "utf-32": start}[editor.encoding]
    assert diagnostic.range.start.character == expected
    actions = await editor.actions(uri, 2)
    fix = await editor.resolve(next(a for a in actions if a.title.startswith("Rewrite out of place")))
    editor.apply(fix.edit)
    assert "α = α + 2" in editor.texts[uri]


async def test_hover_rebuilds_a_model_dropped_to_save_memory(editor: Editor):
    from autograd_lsp.server.retention import KEEP_MODELS

    first = editor.open("compose.py", "import torch\na = torch.tensor(1.0, requires_grad=True)\nw = torch.stack((a, a))\n")
    await editor.diagnostics(first)
    for index in range(KEEP_MODELS):
        uri = editor.open(f"other{index}.py", AG001_TEXT)
        await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    info = await editor.command("autograd-lsp.serverInfo")
    assert len(info["units_with_model"]) == KEEP_MODELS and first not in info["units_with_model"]
    hover = await editor.hover(first, 1, 0)  # its model was dropped: rebuilt from the same text
    assert "leaf · requires grad" in hover.contents.value and "composed into `w` at line 3" in hover.contents.value
    info = await editor.command("autograd-lsp.serverInfo")
    assert info["units_with_model"][-1] == first and len(info["units_with_model"]) == KEEP_MODELS
