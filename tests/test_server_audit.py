"""The audit command over real LSP (pytest-lsp, the server as a subprocess): only on request, with progress, its
findings as diagnostics with the source "autograd-lsp (run)" until the text changes, and no torch in the server."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from server_support import SERVER, WAIT, Editor, harness_children

AUDIT_WAIT = 120  # the run imports torch in a child process: seconds, more on a loaded machine
TINY_PROBES = Path(__file__).parent / "audit_core" / "tiny_probes.py"
RUN = "autograd-lsp (run)"
SCRIPT = """import torch
w = torch.randn(3, requires_grad=True)
double = eval("lambda t: t * 2")
for step in range(100):
    try:
        double(w).backward()
    except RuntimeError:
        pass
rows = open("data/train.csv").read()
"""


@pytest_lsp.fixture(config=SERVER, params=["visual-studio-code", "neovim"])
async def client(lsp_client: LanguageClient, request):
    lsp_client.client_name = request.param
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)


@pytest.fixture
def editor(client: LanguageClient, tmp_path) -> Editor:
    return Editor(client, client.client_name, tmp_path)


def run_diagnostics(diagnostics):
    return sorted((d.code, d.range.start.line) for d in diagnostics if d.source == RUN)


async def test_audit_shows_run_diagnostics_until_the_text_changes(editor: Editor):
    await editor.start()
    uri = editor.open("train.py", SCRIPT)
    await editor.diagnostics(uri)
    editor.save(uri)  # neither open nor save runs anything
    await asyncio.sleep(1)
    assert not run_diagnostics(await editor.diagnostics(uri))
    result = await asyncio.wait_for(editor.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="autograd-lsp.audit", arguments=[uri, {"steps": 2, "probes": str(TINY_PROBES)}])), AUDIT_WAIT)
    assert result["status"] == "done" and result["stopped"]["reason"] == "data", result
    diagnostics = await editor.diagnostics(uri, lambda ds: run_diagnostics(ds))
    assert run_diagnostics(diagnostics) == [("AG005", 5), ("audit-stopped", 8)]
    nonscalar = next(d for d in diagnostics if d.source == RUN and d.code == "AG005")
    assert "runtime-only: observed at run time" in nonscalar.message
    stopped = next(d for d in diagnostics if d.source == RUN and d.code == "audit-stopped")
    assert "missing data file" in stopped.message and stopped.severity == types.DiagnosticSeverity.Information
    assert any("observed at run time" in m.message for m in editor.client.messages)
    if editor.capabilities.window and editor.capabilities.window.work_done_progress:
        assert ["begin", "end"] in [[r.kind for r in reports] for reports in editor.client.progress_reports.values()]
    assert (await editor.command("autograd-lsp.serverInfo"))["torch_imported"] is False
    editor.edit(uri, 0, 0, "# edited\n")  # a different program: the run's diagnostics go
    await editor.diagnostics(uri, lambda ds: not run_diagnostics(ds))


async def test_audit_refused_when_running_code_is_disabled(editor: Editor):
    await editor.start({"confirm": {"enabled": False}})
    uri = editor.open("train.py", SCRIPT)
    await editor.diagnostics(uri)
    assert await editor.command("autograd-lsp.audit", uri, {}) == {"status": "disabled"}
    unknown = await editor.command("autograd-lsp.audit")
    assert unknown["status"] == "error"


async def test_audit_can_be_cancelled(editor: Editor):
    await editor.start()
    if not (editor.capabilities.window and editor.capabilities.window.work_done_progress):
        return  # this client shows no progress, so it cannot cancel one (the other client of this module does)
    uri = editor.open("slow.py", "import time\ntime.sleep(60)\n")
    await editor.diagnostics(uri)
    running = asyncio.ensure_future(editor.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="autograd-lsp.audit", arguments=[uri, {}])))
    deadline = asyncio.get_running_loop().time() + WAIT
    while not any(r and r[0].kind == "begin" for r in editor.client.progress_reports.values()):
        assert asyncio.get_running_loop().time() < deadline, "no progress began"
        await asyncio.sleep(0.02)
    pid = (await editor.command("autograd-lsp.serverInfo"))["pid"]
    while not harness_children(pid):  # the sandboxed run has started
        assert asyncio.get_running_loop().time() < deadline + AUDIT_WAIT, "the run never started"
        await asyncio.sleep(0.05)
    token = next(t for t, r in editor.client.progress_reports.items() if r and r[0].kind == "begin" and len(r) == 1)
    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    assert await asyncio.wait_for(running, WAIT) == {"status": "cancelled"}
    deadline = asyncio.get_running_loop().time() + WAIT
    while harness_children(pid):
        assert asyncio.get_running_loop().time() < deadline, "the sandboxed run was not stopped"
        await asyncio.sleep(0.05)



async def test_audit_of_a_notebook_puts_the_run_diagnostics_on_its_cells(editor: Editor, tmp_path):
    import copy
    import json

    capabilities = copy.deepcopy(pytest_lsp.client_capabilities(editor.name))
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(dynamic_registration=False))
    await editor.start(capabilities=capabilities)
    texts = ["import torch\nw = torch.randn(3, requires_grad=True)\n",
             "double = eval('lambda t: t * 2')\ntry:\n    double(w).backward()\nexcept RuntimeError:\n    pass\n",
             "rows = open('data/train.csv').read()\n"]
    path = tmp_path / "train.ipynb"  # on disk, as a saved notebook is; the audit runs the editor's cells
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    cell_uris = [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(texts))]
    documents = [types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text) for uri, text in zip(cell_uris, texts)]
    editor.client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=path.as_uri(), notebook_type="jupyter-notebook", version=1,
                                                 cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=uri) for uri in cell_uris]),
        cell_text_documents=documents))
    await editor.diagnostics(cell_uris[1])
    result = await asyncio.wait_for(editor.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="autograd-lsp.audit", arguments=[path.as_uri(), {"probes": str(TINY_PROBES)}])), AUDIT_WAIT)
    assert result["status"] == "done", result
    assert run_diagnostics(await editor.diagnostics(cell_uris[1], lambda ds: run_diagnostics(ds))) == [("AG005", 2)]
    assert run_diagnostics(await editor.diagnostics(cell_uris[2], lambda ds: run_diagnostics(ds))) == [("audit-stopped", 0)]
