"""The server floor: a bare pygls 2 language server that only ``ast.parse``s a document on open/change and
publishes empty diagnostics (with the document version). Same transport, same sync kind (incremental) and
same interpreter as autograd-lsp, so the difference to it is the cost of the analysis and its plumbing.

Run: ``python bench/bare_server.py`` (stdio).
"""
import ast

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("bare-parse-server", "0")


def _publish(ls: LanguageServer, uri: str, version) -> None:
    document = ls.workspace.get_text_document(uri)
    try:
        ast.parse(document.source)
    except (SyntaxError, ValueError, RecursionError):
        pass
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[], version=version))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri, params.text_document.version)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri, params.text_document.version)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


if __name__ == "__main__":
    server.start_io()
