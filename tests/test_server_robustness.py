"""Bad input over the wire never kills the server, never goes unanswered and never pops up an error: invalid
params get InvalidParams, malformed JSON a ParseError, a non-object an InvalidRequest (JSON-RPC 2.0 §5.1), and
notifications it cannot use become a log line. Real server subprocess, raw bytes."""
from __future__ import annotations

import pytest

from raw_lsp import RawServer
from server_support import AG001_TEXT

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


@pytest.fixture
def raw(tmp_path):
    server = RawServer(tmp_path)
    server.initialize()
    yield server
    assert server.alive(), "the server died"
    assert server.close() == 0


def _open(raw: RawServer, name: str, text: str) -> str:
    uri = (raw.root / name).as_uri()
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    return uri


def _still_answers(raw: RawServer):
    """A real request after the bad one is answered with a result: the server is alive and listening."""
    uri = _open(raw, "alive.py", AG001_TEXT)
    response = raw.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 0}})
    assert "error" not in response and "leaf" in response["result"]["contents"]["value"]


def _error_responses(raw: RawServer, code: int) -> list[dict]:
    return [m for m in raw.snapshot() if isinstance(m, dict) and "error" in m and "method" not in m and m["error"]["code"] == code]


def test_a_request_with_invalid_params_gets_invalid_params(raw):
    response = raw.request("textDocument/hover", {"textDocument": 5})
    assert response["error"]["code"] == INVALID_PARAMS and "text_document" in response["error"]["message"]
    response = raw.request("textDocument/codeAction", {"textDocument": {"uri": "file:///x.py"}, "range": "everywhere"})
    assert response["error"]["code"] == INVALID_PARAMS
    _still_answers(raw)
    assert raw.popups() == []


@pytest.mark.parametrize("body", [b'{"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {',
                                  b"\xff\xfe not json", b"Content-Length: 3"], ids=["truncated", "not-utf8", "garbage"])
def test_malformed_json_gets_a_parse_error(raw, body):
    raw.send_bytes(body)
    error = raw.wait_for(lambda m: isinstance(m, dict) and "error" in m and "method" not in m)
    assert error["id"] is None and error["error"]["code"] == PARSE_ERROR
    _still_answers(raw)
    assert raw.popups() == []


@pytest.mark.parametrize("message", [[1, 2], 5, "hover", None, [], {"id": 3, "method": "textDocument/hover"}, {"jsonrpc": "2.0"}],
                         ids=["array", "number", "string", "null", "empty-batch", "no-jsonrpc", "no-method"])
def test_a_message_that_is_no_request_gets_invalid_request(raw, message):
    raw.send(message)
    error = raw.wait_for(lambda m: isinstance(m, dict) and "error" in m and "method" not in m)
    assert error["error"]["code"] == INVALID_REQUEST
    assert error["id"] == (message.get("id") if isinstance(message, dict) else None)
    _still_answers(raw)
    assert raw.popups() == []


def test_notifications_it_cannot_use_are_logged_not_shown(raw):
    unopened = (raw.root / "never_opened.py").as_uri()
    raw.notify("textDocument/didChange", {"textDocument": {"uri": unopened, "version": 2},
                                          "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]})
    raw.notify("textDocument/didOpen", {"textDocument": 5})
    raw.notify("textDocument/didClose", {"textDocument": {"uri": unopened}})
    notebook = (raw.root / "never_opened.ipynb").as_uri()
    raw.notify("notebookDocument/didChange", {"notebookDocument": {"uri": notebook, "version": 2}, "change": {"cells": {
        "textContent": [{"document": {"uri": notebook + "#cell1", "version": 2}, "changes": [{"text": "x = 1"}]}]}}})
    raw.wait_for(lambda m: isinstance(m, dict) and m.get("method") == "window/logMessage" and "never_opened.py" in m["params"]["message"])
    raw.wait_for(lambda m: isinstance(m, dict) and m.get("method") == "window/logMessage" and "textDocument/didOpen" in m["params"]["message"])
    raw.wait_for(lambda m: isinstance(m, dict) and m.get("method") == "window/logMessage"
                 and "notebookDocument/didChange" in m["params"]["message"] and "never_opened.ipynb" in m["params"]["message"])
    _still_answers(raw)
    assert raw.popups() == []
    # the document that was never opened does not exist for the server afterwards either
    response = raw.request("textDocument/hover", {"textDocument": {"uri": unopened}, "position": {"line": 0, "character": 0}})
    assert response.get("result") is None and "error" not in response


def test_out_of_range_positions_are_answered(raw):
    uri = _open(raw, "short.py", AG001_TEXT)
    for line, character in ((0, 10_000), (10_000, 0), (2, 2**31 - 1)):
        position = {"line": line, "character": character}
        hover = raw.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
        assert "error" not in hover, hover
        actions = raw.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": position, "end": position},
                                                          "context": {"diagnostics": []}})
        assert "error" not in actions, actions
    assert raw.popups() == []


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028"], ids=["form-feed", "vtab", "fs", "nel", "line-sep"])
def test_incremental_edits_count_only_lsp_line_breaks(raw, separator):
    """A character Python's splitlines breaks at but LSP does not, in a comment: an edit on a later line must
    land on that line (here it completes an AG001 where the client put it)."""
    text = f"import torch\n# page{separator}break\na = torch.ones(2, requires_grad=True)\n"
    uri = _open(raw, "paged.py", text)
    insert_at = {"line": 3, "character": 0}  # the empty line after the last line break
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": insert_at, "end": insert_at}, "text": "a += 2\n"}]})
    published = raw.wait_for(lambda m: isinstance(m, dict) and m.get("method") == "textDocument/publishDiagnostics"
                             and m["params"]["uri"] == uri and m["params"].get("version") == 2)
    assert [(d["code"], d["range"]["start"]["line"]) for d in published["params"]["diagnostics"]] == [("AG001", 3)]
