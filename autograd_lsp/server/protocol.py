"""The JSON-RPC side of the server: what pygls's LanguageServerProtocol does, plus an answer for every message
it cannot use — InvalidParams, MethodNotFound, InvalidRequest, ParseError (JSON-RPC 2.0 §5.1) for requests, a
log line for notifications; never silence, never an error popup — and cancelling a command with its request."""
from __future__ import annotations

import json
import logging
import re
import traceback

from cattrs import BaseValidationError, transform_error
from lsprotocol import types
from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.workspace import TextDocument, Workspace

log = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


class Unreadable:
    """A message that is JSON and names JSON-RPC 2.0 but could not be read as the LSP message it claims to be."""

    def __init__(self, data: dict, error: BaseException):
        self.data = data
        self.error = error

    def problems(self) -> str:
        if isinstance(self.error, BaseValidationError):
            return "; ".join(transform_error(self.error))
        return f"{type(self.error).__name__}: {self.error}"


LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # one line with its line break (LSP: \n, \r\n, \r)


class LspTextDocument(TextDocument):
    """pygls splits a document's lines with str.splitlines, which also breaks at \\v, \\f, \\x1c-\\x1e, \\x85,
    U+2028 and U+2029; the client counts only \\n, \\r\\n and \\r. A form feed (PEP 8 allows them) put every
    later incremental edit on the wrong line, and the server's text parted from the editor's for good."""

    @property
    def lines(self):
        return tuple(LSP_LINE.findall(self.source))


class LspWorkspace(Workspace):
    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self._position_codec)


def _valid_id(value) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


class AutogradProtocol(LanguageServerProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # pygls cancels a `workspace/executeCommand` request's response but not the command's coroutine (it runs
        # as an inner task); commands register here to be cancelled with their request (jobs.cancelled_with_request).
        self.cancel_callbacks: dict = {}

    def _handle_cancel_notification(self, msg_id):
        for callback in self.cancel_callbacks.pop(msg_id, []):
            callback()
        super()._handle_cancel_notification(msg_id)

    def cancel_pending_requests(self):
        """shutdown: cancel every request still running (a confirmation's command stops its sandboxed run) before
        pygls does. pygls cancels them while iterating over its dict of futures, and a cancelled command's future
        removes itself from that dict at once: the shutdown request then fails and the server exits with 1."""
        current = self.msg_id
        for msg_id in [m for m, future in self._request_futures.items() if m != current and not future.done()]:
            self._handle_cancel_notification(msg_id)

    def count_lines_as_lsp(self):
        """Called from the initialize handler, when pygls has just made the workspace and no document is open:
        documents are made as LspTextDocuments from then on."""
        self.workspace.__class__ = LspWorkspace

    # -- messages it cannot use ------------------------------------------------------------------------
    def structure_message(self, data):
        """pygls raises out of json.loads here, which loses the request's id (no response is ever sent): keep
        the message, and the reason, for handle_message to answer."""
        if not isinstance(data, dict) or "jsonrpc" not in data:
            return data  # an inner object (params), or no JSON-RPC message at all (handle_message says so)
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            return Unreadable(data, error.__cause__ or error)

    def handle_message(self, message):
        if isinstance(message, Unreadable):
            self._answer_unreadable(message)
        elif isinstance(message, (dict, list, str, int, float, bool)) or message is None:
            # valid JSON that is no JSON-RPC 2.0 message object (an array, a scalar, no "jsonrpc" member)
            ident = message.get("id") if isinstance(message, dict) else None
            self.send_error(ident if _valid_id(ident) else None, INVALID_REQUEST,
                            f"Invalid Request: expected a JSON-RPC 2.0 message object, got {_describe(message)}")
        else:
            super().handle_message(message)

    def _answer_unreadable(self, message: Unreadable):
        data = message.data
        method, ident = data.get("method"), data.get("id")
        if not isinstance(method, str):
            future = self._request_futures.pop(ident, None) if _valid_id(ident) and ("result" in data or "error" in data) else None
            if future is not None:  # the client's answer to one of our requests: whoever awaits it learns why
                future.set_exception(JsonRpcException(f"unreadable response: {message.problems()}"))
                return
            self.send_error(ident if _valid_id(ident) else None, INVALID_REQUEST, "Invalid Request: no method")
            return
        if "id" not in data:  # a notification has no response: say it in the log
            self._server.log_message(f"autograd-lsp: ignored {method}: invalid params: {message.problems()}", types.MessageType.Warning)
            return
        if not _valid_id(ident):
            self.send_error(None, INVALID_REQUEST, f"Invalid Request: id must be a number or a string, got {_describe(ident)}")
        elif self.get_message_type(method) is None and method not in self.fm.features:
            self.send_error(ident, METHOD_NOT_FOUND, f"Method Not Found: {method}")
        else:
            self.send_error(ident, INVALID_PARAMS, f"Invalid params for {method}: {message.problems()}")

    def send_error(self, ident, code: int, message: str):
        """An error response; `ident` None is sent as `"id": null`, as JSON-RPC requires when the id is unknown
        (lsprotocol's converter would leave the member out)."""
        self._send_data({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})

    def report(self, error: BaseException, source) -> None:
        """pygls's out-of-band errors: a body that is no JSON gets a ParseError; a request's error was already
        answered; anything else (a notification handler failing) becomes a log line, not a popup."""
        if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):
            self.send_error(None, PARSE_ERROR, f"Parse error: {error}")
            return
        if source is FeatureRequestError:
            return
        detail = "".join(traceback.format_exception(error)) if error.__traceback__ else str(error)
        self._server.log_message(f"autograd-lsp: {getattr(source, '__name__', source)}: {detail}", types.MessageType.Error)

    # -- notifications about documents that are not open -----------------------------------------------
    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if not self._is_open(params.text_document.uri):
            self._server.log_message(f"autograd-lsp: ignored textDocument/didChange for {params.text_document.uri}, "
                                     "which is not open", types.MessageType.Warning)
            return
        yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if not self._is_open(params.text_document.uri):
            self._server.log_message(f"autograd-lsp: ignored textDocument/didClose for {params.text_document.uri}, "
                                     "which is not open", types.MessageType.Warning)
            return
        yield from super().lsp_text_document__did_close(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: types.DidChangeNotebookDocumentParams):
        if self.workspace.get_notebook_document(notebook_uri=params.notebook_document.uri) is None:
            self._server.log_message(f"autograd-lsp: ignored notebookDocument/didChange for {params.notebook_document.uri}, "
                                     "which is not open", types.MessageType.Warning)
            return
        yield from super().lsp_notebook_document__did_change(params)

    def _is_open(self, uri: str) -> bool:
        from urllib.parse import unquote

        return unquote(uri) in self.workspace.text_documents


def _describe(value) -> str:
    text = json.dumps(value, default=lambda item: type(item).__name__)
    return text if len(text) <= 60 else text[:57] + "..."
