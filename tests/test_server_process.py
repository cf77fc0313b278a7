"""The server process itself: a crashing rule is logged and skipped, exit codes, TCP transport."""
from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from server_support import AG001_TEXT, AG004_TEXT, WAIT, Editor

# A server whose AG004 rule raises: the checker skips it, the server logs it, the other rules still report.
CRASHING = [sys.executable, "-c", (
    "import dataclasses, autograd_lsp.rules as rules\n"
    "def boom(model):\n"
    "    raise ZeroDivisionError('rule exploded')\n"
    "rules.ALL_RULES[:] = [dataclasses.replace(r, check=boom) if r.code == 'AG004' else r for r in rules.ALL_RULES]\n"
    "from autograd_lsp.server import serve\n"
    "raise SystemExit(serve())\n")]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=CRASHING), params=["visual-studio-code", "neovim", "emacs"])
async def crashing(lsp_client: LanguageClient, request):
    lsp_client.client_name = request.param
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)


async def test_a_crashing_rule_is_logged_and_skipped(crashing: LanguageClient, tmp_path):
    editor = Editor(crashing, crashing.client_name, tmp_path)
    await editor.start()
    uri = editor.open("mix.py", AG001_TEXT + AG004_TEXT)
    diagnostics = await editor.diagnostics(uri, lambda ds: any(d.code == "AG001" for d in ds))
    assert not [d for d in diagnostics if d.code == "AG004"]
    # the file did not pass: the rule that could not check it says so
    (broken,) = [d for d in diagnostics if d.code == "AG000"]
    assert broken.severity == types.DiagnosticSeverity.Warning and broken.message.startswith("rule AG004")
    deadline = time.monotonic() + WAIT
    while not any("rule exploded" in m.message for m in crashing.log_messages) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    logged = [m for m in crashing.log_messages if "rule exploded" in m.message]
    assert logged and logged[0].type == types.MessageType.Error and "AG004" in logged[0].message
    # logged once, not on every keystroke
    editor.edit(uri, 0, 0, "# x\n")
    await editor.diagnostics(uri, lambda ds: any(d.code == "AG001" and d.range.start.line == 3 for d in ds))
    assert len([m for m in crashing.log_messages if "rule exploded" in m.message]) == 1


# A server whose walk fails on any text holding the marker: a stand-in for a walker bug on one file.
WALK_FAILS = [sys.executable, "-c", (
    "import autograd_lsp.checker as checker\n"
    "real = checker.build_model\n"
    "def build_model(tree, source, **kw):\n"
    "    if 'EXPLODE' in source.text:\n"
    "        raise IndexError('walk exploded')\n"
    "    return real(tree, source, **kw)\n"
    "checker.build_model = build_model\n"
    "from autograd_lsp.server import serve\n"
    "raise SystemExit(serve())\n")]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=WALK_FAILS))
async def walk_fails(lsp_client: LanguageClient):
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)


async def test_a_walk_that_fails_is_a_diagnostic_and_the_server_goes_on(walk_fails: LanguageClient, tmp_path):
    editor = Editor(walk_fails, "visual-studio-code", tmp_path)
    await editor.start()
    bad = editor.open("bad.py", AG001_TEXT + "# EXPLODE\n")
    (diagnostic,) = await editor.diagnostics(bad, lambda ds: any(d.code == "AG000" for d in ds))
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.message.startswith("could not be analysed: internal error") and "walk exploded" in diagnostic.message
    good = editor.open("good.py", AG001_TEXT)
    await editor.diagnostics(good, lambda ds: any(d.code == "AG001" for d in ds))
    # the marker removed by an edit: the file is analysed again, its finding replaces the AG000
    start = len(AG001_TEXT)
    editor.edit(bad, start, start + len("# EXPLODE"), "")
    await editor.diagnostics(bad, lambda ds: any(d.code == "AG001" for d in ds) and not any(d.code == "AG000" for d in ds))


def _message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(stream) -> dict:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise EOFError("server closed the stream")
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
        if line in (b"\r\n", b"\n"):
            return json.loads(stream.read(length))


def _read_response(stream, request_id) -> dict:
    while True:
        message = _read(stream)
        if message.get("id") == request_id and "method" not in message:
            return message


def test_exit_codes_follow_the_protocol():
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}}
    clean = _message(initialize) + _message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) + _message({"jsonrpc": "2.0", "method": "exit"})
    done = subprocess.run([sys.executable, "-m", "autograd_lsp", "serve"], input=clean, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    abrupt = _message(initialize) + _message({"jsonrpc": "2.0", "method": "exit"})
    done = subprocess.run([sys.executable, "-m", "autograd_lsp", "serve"], input=abrupt, capture_output=True, timeout=60)
    assert done.returncode == 1


def test_tcp_transport(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "autograd_lsp", "serve", "--tcp", f"127.0.0.1:{port}"], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.1)
        with connection, connection.makefile("rwb") as stream:
            stream.write(_message({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                   "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}))
            stream.flush()
            result = _read_response(stream, 1)["result"]
            assert result["serverInfo"]["name"] == "autograd-lsp"
            stream.write(_message({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            uri = (tmp_path / "leaf.py").as_uri()
            stream.write(_message({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": AG001_TEXT}}}))
            stream.flush()
            while True:
                message = _read(stream)
                if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                    assert [d["code"] for d in message["params"]["diagnostics"]] == ["AG001"]
                    break
            stream.write(_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            stream.flush()
            _read_response(stream, 2)
    finally:
        server.kill()
        server.wait(timeout=WAIT)


def test_bad_tcp_address():
    done = subprocess.run([sys.executable, "-m", "autograd_lsp", "serve", "--tcp", "localhost:http"], capture_output=True, timeout=60)
    assert done.returncode == 2 and b"HOST:PORT" in done.stderr
