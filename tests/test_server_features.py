"""End to end, per client: settings, pyproject.toml, notebooks, pull and workspace diagnostics, big files,
runtime confirmation, and the promise that the server never imports torch."""
from __future__ import annotations

import asyncio
import copy
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from server_support import AG001_TEXT, AG004_TEXT, CLIENTS, SERVER, WAIT, Editor, apply_text_edits, edits_by_uri, harness_children, position_of

REPO = Path(__file__).resolve().parents[1]
CONFIRM_WAIT = 90  # a confirmation starts a Python that imports torch: seconds, more on a loaded machine


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(lsp_client: LanguageClient, request):
    lsp_client.client_name = request.param
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)


@pytest.fixture
def editor(client: LanguageClient, tmp_path) -> Editor:
    return Editor(client, client.client_name, tmp_path)


def ag(diagnostics, code):
    return [d for d in diagnostics if d.code == code]


async def wait_until(predicate, timeout=WAIT, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


# -- settings ------------------------------------------------------------------------------------------
async def test_initialization_options_select_and_severity(editor: Editor):
    await editor.start({"autogradLsp": {"severity": {"AG001": "warning"}, "ignore": ["AG004"]}})
    uri = editor.open("mix.py", AG001_TEXT + AG004_TEXT)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    assert ag(diagnostics, "AG001")[0].severity == types.DiagnosticSeverity.Warning
    assert not ag(diagnostics, "AG004")


async def test_did_change_configuration_republishes(editor: Editor):
    await editor.start()
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"autogradLsp": {"ignore": ["AG001"]}}))
    await editor.diagnostics(uri, lambda ds: not ag(ds, "AG001"))
    # the pull style: a notification without settings, the server asks workspace/configuration
    editor.client.set_configuration({"select": ["ALL"], "severity": {"AG001": "info"}}, section="autogradLsp")
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    if editor.capabilities.workspace and editor.capabilities.workspace.configuration:
        diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
        assert ag(diagnostics, "AG001")[0].severity == types.DiagnosticSeverity.Information


async def test_invalid_settings_warn_and_fall_back(editor: Editor):
    await editor.start({"select": ["AG999"], "confirm": {"timeout": "soon"}, "colour": "blue"})
    await wait_until(lambda: any(m.type == types.MessageType.Warning for m in editor.client.messages), what="a warning")
    warning = next(m.message for m in editor.client.messages if m.type == types.MessageType.Warning)
    assert "AG999" in warning and "confirm.timeout" in warning and "colour" in warning
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))  # defaults: every rule
    info = await editor.command("autograd-lsp.serverInfo")
    assert info["options"]["confirm_timeout"] == 30.0


async def test_pyproject_settings_and_watched_file_reload(editor: Editor, tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.autograd-lsp]\nignore = ["AG001"]\n', encoding="utf-8")
    await editor.start()
    uri = editor.open("leaf.py", AG001_TEXT + AG004_TEXT)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG004"))
    assert not ag(diagnostics, "AG001")
    pyproject.write_text('[tool.autograd-lsp]\nignore = ["AG004"]\n', encoding="utf-8")
    editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]))
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001") and not ag(ds, "AG004"))
    pyproject.write_text('[tool.autograd-lsp]\nselect = ["AG9"]\n', encoding="utf-8")
    editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]))
    await wait_until(lambda: any("pyproject" in m.message for m in editor.client.messages), what="a pyproject warning")
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001") and ag(ds, "AG004"))  # broken config: defaults


async def test_misspelt_pyproject_table_is_shown(editor: Editor, tmp_path):
    """`[tool.autograd_lsp]` is not read: the server says so (once) rather than silently using the defaults."""
    (tmp_path / "pyproject.toml").write_text('[tool.autograd_lsp]\nignore = ["AG001"]\n', encoding="utf-8")
    await editor.start()
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))  # the misspelt table's ignore is not applied
    await wait_until(lambda: any("[tool.autograd_lsp] is not read" in m.message for m in editor.client.messages),
                     what="the misspelt-table warning")
    shown = [m for m in editor.client.messages if "[tool.autograd_lsp]" in m.message]
    assert shown[0].type == types.MessageType.Warning and "[tool.autograd-lsp]" in shown[0].message
    other = editor.open("other.py", AG001_TEXT)
    await editor.diagnostics(other, lambda ds: ag(ds, "AG001"))
    assert len([m for m in editor.client.messages if "[tool.autograd_lsp]" in m.message]) == 1  # cached: not repeated


# -- notebooks -----------------------------------------------------------------------------------------
NOTEBOOK_CELLS = [
    "import torch\nimport torch.nn.functional as F\n",
    "a = torch.tensor(1.0, requires_grad=True)\nb = torch.tensor(-1.2, requires_grad=True)\nw = torch.stack((a, torch.zeros_like(a), b)).reshape(1, 1, 1, 3)\n",
    "optimizer = torch.optim.Adam([a, b], lr=0.01)\n",
    "inputs = torch.randn(1, 1, 5, 5)\n",
    "for step in range(3):\n    optimizer.zero_grad()\n    out = torch.sum(F.conv2d(inputs, w) ** 2)\n    out.backward()\n    optimizer.step()\n",
]


def with_notebooks(name: str) -> types.ClientCapabilities:
    capabilities = copy.deepcopy(pytest_lsp.client_capabilities(name))
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(dynamic_registration=False))
    return capabilities


async def test_notebook_cells_are_one_program(editor: Editor, tmp_path):
    await editor.start(capabilities=with_notebooks(editor.name))
    assert editor.server_capabilities.notebook_document_sync is not None
    notebook_uri = (tmp_path / "train.ipynb").as_uri()
    cell_uris = [f"vscode-notebook-cell:{tmp_path / 'train.ipynb'}#cell{i}" for i in range(len(NOTEBOOK_CELLS) + 1)]
    cells = [types.NotebookCell(kind=types.NotebookCellKind.Code, document=cell_uris[i]) for i in range(len(NOTEBOOK_CELLS))]
    cells.insert(3, types.NotebookCell(kind=types.NotebookCellKind.Markup, document=cell_uris[-1]))
    documents = [types.TextDocumentItem(uri=cell_uris[i], language_id="python", version=1, text=text) for i, text in enumerate(NOTEBOOK_CELLS)]
    documents.insert(3, types.TextDocumentItem(uri=cell_uris[-1], language_id="markdown", version=1, text="# Training\n"))
    for document in documents:
        editor.texts[document.uri], editor.versions[document.uri] = document.text, 1
    editor.client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=notebook_uri, notebook_type="jupyter-notebook", version=1, cells=cells),
        cell_text_documents=documents))
    loop_cell = cell_uris[4]
    diagnostics = await editor.diagnostics(loop_cell, lambda ds: ag(ds, "AG002"))
    (stale,) = ag(diagnostics, "AG002")
    assert stale.range.start.line == 2  # `w` in `F.conv2d(inputs, w)`, third line of the loop cell
    if stale.related_information:
        assert any(r.location.uri == cell_uris[1] and r.location.range.start.line == 2 for r in stale.related_information)
    # the composition, in its own cell, is reported too (the statement to move), pointing back at the stale use
    (composed,) = ag(await editor.diagnostics(cell_uris[1], lambda ds: ag(ds, "AG002")), "AG002")
    assert composed.range.start.line == 2 and "composed from trainable" in composed.message
    if composed.related_information:
        assert any(r.location.uri == loop_cell and r.location.range.start.line == 2 for r in composed.related_information)
    # the quick fix edits the loop cell; applying it through a notebook change clears the finding
    actions = await editor.actions(loop_cell, 2)
    fix = await editor.resolve(next(a for a in actions if a.title.startswith("Recompute `w`")))
    changed = edits_by_uri(fix.edit)
    assert set(changed) <= {loop_cell, cell_uris[1]}
    text_changes = []
    for uri, edits in changed.items():
        old = editor.texts[uri]
        new = apply_text_edits(old, edits, editor.encoding)
        editor.texts[uri] = new
        editor.versions[uri] += 1
        end = position_of(old, len(old), editor.encoding)
        text_changes.append(types.NotebookDocumentCellContentChanges(
            document=types.VersionedTextDocumentIdentifier(uri=uri, version=editor.versions[uri]),
            changes=[types.TextDocumentContentChangePartial(range=types.Range(start=types.Position(0, 0), end=end), text=new)]))
    editor.client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=notebook_uri, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=text_changes))))
    await editor.diagnostics(loop_cell, lambda ds: not ag(ds, "AG002"))
    await editor.diagnostics(cell_uris[1], lambda ds: not ag(ds, "AG002"))
    hover = await editor.hover(cell_uris[1], 0, 0)
    assert "leaf · requires grad" in hover.contents.value


# -- pull and workspace diagnostics --------------------------------------------------------------------
def with_pull(name: str) -> types.ClientCapabilities:
    capabilities = copy.deepcopy(pytest_lsp.client_capabilities(name))
    capabilities.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=False)
    capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return capabilities


async def test_pull_diagnostics_replace_pushes(editor: Editor):
    await editor.start(capabilities=with_pull(editor.name))
    assert editor.pull
    uri = editor.open("leaf.py", AG001_TEXT)
    report = await asyncio.wait_for(editor.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri))), WAIT)
    assert [d.code for d in report.items] == ["AG001"]
    again = await asyncio.wait_for(editor.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=report.result_id)), WAIT)
    assert again.kind == "unchanged"
    editor.edit(uri, len(editor.texts[uri]), len(editor.texts[uri]), "b = 1\n")
    changed = await asyncio.wait_for(editor.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=report.result_id)), WAIT)
    assert changed.kind == "full" and [d.code for d in changed.items] == ["AG001"]
    assert uri not in editor.client.diagnostics, "a pull client must not also receive pushes"
    refreshes = editor.client.diagnostic_refresh_count
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"autogradLsp": {"ignore": ["AG001"]}}))
    await wait_until(lambda: editor.client.diagnostic_refresh_count > refreshes, what="workspace/diagnostic/refresh")
    await editor.diagnostics(uri, lambda ds: ds == [])


async def test_workspace_diagnostics_are_opt_in(editor: Editor, tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "leaf.py").write_text(AG001_TEXT, encoding="utf-8")
    (tmp_path / "clean.py").write_text("x = 1\n", encoding="utf-8")
    await editor.start({"workspaceDiagnostics": True}, capabilities=with_pull(editor.name))
    assert editor.server_capabilities.diagnostic_provider.workspace_diagnostics
    report = await asyncio.wait_for(editor.client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[])), WAIT)
    by_uri = {item.uri: item for item in report.items}
    leaf = (tmp_path / "pkg" / "leaf.py").as_uri()
    assert [d.code for d in by_uri[leaf].items] == ["AG001"]
    assert list(by_uri[(tmp_path / "clean.py").as_uri()].items) == []
    if editor.capabilities.window and editor.capabilities.window.work_done_progress:
        assert any(reports and reports[-1].kind == "end" for reports in editor.client.progress_reports.values())
    # nothing changed: the repeat request is held until something does
    previous = [types.PreviousResultId(uri=item.uri, value=item.result_id) for item in report.items]
    pending = asyncio.ensure_future(editor.client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=previous)))
    await asyncio.sleep(0.5)
    assert not pending.done()
    time.sleep(0.01)
    (tmp_path / "clean.py").write_text("import torch\nb = torch.zeros(2, requires_grad=True)\nb.add_(1)\n", encoding="utf-8")
    editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(tmp_path / "clean.py").as_uri(), type=types.FileChangeType.Changed)]))
    second = await asyncio.wait_for(pending, WAIT)
    by_uri = {item.uri: item for item in second.items}
    assert by_uri[leaf].kind == "unchanged"
    assert [d.code for d in by_uri[(tmp_path / "clean.py").as_uri()].items] == ["AG001"]


async def test_workspace_diagnostics_off_by_default(editor: Editor):
    await editor.start(capabilities=with_pull(editor.name))
    assert not editor.server_capabilities.diagnostic_provider.workspace_diagnostics


# -- scale and robustness ------------------------------------------------------------------------------
def big_file(lines: int = 5000) -> str:
    block = [
        "def step_{i}(model, batch, optimizer):",
        "    inputs, targets = batch",
        "    optimizer.zero_grad()",
        "    outputs = model(inputs)",
        "    loss = torch.nn.functional.mse_loss(outputs, targets)",
        "    loss.backward()",
        "    optimizer.step()",
        "    scale_{i} = torch.ones(3, requires_grad=True)",
        "    with torch.no_grad():",
        "        scale_{i}.mul_(0.5)",
        "    return loss.item() * {i}",
        "",
        "",
    ]
    out = ["import torch", "", ""]
    i = 0
    while len(out) < lines - 4:
        out.extend(line.format(i=i) for line in block)
        i += 1
    out.extend(["a = torch.ones(2, 2, requires_grad=True)", "a += 2", ""])
    return "\n".join(out)


async def test_five_thousand_line_file(editor: Editor):
    await editor.start()
    text = big_file()
    assert text.count("\n") >= 4999
    started = time.perf_counter()
    uri = editor.open("big.py", text)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    open_s = time.perf_counter() - started
    last = text.count("\n") - 1
    assert ag(diagnostics, "AG001")[0].range.start.line == last
    started = time.perf_counter()
    at = text.index("a += 2")
    editor.edit(uri, at, at + len("a += 2"), "a = a + 2")
    await editor.diagnostics(uri, lambda ds: not ag(ds, "AG001"))
    edit_s = time.perf_counter() - started
    info = await editor.command("autograd-lsp.serverInfo")
    print(f"\n{editor.name}: 5,000 lines: open→diagnostics {open_s * 1000:.0f} ms, edit→diagnostics {edit_s * 1000:.0f} ms, "
          f"checks {info['timings']['check_ms']} ms")
    assert open_s < WAIT and edit_s < WAIT


async def test_hostile_input_never_kills_the_server(editor: Editor):
    await editor.start()
    deep_parens = "x = " + "(" * 1000 + "1" + ")" * 1000 + "\n"
    deep_blocks = "".join("    " * i + f"if x{i}:\n" for i in range(150)) + "    " * 150 + "pass\n"
    long_line = "y = [" + ", ".join(["1.0"] * 20000) + "]\n"
    nul = "x = 1\x00\n"
    uris = [editor.open(f"hostile{i}.py", text) for i, text in enumerate([deep_parens, deep_blocks, long_line, nul])]
    for uri in uris:
        await editor.diagnostics(uri)
    huge = editor.open("huge.py", "x = 1  # " + "#" * 100 + "\n" * 1 + ("y = 2\n" * 1_800_000), write=False)
    (too_large,) = await editor.diagnostics(huge, lambda ds: len(ds) == 1)
    assert "not analysed" in too_large.message and too_large.severity == types.DiagnosticSeverity.Information
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    assert (await editor.command("autograd-lsp.serverInfo"))["version"]


# -- torch stays out -----------------------------------------------------------------------------------
def _maps_mention_torch(pid: int) -> list[str]:
    found = []
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            pids += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            pass
    for each in pids:
        try:
            maps = Path(f"/proc/{each}/maps").read_text()
        except OSError:
            continue
        found += [line for line in maps.splitlines() if "/torch/" in line]
    return found


async def test_server_never_imports_torch(editor: Editor, tmp_path):
    await editor.start()
    samples = sorted((REPO / "samples").glob("*.py"))
    assert samples
    uris = [editor.open(f"samples/{path.name}", path.read_text(encoding="utf-8")) for path in samples]
    for uri in uris:
        await editor.diagnostics(uri)
    # hover and code actions walk the same models
    await editor.hover(uris[0], 0, 0)
    await editor.actions(uris[0], 0)
    await asyncio.sleep(1.0)  # let background (jedi) passes run
    info = await editor.command("autograd-lsp.serverInfo")
    assert info["torch_imported"] is False
    assert _maps_mention_torch(info["pid"]) == []


# -- runtime confirmation ------------------------------------------------------------------------------
async def test_confirm_action_runs_on_cpu_and_updates_the_diagnostic(editor: Editor):
    await editor.start()
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    actions = await editor.actions(uri, 2)
    cpu = next(a for a in actions if a.title == "Confirm AG001 by running on CPU")
    assert any(a.title == "Confirm AG001 by running on CUDA" for a in actions)
    assert cpu.command.command == "autograd-lsp.confirm" and cpu.command.arguments == [uri, 2, "AG001", "cpu"]
    result = await asyncio.wait_for(editor.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=cpu.command.command, arguments=cpu.command.arguments)), CONFIRM_WAIT)
    assert result["status"] == "confirmed", result
    assert any("confirmed on cpu" in m.message for m in editor.client.messages)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG001") and "confirmed on cpu" in ag(ds, "AG001")[0].message)
    assert "RuntimeError" in ag(diagnostics, "AG001")[0].message
    if editor.capabilities.window and editor.capabilities.window.work_done_progress:
        kinds = [[r.kind for r in reports] for reports in editor.client.progress_reports.values()]
        assert ["begin", "end"] in kinds
    started = time.perf_counter()
    again = await editor.command("autograd-lsp.confirm", uri, 2, "AG001", "cpu")
    assert again["status"] == "confirmed" and time.perf_counter() - started < 2, "results are cached per content"
    # an edit makes it a different program: the note goes away
    editor.edit(uri, 0, 0, "# edited\n")
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001") and "confirmed" not in ag(ds, "AG001")[0].message)


async def test_confirm_refused_when_disabled(editor: Editor):
    await editor.start({"confirm": {"enabled": False}})
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    assert not [a for a in await editor.actions(uri, 2) if a.title.startswith("Confirm")]
    result = await editor.command("autograd-lsp.confirm", uri, 2, "AG001", "cpu")
    assert result == {"status": "disabled"}
    assert any("disabled" in m.message for m in editor.client.messages)


async def test_confirm_reports_errors_cleanly(editor: Editor, tmp_path):
    await editor.start({"python": str(tmp_path / "no-such-python")})
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    result = await asyncio.wait_for(editor.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="autograd-lsp.confirm", arguments=[uri, 2, "AG001", "cpu"])), CONFIRM_WAIT)
    assert result["status"] != "confirmed"
    assert any(m.type == types.MessageType.Warning for m in editor.client.messages)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    assert " — " not in ag(diagnostics, "AG001")[0].message  # no verdict: the diagnostic is left alone
    missing = await editor.command("autograd-lsp.confirm", uri, 0, "AG001", "cpu")
    assert missing["status"] == "error" and "no AG001 finding on line 1" in missing["message"]
    assert (await editor.command("autograd-lsp.serverInfo"))["torch_imported"] is False


async def test_confirm_can_be_cancelled(editor: Editor):
    await editor.start()
    if not (editor.capabilities.window and editor.capabilities.window.work_done_progress):
        pytest.skip("the client shows no progress, so it cannot cancel one")
    text = "import time\nimport torch\ntime.sleep(30)\na = torch.ones(2, 2, requires_grad=True)\na += 2\n"
    uri = editor.open("slow.py", text)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    running = asyncio.ensure_future(editor.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="autograd-lsp.confirm", arguments=[uri, 4, "AG001", "cpu"])))
    await wait_until(lambda: any(r and r[0].kind == "begin" for r in editor.client.progress_reports.values()), what="progress begin")
    token = next(t for t, r in editor.client.progress_reports.items() if r and r[0].kind == "begin" and len(r) == 1)
    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(running, WAIT)
    assert result == {"status": "cancelled"}
    pid = (await editor.command("autograd-lsp.serverInfo"))["pid"]
    await wait_until(lambda: not harness_children(pid), what="the sandboxed run to be stopped")



# -- cross-module names: jedi in the background, never on the publish path -----------------------------
HELPERS = """import torch


def concat(a, b):
    c = torch.stack((a, torch.zeros_like(a), b), -1)
    return torch.stack((c, c, c), 0).unsqueeze(0).unsqueeze(0)
"""

MAIN = """import torch
import torch.nn.functional as F
from helpers import concat

a = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(-1.2, requires_grad=True)
optimizer = torch.optim.Adam([a, b], lr=0.01)
w = concat(a, b)
inputs = torch.randn(1, 1, 5, 5)
for step in range(3):
    optimizer.zero_grad()
    out = torch.sum(F.conv2d(inputs, w, padding=1) ** 2)
    out.backward()
    optimizer.step()
"""


async def test_cross_module_findings_arrive_after_the_first_publish(editor: Editor, tmp_path):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "helpers.py").write_text(HELPERS, encoding="utf-8")
    await editor.start()
    uri = editor.open("main.py", MAIN)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG002"), timeout=WAIT)
    assert sorted(d.range.start.line for d in ag(diagnostics, "AG002")) == [7, 11]  # the composition and its use
    # later edits are answered from what the cross-module pass learned: the finding never flickers away
    editor.edit(uri, len(editor.texts[uri]), len(editor.texts[uri]), "print(step)\n")
    if not editor.pull:
        seen = []
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            seen.append(bool(ag(editor.client.diagnostics.get(uri, []), "AG002")))
            await asyncio.sleep(0.005)
        assert all(seen)
    else:
        await editor.diagnostics(uri, lambda ds: ag(ds, "AG002"))
    info = await editor.command("autograd-lsp.serverInfo")
    assert not info["torch_imported"]  # the helper is resolved from the import itself; jedi only for ambiguous ones
    assert _maps_mention_torch(info["pid"]) == []


async def test_saving_a_new_helper_module_rechecks_the_files_importing_it(editor: Editor, tmp_path):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    await editor.start()
    uri = editor.open("main.py", MAIN)  # helpers.py does not exist yet: nothing to resolve
    await editor.diagnostics(uri)
    await asyncio.sleep(0.5)  # its cross-module pass found nothing (and the file system said so)
    assert ag(await editor.diagnostics(uri), "AG002") == []
    helper = editor.open("helpers.py", HELPERS)
    editor.save(helper)
    diagnostics = await editor.diagnostics(uri, lambda ds: ag(ds, "AG002"), timeout=WAIT)
    assert sorted(d.range.start.line for d in ag(diagnostics, "AG002")) == [7, 11]  # the composition and its use


async def test_without_workspace_imports_jedi_is_never_loaded(editor: Editor):
    await editor.start()
    uri = editor.open("leaf.py", AG001_TEXT)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    await asyncio.sleep(0.3)
    assert (await editor.command("autograd-lsp.serverInfo"))["jedi_imported"] is False


async def test_cancel_request_stops_a_confirmation(editor: Editor):
    await editor.start()
    text = "import time\nimport torch\ntime.sleep(30)\na = torch.ones(2, 2, requires_grad=True)\na += 2\n"
    uri = editor.open("slow.py", text)
    await editor.diagnostics(uri, lambda ds: ag(ds, "AG001"))
    pid = (await editor.command("autograd-lsp.serverInfo"))["pid"]
    future = editor.client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(
        command="autograd-lsp.confirm", arguments=[uri, 4, "AG001", "cpu"]), msg_id="confirm-to-cancel")
    await wait_until(lambda: harness_children(pid), timeout=CONFIRM_WAIT, what="the sandboxed run to start")
    editor.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="confirm-to-cancel"))
    with pytest.raises(Exception, match="cancel"):
        await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    await wait_until(lambda: not harness_children(pid), what="the sandboxed run to be stopped")
    assert (await editor.command("autograd-lsp.serverInfo"))["version"]
