"""An audit's findings: the run's observations merged with `check`'s findings of the same file, and rendered.

A static finding whose lines the run flagged with the same code is *confirmed*; one whose lines the run never
executed is *not reached*; one the run executed without seeing its harm is *not observed*; what the run saw with no
static finding is *runtime-only*. Text, JSON and SARIF carry the same findings as `check`'s, plus that mark.
"""
from __future__ import annotations

import ast
import json
import os
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
    run_line: int | None = None  # the line the run named, when a static finding was confirmed

    @property
    def observed(self) -> bool:
        return self.status in (CONFIRMED, RUNTIME_ONLY)


def _lines_of(finding: Finding) -> set[int]:
    return set(range(finding.span.line, finding.span.end_line + 1))


def _loop_ranges(source: Source) -> list[tuple[int, int]]:
    try:
        tree = ast.parse(source.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [(node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While))]


def _innermost(loops: list[tuple[int, int]], line: int) -> tuple[int, int] | None:
    around = [loop for loop in loops if loop[0] <= line <= loop[1]]
    return min(around, key=lambda loop: loop[1] - loop[0]) if around else None


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
    loops = _loop_ranges(source)
    matches: dict[int, int] = {}  # static index -> observed index
    # a bug of two places (model.with_cause): its cause is confirmed by what confirms the failing line, never alone
    failing = {(f.code, f.span.line): i for i, f in enumerate(static) if "cause_of" not in f.data}
    causes = {i: failing[(f.code, f.data["cause_of"])] for i, f in enumerate(static)
              if "cause_of" in f.data and (f.code, f.data["cause_of"]) in failing}
    for exact in (True, False):
        for index, finding in enumerate(static):
            if index in matches or finding.code == "AG000" or index in causes:
                continue
            # the run may name a related line (the in-place op of a failing backward, say): that confirms it too;
            # failing that, a line of the same innermost loop (the use and its backward, the step and its forward)
            if exact:
                matching = _lines_of(finding) | {r.span.line for r in finding.related}
            else:
                loop = _innermost(loops, finding.span.line)
                matching = set(range(loop[0], loop[1] + 1)) if loop else set()
            match = next((i for i, o in enumerate(observed) if i not in used and o["code"] == finding.code
                          and int(o.get("line") or 0) in matching), None)
            if match is not None:
                used.add(match)
                matches[index] = match
    for index, finding in enumerate(static):
        if finding.code == "AG000":
            merged.append(AuditFinding(finding, NOT_REACHED))
            continue
        lines = _lines_of(finding)
        match = matches.get(causes.get(index, index))
        if match is not None:
            seen = observed[match]
            merged.append(AuditFinding(finding, CONFIRMED, seen.get("evidence", ""), seen.get("message", ""), int(seen.get("line") or 0) or None))
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
    else:
        relative = os.path.relpath(path)
        path = path if relative.startswith("..") else relative
    if line and source.cells and path == report.display_path:
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


def _entries(report) -> list[check_report.FileFindings]:
    return [check_report.FileFindings(f.display_path, f.source, [a.finding for a in f.findings]) for f in report.files]


def text(report) -> str:
    lines = []
    for entry, audited_file in zip(_entries(report), report.files):
        for audited in audited_file.findings:
            finding = audited.finding
            message = check_report._message(entry.source, finding.message)
            lines.append(f"{entry.path}:{check_report.position(entry, finding)}: {finding.code} {message} ({LABELS[audited.status]})")
            if audited.status == CONFIRMED and audited.run_message and audited.run_message != finding.message:
                at = f" (line {audited.run_line})" if audited.run_line and audited.run_line != finding.span.line else ""
                lines.append(f"    run{at}: {audited.run_message}")
            if audited.evidence:
                lines.append(f"    evidence: {audited.evidence}")
    stop = stop_line(report)
    if stop:
        lines.append(stop)
    lines.append(run_summary(report))
    for note in report.run.probe_errors[:5]:
        lines.append(f"note: a probe failed: {note}")
    observed = sum(1 for a in report.all_findings if a.observed)
    total = len(report.all_findings)
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
        "timings": run.timings,
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
    for audited_file in report.files:
        for audited in audited_file.findings:
            item = check_report.finding_json(audited_file.display_path, audited.finding, audited_file.source)
            item.update(audit=audited.status, observed_at_run_time=audited.observed, evidence=audited.evidence or None,
                        run_message=audited.run_message or None, run_line=audited.run_line)
            findings.append(item)
    return json.dumps({"findings": findings, "run": _run_json(report)}, indent=2, ensure_ascii=False)


def as_sarif(report) -> str:
    log = json.loads(check_report.as_sarif(_entries(report)))
    run = log["runs"][0]
    for result, audited in zip(run["results"], report.all_findings):
        result.setdefault("properties", {}).update(audit=audited.status, observedAtRunTime=audited.observed)
        if audited.evidence:
            result["properties"]["evidence"] = audited.evidence
    invocation: dict = {"executionSuccessful": report.run.stopped is None, "properties": _run_json(report)}
    stop = stop_line(report)
    if stop:
        invocation["toolExecutionNotifications"] = [{"level": "warning", "message": {"text": stop}}]
    run["invocations"] = [invocation]
    return json.dumps(log, indent=2, ensure_ascii=False)
