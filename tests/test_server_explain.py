"""The explain command and its code actions over real LSP (pytest-lsp runs the server as a subprocess): a real
torch run of seed 001's program, what a drawing client gets, and that explaining runs only on request, keeps the
server answering, and stops its child when cancelled."""
from __future__ import annotations

import asyncio
import copy
import shutil
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from server_support import SERVER, WAIT, Editor, harness_children

REPO = Path(__file__).resolve().parents[1]
SEED001 = REPO / "tests" / "explain_fixtures" / "seed001_three_weights.py"
RUN_WAIT = 180  # a run imports torch in a child: generous on a loaded machine
OPTIONS = {"autogradLsp": {"confirm": {"timeout": 150}}}
SLOW = "import time\nimport torch\ntime.sleep(60)\na = torch.ones(2, 2, requires_grad=True)\nb = (a * 2).sum()\nb.backward()\n"


@pytest_lsp.fixture(config=SERVER, params=["visual-studio-code", "neovim"])
async def client(lsp_client: LanguageClient, request):
    lsp_client.client_name = request.param
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)


@pytest.fixture
def editor(client: LanguageClient, tmp_path) -> Editor:
    return Editor(client, client.client_name, tmp_path)


def drawing(name: str, formats=("svg", "dot", "json")) -> types.ClientCapabilities:
    """The client's capabilities plus the experimental capability a client that draws the graph declares."""
    capabilities = copy.deepcopy(pytest_lsp.client_capabilities(name))
    capabilities.experimental = {"autogradLsp": {"explainFormats": list(formats)}}
    return capabilities


async def wait_until(predicate, timeout=WAIT, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")



async def execute(editor: Editor, command: types.Command):
    return await asyncio.wait_for(editor.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command.command, arguments=command.arguments)), RUN_WAIT)


async def test_explain_action_on_seed001_names_the_culprit(editor: Editor, tmp_path):
    await editor.start(OPTIONS, capabilities=drawing(editor.name))
    shutil.copy(SEED001, tmp_path / SEED001.name)
    uri = editor.open(SEED001.name, SEED001.read_text(encoding="utf-8"))
    await editor.diagnostics(uri, lambda ds: any(d.code == "AG003" for d in ds))
    # line 39 `loss1.backward(retain_graph=True)`: its AG003 finding offers Explain beside Confirm
    actions = await editor.actions(uri, 38)
    titles = [a.title for a in actions]
    explain = next(a for a in actions if a.title.startswith("Explain autograd graph here"))
    assert any(t.startswith("Confirm AG003") for t in titles), titles
    assert explain.command.command == "autograd-lsp.explain" and explain.command.arguments == [uri, 38, "cpu"]
    reply = await execute(editor, explain.command)
    assert reply["status"] == "explained", reply
    assert reply["culprit"] == {"uri": uri, "line": 39, "message": reply["culprit"]["message"]}  # line 40 `optim.step()`
    markdown = reply["markdown"]
    assert "line 40" in markdown and "optim.step()" in markdown
    assert "model.w1" in markdown and "model.w2" in markdown and "model.w3" in markdown  # leaves and versions table
    assert reply["graph"]["culprit"]["line"] == 40 and reply["graph"]["culprit"]["saved_by"]["line"] == 20
    assert reply["svg"].lstrip().startswith("<svg") and "model.w2" in reply["svg"]
    assert reply["dot"].startswith("digraph") and 'URL="#L20"' in reply["dot"]
    assert reply["locations"]["20"] == [uri, 19] and reply["locations"]["40"] == [uri, 39]
    assert any("culprit is line 40" in m.message for m in editor.client.messages)
    assert (await editor.command("autograd-lsp.serverInfo"))["torch_imported"] is False


async def test_plain_action_and_markdown_only_reply(editor: Editor, tmp_path):
    await editor.start(OPTIONS)  # no experimental capability: markdown only
    text = "import torch\nn = 0\na = torch.ones(2, requires_grad=True)\nb = (a * 3).sum()\nb.backward()\n"
    uri = editor.open("clean.py", text)
    await editor.diagnostics(uri)
    assert not [a for a in await editor.actions(uri, 1) if a.title.startswith("Explain")]  # `n = 0`: nothing to follow
    assert not [a for a in await editor.actions(uri, 0) if a.title.startswith("Explain")]
    quickfixes = await editor.actions(uri, 4, only=[types.CodeActionKind.QuickFix])
    assert not [a for a in quickfixes if a.title.startswith("Explain")]  # the plain action is not a quick fix
    (explain,) = [a for a in await editor.actions(uri, 4) if a.title.startswith("Explain")]
    # its kind is refactor.explain.autograd-lsp (the test client's decoding drops kinds of actions with a command)
    assert [a.title for a in await editor.actions(uri, 4, only=[types.CodeActionKind.Refactor])] == [explain.title]
    reply = await execute(editor, explain.command)
    assert reply["status"] == "explained" and reply["culprit"] is None, reply
    assert "`a`" in reply["markdown"] or " a " in reply["markdown"], reply["markdown"]
    assert not {"svg", "dot", "graph"} & set(reply)
    missing = await editor.command("autograd-lsp.explain", "file:///nowhere.py", 0, "cpu")
    assert missing["status"] == "error" and "not open" in missing["summary"]
    assert (await editor.command("autograd-lsp.explain", uri, 4, "tpu"))["status"] == "error"


async def test_explain_runs_only_on_request_and_stays_responsive_then_cancels(editor: Editor, tmp_path):
    await editor.start(OPTIONS)
    uri = editor.open("slow.py", SLOW)
    await editor.diagnostics(uri)
    editor.save(uri)
    pid = (await editor.command("autograd-lsp.serverInfo"))["pid"]
    await asyncio.sleep(1.5)
    assert harness_children(pid) == [], "explain (or confirm) ran on open or save"
    future = editor.client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(
        command="autograd-lsp.explain", arguments=[uri, 5, "cpu"]), msg_id="explain-to-cancel")
    await wait_until(lambda: harness_children(pid), timeout=RUN_WAIT, what="the explain run to start")
    # the server answers other requests while the run sleeps in its child
    hover = await asyncio.wait_for(editor.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=3, character=0))), WAIT)
    assert hover is None or hover.contents is not None
    actions = await editor.actions(uri, 5)
    assert any(a.title.startswith("Explain") for a in actions)
    assert harness_children(pid) and not future.done()
    editor.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="explain-to-cancel"))
    with pytest.raises(Exception, match="cancel"):
        await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    await wait_until(lambda: not harness_children(pid), what="the explain run to be killed")


async def test_explain_progress_can_be_cancelled(editor: Editor):
    await editor.start(OPTIONS)
    if not (editor.capabilities.window and editor.capabilities.window.work_done_progress):
        pytest.skip("this client shows no progress, so it cannot cancel one")  # neovim: covered by the request test
    uri = editor.open("slow.py", SLOW)
    await editor.diagnostics(uri)
    pid = (await editor.command("autograd-lsp.serverInfo"))["pid"]
    running = asyncio.ensure_future(editor.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="autograd-lsp.explain", arguments=[uri, 5, "cpu"])))
    await wait_until(lambda: any(r and r[0].kind == "begin" and "explain" in r[0].title for r in editor.client.progress_reports.values()),
                     what="progress begin")
    await wait_until(lambda: harness_children(pid), timeout=RUN_WAIT, what="the explain run to start")
    token = next(t for t, r in editor.client.progress_reports.items() if r and r[0].kind == "begin" and len(r) == 1)
    assert editor.client.progress_reports[token][0].cancellable
    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(running, WAIT)
    assert result["status"] == "cancelled"
    await wait_until(lambda: not harness_children(pid), what="the explain run to be killed")


async def test_explain_refused_when_runs_are_disabled_and_bad_input_answered(editor: Editor):
    await editor.start({"autogradLsp": {"confirm": {"enabled": False}}})
    uri = editor.open("clean.py", "import torch\na = torch.ones(2, requires_grad=True)\nb = (a * 3).sum()\nb.backward()\n")
    await editor.diagnostics(uri)
    assert not [a for a in await editor.actions(uri, 3) if a.title.startswith("Explain")]
    reply = await editor.command("autograd-lsp.explain", uri, 3, "cpu")
    assert reply["status"] == "disabled" and "confirm.enabled" in reply["summary"]
    bad = await editor.command("autograd-lsp.explain", uri)
    assert bad["status"] == "error"
    missing = await editor.command("autograd-lsp.explain", "file:///nowhere.py", 0, "cpu")
    assert missing["status"] == "disabled"  # refused before anything else is looked at
    assert (await editor.command("autograd-lsp.serverInfo"))["version"]
