"""Diagnostics: pushed (publishDiagnostics) to clients that do not pull, answered to textDocument/diagnostic
for those that do, and workspace/diagnostic for every file of the workspace (opt-in)."""
from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from ..checker import check_source
from ..lsp_convert import Place, finding_key, to_diagnostic
from .auditing import run_diagnostics
from .documents import Analysis, Unit


class Publishing:
    def diagnostics(self, unit: Unit, analysis: Analysis) -> dict[str, list[types.Diagnostic]]:
        snap = analysis.snapshot
        out: dict[str, list[types.Diagnostic]] = {uri: [] for uri in snap.uris}
        support, encoding = self.support, self.encoding
        for finding in analysis.findings:
            extra = self.confirmed_text.get((analysis.content_hash, tuple(finding_key(finding))))
            converted = to_diagnostic(finding, snap.locate, encoding, support, extra)
            if converted is not None:
                out.setdefault(converted[0], []).append(converted[1])
        for uri, items in run_diagnostics(self, unit, analysis).items():  # the last audit's, until the text changes
            out.setdefault(uri, []).extend(items)
        return out

    def publish(self, unit: Unit, force: bool = False):
        analysis = unit.analysis
        if analysis is None:
            return
        if self.pull_mode:
            if force:
                self.request_refresh()
            return
        by_uri = self.diagnostics(unit, analysis)
        for uri in unit.published - set(by_uri):
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        for uri, items in by_uri.items():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=items, version=analysis.snapshot.versions.get(uri)))
        unit.published = {uri for uri, items in by_uri.items() if items}

    def request_refresh(self):
        if self.client_has("workspace", "diagnostics", "refresh_support"):
            self.workspace_diagnostic_refresh(None)


async def document_diagnostic(ls, params: types.DocumentDiagnosticParams):
    uri = params.text_document.uri
    unit = ls.unit_for(uri)
    if unit is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    analysis = await ls.current_analysis(unit)
    if analysis is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    result_id = f"{unit.generation}.{ls.settings_generation}.{len(ls.confirmed_text)}"
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    items = ls.diagnostics(unit, analysis).get(uri, [])
    return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)


async def workspace_diagnostic(ls, params: types.WorkspaceDiagnosticParams):
    """Every .py file of the workspace (opt-in: `workspaceDiagnostics`), with $/progress; a repeat request
    with nothing changed is held until something does (clients poll this request in a loop)."""
    from ..discovery import iter_files

    root = ls.root
    if not root:
        return types.WorkspaceDiagnosticReport(items=[])
    previous = {item.uri: item.value for item in params.previous_result_ids or []}
    loop = asyncio.get_running_loop()
    while True:
        ls.workspace_changed.clear()
        settings = ls.settings_for(str(Path(root) / "pyproject.toml"))
        files = await loop.run_in_executor(ls.workspace_executor, lambda: [p for p in iter_files([root], settings) if p.suffix in (".py", ".pyi")])
        stamps = {}
        for path in files:
            try:
                stat = path.stat()
            except OSError:
                continue
            stamps[Path(path).resolve().as_uri()] = f"{stat.st_mtime_ns}-{stat.st_size}-{ls.settings_generation}"
        if not previous or any(previous.get(uri) != stamp for uri, stamp in stamps.items()):
            break
        await ls.workspace_changed.wait()

    token = params.work_done_token
    if token is None and ls.client_has("window", "work_done_progress"):
        token = f"autograd-lsp-workspace-{next(ls.progress_ids)}"
        try:
            await asyncio.wait_for(ls.work_done_progress.create_async(token), 10)
        except Exception:
            token = None
    if token is not None:
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title="autograd-lsp: checking the workspace", percentage=0, cancellable=True))
    items = []
    try:
        open_paths = {}
        for unit in ls.units.values():
            if not unit.notebook and unit.analysis is not None:
                open_paths[unit.key] = unit
        for index, (uri, stamp) in enumerate(sorted(stamps.items())):
            if token is not None and index % 10 == 0:
                ls.work_done_progress.report(token, types.WorkDoneProgressReport(
                    message=f"{index}/{len(stamps)} files", percentage=int(100 * index / max(len(stamps), 1))))
            if uri in open_paths:
                continue  # open documents are reported by textDocument/diagnostic
            if previous.get(uri) == stamp:
                items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=stamp))
                continue
            path = to_fs_path(uri)
            findings, locate = await loop.run_in_executor(ls.workspace_executor, _check_file, path, settings)
            diagnostics = [d for f in findings if (d := to_diagnostic(f, locate, ls.encoding, ls.support)) is not None]
            items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=[d[1] for d in diagnostics], version=None, result_id=stamp))
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=f"{len(items)} files checked"))
    return types.WorkspaceDiagnosticReport(items=items)


def _check_file(path: str, settings):
    from ..source import SourceError, read_source

    uri = Path(path).resolve().as_uri()
    try:
        source = read_source(path)
    except SourceError:
        return [], lambda line: None
    findings = check_source(source, settings).findings
    return findings, (lambda line: Place(uri, line - 1, source.line_text(line)))
