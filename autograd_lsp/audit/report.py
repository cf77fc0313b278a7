"""An audit's findings: the run's observations merged with `check`'s findings of the same file, and rendered.

A static finding whose lines the run flagged with the same code is *confirmed*; one whose lines the run never
executed is *not reached*; one the run executed without seeing its harm is *not observed*; what the run saw with no
static finding is *runtime-only*. Text, JSON and SARIF carry the same findings as `check`'s, plus that mark.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from .. import report as check_report
from ..findings import Finding, Severity, Span
from ..rules import find_rule
from ..source import Source
from .runner import STOP_REASONS, RunResult

CONFIRMED, RUNTIME_ONLY, NOT_REACHED, NOT_OBSERVED = "confirmed", "runtime-only", "not-reached", "not-observed"
LABELS = {
    CONFIRMED: "confirmed: observed at run time",
    RUNTIME_ONLY: "runtime-only: observed at run time",
    NOT_REACHED: "not reached by the run",
    NOT_OBSERVED: "reached, not observed at run time",
}


@dataclass(frozen=True)
class AuditFinding:
    finding: Finding
    status: str  # one of LABELS
    evidence: str = ""  # what the run measured (runtime findings)
    run_message: str = ""  # the probe's message, when a static finding was confirmed

    @property
    def observed(self) -> bool:
        return self.status in (CONFIRMED, RUNTIME_ONLY)


def _lines_of(finding: Finding) -> set[int]:
    return set(range(finding.span.line, finding.span.end_line + 1))


def _runtime_finding(source: Source, observed: dict) -> Finding:
    line = int(observed.get("line") or 1)
    text = source.line_text(line)
    rule = find_rule(observed["code"])
    name = rule.name if rule is not None else observed["code"].lower()
    severity = rule.severity if rule is not None else Severity.WARNING
    start = len(text) - len(text.lstrip())
    return Finding(observed["code"], name, severity, observed.get("message") or (rule.summary if rule else observed["code"]),
                   Span(line, start, line, max(start, len(text))))


def merge(source: Source, static: list[Finding], run: RunResult, selected=lambda code: True) -> list[AuditFinding]:
    """The audit's findings in line order; `selected(code)` filters the run's (the static ones are filtered already)."""
    path = source.path
    reached = run.reached_lines.get(path, set())
    observed = [o for o in run.findings if o.get("path") == path and selected(o["code"])]
    used: set[int] = set()
    merged: list[AuditFinding] = []
    for finding in static:
        if finding.code == "AG000":
            merged.append(AuditFinding(finding, NOT_REACHED))
            continue
        lines = _lines_of(finding)
        # the run may name a related line (the in-place op of a failing backward, say): that confirms it too
        matching = lines | {r.span.line for r in finding.related}
        match = next((i for i, o in enumerate(observed) if i not in used and o["code"] == finding.code
                      and int(o.get("line") or 0) in matching), None)
        if match is not None:
            used.add(match)
            merged.append(AuditFinding(finding, CONFIRMED, observed[match].get("evidence", ""), observed[match].get("message", "")))
        elif lines & reached:
            merged.append(AuditFinding(finding, NOT_OBSERVED))
        else:
            merged.append(AuditFinding(finding, NOT_REACHED))
    for i, o in enumerate(observed):
        if i not in used:
            merged.append(AuditFinding(_runtime_finding(source, o), RUNTIME_ONLY, o.get("evidence", "")))
    merged.sort(key=lambda a: (a.finding.span, a.finding.code))
    return merged


# -- rendering ----------------------------------------------------------------------------------------------------
def where(report, path: str | None, line: int | None) -> str:
    """`train.py:40` (as the user named the script), `nb.ipynb:cell 3, line 2` in notebooks."""
    source = report.source
    if not path:
        return "before the script started"
    if path == source.path:
        path = report.display_path
    if line and source.cells:
        cell = source.cell_of(line)
        if cell is not None:
            return f"{path}:cell {cell[0] + 1}, line {cell[1]}"
    return f"{path}:{line}" if line else path


def stop_line(report) -> str | None:
    stopped = report.run.stopped
    if not stopped:
        return None
    reason = STOP_REASONS.get(stopped.get("reason"), stopped.get("reason"))
    return f"The run stopped at {where(report, stopped.get('path'), stopped.get('line'))}: {reason}: {stopped.get('message', '')}"


def run_summary(report) -> str:
    run = report.run
    reached = len(run.reached_lines.get(report.source.path, ()))
    loops = len(run.loops)
    parts = [f"ran {run.duration_s:.1f} s with each loop bounded to {report.steps} iteration{'s' if report.steps != 1 else ''}",
             f"{loops} loop{'s' if loops != 1 else ''} entered", f"{reached} line{'s' if reached != 1 else ''} reached",
             f"python: {run.python}", f"sandbox: {run.isolation}" + (f" ({run.isolation_note})" if run.isolation_note else "")]
    return "Audit: " + "; ".join(parts)


def _entry(report) -> check_report.FileFindings:
    return check_report.FileFindings(report.display_path, report.source, [a.finding for a in report.findings])


def text(report) -> str:
    entry = _entry(report)
    lines = []
    for audited in report.findings:
        finding = audited.finding
        message = check_report._message(report.source, finding.message)
        lines.append(f"{entry.path}:{check_report.position(entry, finding)}: {finding.code} {message} ({LABELS[audited.status]})")
        if audited.status == CONFIRMED and audited.run_message and audited.run_message != finding.message:
            lines.append(f"    run: {audited.run_message}")
        if audited.evidence:
            lines.append(f"    evidence: {audited.evidence}")
    stop = stop_line(report)
    if stop:
        lines.append(stop)
    lines.append(run_summary(report))
    for note in report.run.probe_errors[:5]:
        lines.append(f"note: a probe failed: {note}")
    observed = sum(1 for a in report.findings if a.observed)
    total = len(report.findings)
    if total:
        lines.append(f"Found {total} problem{'s' if total != 1 else ''} ({observed} observed at run time).")
    else:
        lines.append("All checks passed!" if not report.run.stopped else "No problems found in what ran.")
    return "\n".join(lines)


def _run_json(report) -> dict:
    run = report.run
    return {
        "stopped": run.stopped,
        "stop_reason": STOP_REASONS.get((run.stopped or {}).get("reason")) if run.stopped else None,
        "steps": report.steps,
        "duration_s": round(run.duration_s, 3),
        "reached_lines": sorted(run.reached_lines.get(report.source.path, ())),
        "loops": run.loops,
        "python": run.python,
        "torch_version": run.torch_version,
        "sandbox": run.isolation,
        "probe_errors": run.probe_errors,
        "output_tail": run.output[-2000:],
    }


def as_json(report) -> str:
    findings = []
    for audited in report.findings:
        item = check_report.finding_json(report.display_path, audited.finding, report.source)
        item.update(audit=audited.status, observed_at_run_time=audited.observed, evidence=audited.evidence or None)
        findings.append(item)
    return json.dumps({"findings": findings, "run": _run_json(report)}, indent=2, ensure_ascii=False)


def as_sarif(report) -> str:
    log = json.loads(check_report.as_sarif([_entry(report)]))
    run = log["runs"][0]
    for result, audited in zip(run["results"], report.findings):
        result.setdefault("properties", {}).update(audit=audited.status, observedAtRunTime=audited.observed)
        if audited.evidence:
            result["properties"]["evidence"] = audited.evidence
    invocation: dict = {"executionSuccessful": report.run.stopped is None, "properties": _run_json(report)}
    stop = stop_line(report)
    if stop:
        invocation["toolExecutionNotifications"] = [{"level": "warning", "message": {"text": stop}}]
    run["invocations"] = [invocation]
    return json.dumps(log, indent=2, ensure_ascii=False)
