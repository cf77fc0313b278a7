"""A small editor model for the server tests: it opens files, edits them in the negotiated position encoding,
applies the server's workspace edits like an editor would, and waits for diagnostics pushed or pulled."""
from __future__ import annotations

import ast
import asyncio
import sys
import time
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "autograd_lsp", "serve"])
CLIENTS = ["visual-studio-code", "neovim", "emacs"]
WAIT = 10  # seconds: every wait in these tests is bounded by this

AG001_TEXT = "import torch\na = torch.ones(2, 2, requires_grad=True)\na += 2\n"
AG004_TEXT = "import torch\nx = torch.tensor([1, 2, 3], requires_grad=True)\ny = torch.arange(5, requires_grad=True)\n"


# -- positions in the client's encoding (written independently of autograd_lsp.lsp_convert) ----------
def _units(char: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(char.encode("utf-8"))
    if encoding == "utf-16":
        return 2 if ord(char) > 0xFFFF else 1
    return 1


def offset_of(text: str, position: types.Position, encoding: str) -> int:
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return offset + index
        units += _units(char, encoding)
    return offset + len(line)


def position_of(text: str, offset: int, encoding: str) -> types.Position:
    before = text[:offset]
    line = before.count("\n")
    start = before.rfind("\n") + 1
    return types.Position(line=line, character=sum(_units(c, encoding) for c in text[start:offset]))


def apply_text_edits(text: str, edits, encoding: str) -> str:
    spans = sorted(((offset_of(text, e.range.start, encoding), offset_of(text, e.range.end, encoding), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_by_uri(edit: types.WorkspaceEdit) -> dict[str, list[types.TextEdit]]:
    out: dict[str, list] = {}
    for uri, edits in (edit.changes or {}).items():
        out.setdefault(uri, []).extend(edits)
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            out.setdefault(change.text_document.uri, []).extend(change.edits)
    return out


class Editor:
    """One client session: documents it has open, their versions, and helpers bounded by WAIT."""

    def __init__(self, client: LanguageClient, name: str, root: Path):
        self.client = client
        self.name = name
        self.root = root
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.encoding = "utf-16"
        self.pull = False
        self.applied: list[types.ApplyWorkspaceEditParams] = []
        self.registrations: list[types.Registration] = []
        self.capabilities = pytest_lsp.client_capabilities(name)
        self.server_capabilities: types.ServerCapabilities | None = None

    async def start(self, options=None, capabilities: types.ClientCapabilities | None = None) -> types.InitializeResult:
        editor = self

        @self.client.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(ls, params: types.ApplyWorkspaceEditParams):
            editor.applied.append(params)
            editor.apply(params.edit)
            return types.ApplyWorkspaceEditResult(applied=True)

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register_capability(ls, params: types.RegistrationParams):
            editor.registrations.extend(params.registrations)

        if capabilities is not None:
            self.capabilities = capabilities
        result = await asyncio.wait_for(self.client.initialize_session(types.InitializeParams(
            capabilities=self.capabilities,
            root_uri=self.root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)],
            initialization_options=options,
        )), WAIT)
        self.server_capabilities = result.capabilities
        encoding = result.capabilities.position_encoding
        self.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
        self.pull = result.capabilities.diagnostic_provider is not None
        return result

    # -- documents -----------------------------------------------------------------------------------
    def open(self, name: str, text: str, write: bool = True, language: str = "python") -> str:
        path = self.root / name
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        self.texts[uri] = text
        self.versions[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
        return uri

    def replace_all(self, uri: str, text: str):
        self.versions[uri] += 1
        self.texts[uri] = text
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    def edit(self, uri: str, start: int, end: int, new_text: str):
        """An incremental change replacing text[start:end] (offsets in characters)."""
        text = self.texts[uri]
        range_ = types.Range(start=position_of(text, start, self.encoding), end=position_of(text, end, self.encoding))
        self.versions[uri] += 1
        self.texts[uri] = text[:start] + new_text + text[end:]
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[types.TextDocumentContentChangePartial(range=range_, text=new_text)]))

    def save(self, uri: str):
        from urllib.parse import unquote, urlparse

        Path(unquote(urlparse(uri).path)).write_text(self.texts[uri], encoding="utf-8")
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))

    def apply(self, edit: types.WorkspaceEdit | None):
        assert edit is not None, "the action carries no edit"
        for uri, edits in edits_by_uri(edit).items():
            self.replace_all(uri, apply_text_edits(self.texts[uri], edits, self.encoding))

    # -- diagnostics ---------------------------------------------------------------------------------
    async def diagnostics(self, uri: str, until=lambda diagnostics: True, timeout: float = WAIT) -> list[types.Diagnostic]:
        """Diagnostics of `uri` once `until(diagnostics)` holds: pulled (textDocument/diagnostic) when the
        server offers it to this client, else read from what was pushed."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.pull:
                report = await asyncio.wait_for(self.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                    text_document=types.TextDocumentIdentifier(uri=uri))), WAIT)
                last = list(report.items)
            elif uri in self.client.diagnostics:
                last = list(self.client.diagnostics[uri])
            if last is not None and until(last):
                return last
            await asyncio.sleep(0.02)
        raise AssertionError(f"{self.name}: diagnostics for {uri} never satisfied the condition; last: {last}")

    # -- requests ------------------------------------------------------------------------------------
    async def actions(self, uri: str, line: int, only=None, diagnostics=None) -> list[types.CodeAction]:
        text = self.texts[uri].split("\n")[line]
        end = types.Position(line=line, character=sum(_units(c, self.encoding) for c in text))
        result = await asyncio.wait_for(self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=line, character=0), end=end),
            context=types.CodeActionContext(diagnostics=diagnostics or [], only=only))), WAIT)
        return [_as_code_action(item) for item in result or []]

    async def resolve(self, action: types.CodeAction) -> types.CodeAction:
        if action.edit is None and action.data is not None:
            action = await asyncio.wait_for(self.client.code_action_resolve_async(action), WAIT)
        return action

    async def hover(self, uri: str, line: int, char_col: int) -> types.Hover | None:
        text = self.texts[uri].split("\n")[line]
        character = sum(_units(c, self.encoding) for c in text[:char_col])
        return await asyncio.wait_for(self.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character))), WAIT)

    async def command(self, name: str, *arguments):
        return await asyncio.wait_for(self.client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=name, arguments=list(arguments))), WAIT)


def _as_code_action(item) -> types.CodeAction:
    """lsprotocol's client-side hook reads any item with a "command" key as a bare Command, even a CodeAction
    whose `command` is an object (the confirm actions); real editors tell them apart by that object."""
    if isinstance(item, types.Command):
        inner = item.command
        if isinstance(inner, str):  # cattrs turned the object into its repr on the way
            assert inner.startswith("{"), f"the server sent a bare Command: {item}"
            inner = ast.literal_eval(inner)
        return types.CodeAction(title=item.title, command=types.Command(title=inner["title"], command=inner["command"],
                                                                         arguments=inner.get("arguments")))
    return item


def codes(diagnostics) -> list[str]:
    return [d.code for d in diagnostics]


def harness_children(pid: int) -> list[int]:
    """The server's child processes that run a sandboxed harness (confirm, explain and audit children all carry
    `__agl_harness__` in their command line)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in children:
            try:
                if b"__agl_harness__" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(int(child))
            except OSError:
                pass
    return found
