"""The confirm command: run a finding's reproducer in the confirm runner's sandboxed child process (a job, see
jobs.py), only ever on this explicit request; a verdict about the code is shown on the diagnostic and hover."""
from __future__ import annotations

import traceback

from lsprotocol import types

from ..lsp_convert import finding_key
from .jobs import JobCancelled, cancelled_with_request, run_job
from .settings import SECTION

CMD_CONFIRM = "autograd-lsp.confirm"
VERDICTS = ("confirmed", "not-reproduced", "inconclusive")  # confirm statuses that say something about the code


async def confirm(ls, args) -> dict:
    """[uri, line (0-based), code, device]: run the finding's reproducer."""
    if len(args) < 3:
        ls.show_message(f"autograd-lsp: {CMD_CONFIRM} needs [uri, line, code, device]", types.MessageType.Error)
        return {"status": "error", "message": "bad arguments"}
    with cancelled_with_request(ls):
        return await _confirm(ls, args)


async def _confirm(ls, args):
    uri, line0, code = str(args[0]), args[1], str(args[2]).upper()
    device = str(args[3]).lower() if len(args) > 3 and args[3] else ls.options.confirm_device
    if not ls.options.confirm_enabled:
        ls.show_message(f"autograd-lsp: runtime confirmation is disabled ({SECTION}.confirm.enabled = false)", types.MessageType.Warning)
        return {"status": "disabled"}
    unit = ls.unit_for(uri)
    analysis = await ls.current_analysis(unit) if unit is not None else None
    if analysis is None or not isinstance(line0, int):
        ls.show_message(f"autograd-lsp: cannot confirm {code}: {uri} is not open", types.MessageType.Warning)
        return {"status": "error", "message": "document not open"}
    line = analysis.snapshot.joined_line(uri, line0)
    candidates = [f for f in analysis.findings if f.code == code and line is not None and f.span.line <= line <= f.span.end_line]
    finding = next((f for f in candidates if f.span.line == line), candidates[0] if candidates else None)
    if finding is None:
        ls.show_message(f"autograd-lsp: no {code} finding on line {line0 + 1}", types.MessageType.Warning)
        return {"status": "error", "message": f"no {code} finding on line {line0 + 1}"}
    cache_key = (analysis.content_hash, tuple(finding_key(finding)), device, ls.options.python)
    result = ls.confirmations.get(cache_key)
    if result is None:
        try:
            from ..confirm import confirm_finding
        except Exception as error:  # the confirm package is optional at run time; say so, do not crash
            message = f"runtime confirmation is not available: {type(error).__name__}: {error}"
            ls.show_message(f"autograd-lsp: {message}", types.MessageType.Error)
            return {"status": "error", "message": message}
        try:
            result = await run_job(ls, f"autograd-lsp: confirming {code}", f"running the reproducer on {device}…",
                                   confirm_finding, analysis.snapshot.source, finding, device=device,
                                   timeout=ls.options.confirm_timeout, python=ls.options.python,
                                   cleanup_s=ls.options.confirm_timeout + 5)
        except JobCancelled:
            ls.show_message(f"autograd-lsp: confirmation of {code} cancelled")
            return {"status": "cancelled"}
        except Exception as error:
            ls.log_message(f"confirmation of {code} failed:\n{traceback.format_exc()}", types.MessageType.Error)
            ls.show_message(f"autograd-lsp: confirmation of {code} failed: {type(error).__name__}: {error}", types.MessageType.Error)
            return {"status": "error", "message": f"{type(error).__name__}: {error}"}
        if getattr(result, "status", None) not in ("timeout", "error"):
            ls.confirmations[cache_key] = result
    summary = _summary(result)
    status = getattr(result, "status", None)
    if status in VERDICTS:  # a verdict about the code goes on the diagnostic; "cuda unavailable" and the like do not
        ls.confirmed_text[(analysis.content_hash, tuple(finding_key(finding)))] = summary
        unit.generation += 1
        ls.publish(unit, force=True)
    place = analysis.snapshot.locate(finding.span.line)
    where = f"line {place.line + 1}" if place else f"line {finding.span.line}"
    ls.show_message(f"autograd-lsp: {code} at {where}: {summary}",
                    types.MessageType.Info if status in VERDICTS else types.MessageType.Warning)
    try:
        return result.to_json()
    except Exception:
        return {"status": str(getattr(result, "status", "unknown")), "summary": summary}


def _summary(result) -> str:
    try:
        return str(result.summary())
    except Exception:
        return str(getattr(result, "status", result))
