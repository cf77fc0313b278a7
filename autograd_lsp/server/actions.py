"""Code actions: a finding's fixes, "ignore on this line" (noqa), "confirm by running", "explain the autograd
graph" (beside confirm, and as a plain action at a line), fix-all (as a source action and as a command), and
resolving an action's edit lazily for clients that support it."""
from __future__ import annotations

import asyncio

from lsprotocol import types

from ..findings import Finding, Safety
from ..fixes import choose_fixes
from ..lsp_convert import finding_key, from_position, spans_overlap, text_edits, to_diagnostic, workspace_edit
from ..noqa import add_noqa_edit
from ..rules import SYNTAX_ERROR_CODE, find_rule
from . import explaining
from .confirming import CMD_CONFIRM
from .documents import Analysis

FIX_ALL_KIND = "source.fixAll.autograd-lsp"
CMD_FIX_ALL = "autograd-lsp.fixAll"
KINDS = [types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND, explaining.EXPLAIN_KIND]


def edit_for(ls, analysis: Analysis, edits) -> types.WorkspaceEdit | None:
    grouped = text_edits(edits, analysis.snapshot.locate, ls.encoding)
    if grouped is None:
        return None
    return workspace_edit(grouped, analysis.snapshot.versions, ls.document_changes)


def find(analysis: Analysis, key) -> Finding | None:
    return next((f for f in analysis.findings if finding_key(f) == list(key)), None)


def safe_fixes(analysis: Analysis):
    return choose_fixes([f for f in analysis.findings if f.code != SYNTAX_ERROR_CODE], unsafe=False)


def action_edit(ls, analysis: Analysis, data: dict) -> types.WorkspaceEdit | None:
    kind = data.get("action")
    if kind == "fixAll":
        fixes = safe_fixes(analysis)
        return edit_for(ls, analysis, [edit for fix in fixes for edit in fix.edits]) if fixes else None
    finding = find(analysis, data.get("key", ()))
    if finding is None:
        return None
    if kind == "fix":
        index = data.get("fix", 0)
        if not 0 <= index < len(finding.fixes):
            return None
        return edit_for(ls, analysis, finding.fixes[index].edits)
    if kind == "noqa":
        line = finding.span.line
        return edit_for(ls, analysis, [add_noqa_edit(analysis.snapshot.source.line_text(line), line, finding.code)])
    return None


def _wanted(kind: str, only) -> bool:
    return not only or any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


async def code_actions(ls, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    unit = ls.unit_for(uri)
    if unit is None:
        return None
    analysis = await ls.current_analysis(unit)
    if analysis is None:
        return None
    snap = analysis.snapshot
    only = params.context.only
    lazy = ls.resolve_edits
    actions: list[types.CodeAction] = []
    explained: set[int] = set()  # lines whose finding already offers "Explain"

    def action(title, kind, data, diagnostic=None, preferred=None):
        item = types.CodeAction(title=title, kind=kind, diagnostics=[diagnostic] if diagnostic else None,
                                is_preferred=preferred, data={"uri": uri, **data} if lazy else None)
        if not lazy:
            item.edit = action_edit(ls, analysis, data)
            if item.edit is None:
                return
        actions.append(item)

    if _wanted(types.CodeActionKind.QuickFix, only):
        start_line = snap.joined_line(uri, params.range.start.line)
        end_line = snap.joined_line(uri, params.range.end.line)
        if start_line is not None and end_line is not None:
            start = from_position(types.Position(start_line - 1, params.range.start.character), snap.source.line_text(start_line), ls.encoding)
            end = from_position(types.Position(end_line - 1, params.range.end.character), snap.source.line_text(end_line), ls.encoding)
            for finding in analysis.findings:
                if finding.code == SYNTAX_ERROR_CODE or not spans_overlap(finding.span, start, end):
                    continue
                converted = to_diagnostic(finding, snap.locate, ls.encoding, ls.support)
                diagnostic = converted[1] if converted and converted[0] == uri else None
                key = finding_key(finding)
                for index, fix in enumerate(finding.fixes):
                    safe = fix.safety is Safety.SAFE
                    action(fix.title if safe else f"{fix.title} (unsafe)", types.CodeActionKind.QuickFix,
                           {"action": "fix", "key": key, "fix": index}, diagnostic, True if safe else None)
                action(f"Ignore {finding.code} on this line", types.CodeActionKind.QuickFix, {"action": "noqa", "key": key}, diagnostic)
                if ls.options.confirm_enabled:
                    place = snap.locate(finding.span.line)
                    if place is not None:
                        for device, label in (("cpu", "CPU"), ("cuda", "CUDA")):
                            actions.append(types.CodeAction(
                                title=f"Confirm {finding.code} by running on {label}", kind=types.CodeActionKind.QuickFix,
                                diagnostics=[diagnostic] if diagnostic else None,
                                command=types.Command(title=f"Confirm {finding.code} on {label}", command=CMD_CONFIRM,
                                                      arguments=[place.uri, place.line, finding.code, device])))
                        rule = find_rule(finding.code)
                        if rule is not None and explaining.explains(rule.signature):  # its failure is one explain traces
                            explained.add(place.line)
                            actions.append(types.CodeAction(title=f"{explaining.TITLE} ({finding.code})", kind=types.CodeActionKind.QuickFix,
                                                            diagnostics=[diagnostic] if diagnostic else None,
                                                            command=explaining.command(place.uri, place.line, ls.options.confirm_device)))
    # the plain action: at the (one-line) cursor, on a line that backpropagates or computes a tensor
    line0 = params.range.start.line
    if ls.options.confirm_enabled and _wanted(explaining.EXPLAIN_KIND, only):
        line = snap.joined_line(uri, line0)
        if line0 == params.range.end.line and line0 not in explained and line is not None and explaining.explainable_line(snap.source, line):
            actions.append(types.CodeAction(title=explaining.TITLE, kind=explaining.EXPLAIN_KIND,
                                            command=explaining.command(uri, line0, ls.options.confirm_device)))
    if _wanted(FIX_ALL_KIND, only):
        if any(f.safe_fix for f in analysis.findings if f.code != SYNTAX_ERROR_CODE):
            action("Fix all safe autograd-lsp problems", FIX_ALL_KIND, {"action": "fixAll"})
    return actions or None


async def resolve(ls, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    unit = ls.unit_for(data.get("uri", ""))
    if unit is None or action.edit is not None:
        return action
    analysis = await ls.current_analysis(unit)
    if analysis is not None:
        action.edit = action_edit(ls, analysis, data)
    return action


async def fix_all(ls, args) -> dict:
    """The fixAll command: apply every safe fix of the document through workspace/applyEdit."""
    uri = str(args[0]) if args else ""
    unit = ls.unit_for(uri)
    if unit is None:
        ls.show_message(f"autograd-lsp: {uri or 'no document'} is not open", types.MessageType.Warning)
        return {"applied": False, "fixes": 0}
    analysis = await ls.current_analysis(unit)
    fixes = safe_fixes(analysis) if analysis else []
    if not fixes:
        return {"applied": False, "fixes": 0}
    edit = edit_for(ls, analysis, [edit for fix in fixes for edit in fix.edits])
    if edit is None:
        return {"applied": False, "fixes": 0}
    result = await asyncio.wait_for(ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="autograd-lsp: fix all")), 30)
    return {"applied": bool(result.applied), "fixes": len(fixes)}
