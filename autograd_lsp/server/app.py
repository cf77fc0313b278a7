"""The LanguageServer and its handlers, each a few lines that delegate to the module of its job. LSP types
live at this edge; torch is never imported here (confirmations run it in a child process)."""
from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import sys

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..lsp_convert import DiagnosticSupport
from . import actions, auditing, commands, confirming, diagnostics, explaining, hover as hovering
from .diagnostics import Publishing
from .documents import Documents, Unit
from .jedi_pass import JediPass
from .protocol import AutogradProtocol
from .retention import Retention, tune_gc
from .scheduling import DaemonExecutor, Scheduling
from .settings import SECTION, ClientOptions, ProjectSettings, SettingsMixin

log = logging.getLogger(__name__)


class AutogradLanguageServer(LanguageServer, Documents, Scheduling, JediPass, Retention, Publishing, SettingsMixin):
    """The server's state; its behaviour is grouped by job in the mixins (documents, scheduling, jedi_pass,
    retention, diagnostics, settings)."""

    def __init__(self):
        super().__init__(
            "autograd-lsp",
            __version__,
            protocol_cls=AutogradProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(
                    cells=[types.NotebookCellLanguage(language="python")], notebook="*")],
                save=True,
            ),
        )
        self.units: dict[str, Unit] = {}
        self.options = ClientOptions()
        self.options_seq = 0  # bumps on every settings change (a slow workspace/configuration answer must not undo a newer push)
        self.init_options_raw = None
        self.project = ProjectSettings()
        self.check_executor = DaemonExecutor("autograd-lsp-check")
        self.jedi_executor = DaemonExecutor("autograd-lsp-jedi")
        self.workspace_executor = DaemonExecutor("autograd-lsp-workspace")
        self.confirmations: dict = {}  # (content hash, finding key, device, python) -> ConfirmResult
        self.confirmed_text: dict = {}  # (content hash, finding key) -> summary shown in the message
        self.audits: dict = {}  # unit key -> (content hash, {uri: run diagnostics}) of the last audit
        self.explanations: dict = {}  # (content hash, line, device, python) -> Explanation, newest last
        self.resolvers: dict = {}
        self.with_model: collections.OrderedDict = collections.OrderedDict()  # unit key -> unit whose model is kept, newest last
        self.logged_errors: set = set()
        self.timings: dict = {"open_ms": [], "check_ms": []}
        self.pull_mode = False
        self.workspace_changed: asyncio.Event | None = None
        self.settings_generation = 0
        self.progress_ids = itertools.count(1)
        self._gc_timer: asyncio.TimerHandle | None = None

    # -- capabilities ----------------------------------------------------------------------------------
    @property
    def encoding(self):
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    @property
    def support(self) -> DiagnosticSupport:
        return DiagnosticSupport.of(self.client_capabilities, self.pull_mode)

    def client_has(self, *path: str) -> bool:
        value = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
            if value is None:
                return False
        return bool(value)

    @property
    def markdown(self) -> bool:
        hover = self.client_capabilities.text_document.hover if self.client_capabilities.text_document else None
        formats = hover.content_format if hover else None
        return not formats or types.MarkupKind.Markdown in formats

    @property
    def resolve_edits(self) -> bool:
        code_action = self.client_capabilities.text_document.code_action if self.client_capabilities.text_document else None
        resolve = code_action.resolve_support if code_action else None
        return bool(resolve and "edit" in resolve.properties and code_action.data_support)

    @property
    def document_changes(self) -> bool:
        return self.client_has("workspace", "workspace_edit", "document_changes")

    @property
    def root(self) -> str | None:
        try:
            return self.workspace.root_path
        except Exception:
            return None

    # -- messages --------------------------------------------------------------------------------------
    def log_message(self, message: str, kind=types.MessageType.Log):
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show_message(self, message: str, kind=types.MessageType.Info):
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def report_server_error(self, error: Exception, source):
        """pygls's default shows "Error in server" popups; the protocol answers or logs instead."""
        self.protocol.report(error, source)


server = AutogradLanguageServer()


# -- lifecycle -------------------------------------------------------------------------------------------
@server.feature(types.INITIALIZE)
def initialize(ls: AutogradLanguageServer, params: types.InitializeParams):
    ls.protocol.count_lines_as_lsp()
    ls.init_options_raw = params.initialization_options
    ls.apply_options(params.initialization_options, "initializationOptions")
    # Pull diagnostics only for clients that ask for them: clients that both pull and receive pushes
    # (VS Code) would show everything twice.
    text_document = params.capabilities.text_document
    ls.pull_mode = bool(text_document and text_document.diagnostic is not None)
    if ls.pull_mode:
        ls.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
            identifier="autograd-lsp", inter_file_dependencies=False, workspace_diagnostics=False))(document_diagnostic)
        if ls.options.workspace_diagnostics:
            ls.feature(types.WORKSPACE_DIAGNOSTIC)(workspace_diagnostic)


@server.feature(types.INITIALIZED)
async def initialized(ls: AutogradLanguageServer, params: types.InitializedParams):
    ls.workspace_changed = asyncio.Event()
    registrations = []
    if ls.client_has("workspace", "did_change_watched_files", "dynamic_registration"):
        registrations.append(types.Registration(
            id="autograd-lsp-pyproject", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml"), types.FileSystemWatcher(glob_pattern="**/*.py")])))
    if ls.client_has("workspace", "did_change_configuration", "dynamic_registration"):
        registrations.append(types.Registration(id="autograd-lsp-config", method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                                                register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION)))
    if registrations:
        try:
            await asyncio.wait_for(ls.client_register_capability_async(types.RegistrationParams(registrations=registrations)), 10)
        except Exception as error:
            ls.log_message(f"client/registerCapability failed: {error}", types.MessageType.Warning)
    # No jedi warm-up here: with two cores its import competes with the first analysis for the GIL.
    # jedi is imported by the first background pass, which only runs when a workspace import is unresolved.
    await ls.pull_configuration()


@server.feature(types.SHUTDOWN)
def shutdown(ls: AutogradLanguageServer, params):
    ls.stop_all()
    ls.protocol.cancel_pending_requests()


# -- text documents and notebooks ------------------------------------------------------------------------
@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: AutogradLanguageServer, params: types.DidOpenTextDocumentParams):
    ls.document_opened(params.text_document.uri, params.text_document.language_id)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: AutogradLanguageServer, params: types.DidChangeTextDocumentParams):
    ls.unit_changed(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: AutogradLanguageServer, params: types.DidSaveTextDocumentParams):
    ls.document_saved(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: AutogradLanguageServer, params: types.DidCloseTextDocumentParams):
    ls.unit_closed(params.text_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: AutogradLanguageServer, params: types.DidOpenNotebookDocumentParams):
    ls.notebook_opened(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: AutogradLanguageServer, params: types.DidChangeNotebookDocumentParams):
    ls.unit_changed(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: AutogradLanguageServer, params: types.DidSaveNotebookDocumentParams):
    ls.notebook_saved(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: AutogradLanguageServer, params: types.DidCloseNotebookDocumentParams):
    ls.unit_closed(params.notebook_document.uri)


# -- settings and files ----------------------------------------------------------------------------------
@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: AutogradLanguageServer, params: types.DidChangeConfigurationParams):
    await ls.configuration_changed(params.settings)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: AutogradLanguageServer, params: types.DidChangeWatchedFilesParams):
    ls.watched_files_changed(params.changes)


# -- pull diagnostics (registered in initialize, for clients that pull) ----------------------------------
async def document_diagnostic(ls: AutogradLanguageServer, params: types.DocumentDiagnosticParams):
    return await diagnostics.document_diagnostic(ls, params)


async def workspace_diagnostic(ls: AutogradLanguageServer, params: types.WorkspaceDiagnosticParams):
    return await diagnostics.workspace_diagnostic(ls, params)


# -- code actions and hover ------------------------------------------------------------------------------
@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=True))
async def code_action(ls: AutogradLanguageServer, params: types.CodeActionParams):
    return await actions.code_actions(ls, params)


@server.feature(types.CODE_ACTION_RESOLVE)
async def code_action_resolve(ls: AutogradLanguageServer, action: types.CodeAction):
    return await actions.resolve(ls, action)


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: AutogradLanguageServer, params: types.HoverParams):
    return await hovering.hover(ls, params)


# -- commands --------------------------------------------------------------------------------------------
@server.command(commands.CMD_RULE_DOC)
def show_rule_doc(ls: AutogradLanguageServer, *args):
    return commands.rule_doc(ls, args)


@server.command(actions.CMD_FIX_ALL)
async def fix_all(ls: AutogradLanguageServer, *args):
    return await actions.fix_all(ls, args)


@server.command(commands.CMD_SERVER_INFO)
def server_info(ls: AutogradLanguageServer, *args):
    return commands.server_info(ls)


@server.command(confirming.CMD_CONFIRM)
async def confirm(ls: AutogradLanguageServer, *args):
    return await confirming.confirm(ls, args)


@server.command(auditing.CMD_AUDIT)
async def audit(ls: AutogradLanguageServer, *args):
    return await auditing.audit(ls, args)


@server.command(explaining.CMD_EXPLAIN)
async def explain(ls: AutogradLanguageServer, *args):
    return await explaining.explain(ls, args)


# -- entry point -----------------------------------------------------------------------------------------
def serve(tcp: str | None = None) -> int:
    """Run the server on stdio (default) or on `HOST:PORT`; returns the exit status LSP prescribes."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="autograd-lsp %(levelname)s %(name)s: %(message)s")
    tune_gc()
    if tcp:
        host, _, port = tcp.rpartition(":")
        try:
            server.start_tcp(host or "127.0.0.1", int(port))
        except ValueError:
            print(f"autograd-lsp: error: --tcp expects HOST:PORT, got {tcp!r}", file=sys.stderr)
            return 2
    else:
        server.start_io()
    return 0 if getattr(server.protocol, "_shutdown", False) else 1
