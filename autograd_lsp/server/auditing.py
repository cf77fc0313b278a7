"""The audit command: run the open file (loops bounded) under every rule's runtime probe, in confirm's sandbox (a job,
see jobs.py), only ever on this explicit request. What the run observed becomes diagnostics with the source
"autograd-lsp (run)", shown until the file's text changes."""
from __future__ import annotations

import traceback
from pathlib import Path

from lsprotocol import types

from ..lsp_convert import to_diagnostic
from .jobs import JobCancelled, cancelled_with_request, run_job
from .settings import SECTION

CMD_AUDIT = "autograd-lsp.audit"
RUN_SOURCE = "autograd-lsp (run)"
AUDIT_TIMEOUT_S = 120.0


async def audit(ls, args) -> dict:
    """[uri, {args: [...], steps: 3, device: "cpu", timeout: S}]: run the file and show what it observed."""
    if not args:
        ls.show_message(f"autograd-lsp: {CMD_AUDIT} needs [uri, options]", types.MessageType.Error)
        return {"status": "error", "message": "bad arguments"}
    with cancelled_with_request(ls):
        return await _audit(ls, str(args[0]), args[1] if len(args) > 1 and isinstance(args[1], dict) else {})


async def _audit(ls, uri: str, options: dict) -> dict:
    if not ls.options.confirm_enabled:
        ls.show_message(f"autograd-lsp: running code is disabled ({SECTION}.confirm.enabled = false)", types.MessageType.Warning)
        return {"status": "disabled"}
    unit = ls.unit_for(uri)
    analysis = await ls.current_analysis(unit) if unit is not None else None
    if analysis is None or not analysis.snapshot.source.path or not Path(analysis.snapshot.source.path).exists():
        ls.show_message(f"autograd-lsp: cannot audit {uri}: it is not an open file saved on disk", types.MessageType.Warning)
        return {"status": "error", "message": "document not open or not on disk"}
    try:
        argv = [str(a) for a in options.get("args") or []]
        steps = max(1, int(options.get("steps") or 3))
        device = str(options.get("device") or ls.options.confirm_device).lower()
        timeout = float(options.get("timeout") or max(AUDIT_TIMEOUT_S, ls.options.confirm_timeout))
        probes = Path(options["probes"]).read_text(encoding="utf-8") if options.get("probes") else None
    except (TypeError, ValueError, OSError) as error:
        ls.show_message(f"autograd-lsp: bad audit options: {error}", types.MessageType.Error)
        return {"status": "error", "message": f"bad options: {error}"}
    from ..audit import audit_source

    source = analysis.snapshot.source  # the editor's text, unsaved changes included, run from the file's folder
    try:
        report = await run_job(ls, "autograd-lsp: auditing", f"running {Path(source.path).name} on {device}, loops bounded to {steps}…",
                               audit_source, source, argv, steps=steps, device=device, python=ls.options.python,
                               timeout=timeout, probes=probes, settings=ls.settings_for(source.path), cleanup_s=timeout + 5)
    except JobCancelled:
        ls.show_message("autograd-lsp: audit cancelled")
        return {"status": "cancelled"}
    except Exception as error:
        ls.log_message(f"audit of {uri} failed:\n{traceback.format_exc()}", types.MessageType.Error)
        ls.show_message(f"autograd-lsp: audit failed: {type(error).__name__}: {error}", types.MessageType.Error)
        return {"status": "error", "message": f"{type(error).__name__}: {error}"}
    from ..audit import report as audit_report

    ls.audits[unit.key] = (analysis.content_hash, _diagnostics(ls, analysis.snapshot, report))
    unit.generation += 1
    ls.publish(unit, force=True)
    observed = [a for a in report.findings if a.observed]
    stop = audit_report.stop_line(report)
    summary = f"audit: {len(observed)} problem{'s' if len(observed) != 1 else ''} observed at run time" + (f"; {stop}" if stop else "")
    ls.show_message(f"autograd-lsp: {summary}", types.MessageType.Warning if stop or observed else types.MessageType.Info)
    return {"status": "done", "observed": len(observed), "stopped": report.run.stopped,
            "findings": [{"code": a.finding.code, "line": a.finding.span.line, "audit": a.status} for a in report.findings]}


def _diagnostics(ls, snapshot, report) -> dict[str, list[types.Diagnostic]]:
    from ..audit import report as audit_report
    from ..findings import Finding, Severity, Span

    out: dict[str, list[types.Diagnostic]] = {}

    def add(finding, note):
        converted = to_diagnostic(finding, snapshot.locate, ls.encoding, ls.support, note)
        if converted is not None:
            converted[1].source = RUN_SOURCE
            out.setdefault(converted[0], []).append(converted[1])

    for audited in report.findings:
        if audited.observed:
            add(audited.finding, audit_report.LABELS[audited.status] + (f": {audited.evidence}" if audited.evidence else ""))
    stopped = report.run.stopped
    if stopped and stopped.get("path") == report.source.path and stopped.get("line"):
        line = int(stopped["line"])
        text = report.source.line_text(line)
        start = len(text) - len(text.lstrip())
        reason = audit_report.STOP_REASONS.get(stopped.get("reason"), stopped.get("reason"))
        add(Finding("audit-stopped", "audit-stopped", Severity.INFO, f"the audit run stopped here: {reason}: {stopped.get('message', '')}",
                    Span(line, start, line, len(text))), None)
    return out


def run_diagnostics(ls, unit, analysis) -> dict[str, list[types.Diagnostic]]:
    """The last audit's diagnostics of `unit`, while its text is the one that ran; forgotten once it changes."""
    kept = ls.audits.get(unit.key)
    if kept is None:
        return {}
    if kept[0] != analysis.content_hash:
        del ls.audits[unit.key]
        return {}
    return kept[1]
