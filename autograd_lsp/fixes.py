"""Applying fixes to text: edits in (line, column) spans, non-overlapping, applied back to front."""
from __future__ import annotations

from typing import Iterable

from .findings import Edit, Finding, Fix, Safety


def _offsets(text: str) -> list[int]:
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)
    return starts


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    starts = _offsets(text)

    def offset(line: int, col: int) -> int:
        if line - 1 >= len(starts):
            return len(text)
        return min(starts[line - 1] + col, len(text))

    ordered = sorted(edits, key=lambda edit: (edit.span.line, edit.span.col, edit.span.end_line, edit.span.end_col))
    out, cursor = [], 0
    for edit in ordered:
        start, end = offset(edit.span.line, edit.span.col), offset(edit.span.end_line, edit.span.end_col)
        if start < cursor:
            raise ValueError("overlapping edits")
        out.append(text[cursor:start])
        out.append(edit.text)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def choose_fixes(findings: Iterable[Finding], unsafe: bool = False) -> list[Fix]:
    """One fix per finding (the first allowed), dropping any that overlaps one already chosen."""
    chosen: list[Fix] = []
    taken: list[tuple] = []
    for finding in sorted(findings, key=lambda f: f.span):
        fix = next((f for f in finding.fixes if unsafe or f.safety is Safety.SAFE), None)
        if fix is None:
            continue
        ranges = [((e.span.line, e.span.col), (e.span.end_line, e.span.end_col)) for e in fix.edits]
        if any(a_start < b_end and b_start < a_end or a_start == b_start for a_start, a_end in ranges for b_start, b_end in taken):
            continue
        chosen.append(fix)
        taken.extend(ranges)
    return chosen


def apply_fixes(text: str, fixes: Iterable[Fix]) -> str:
    return apply_edits(text, [edit for fix in fixes for edit in fix.edits])
