"""Keeping findings while the user types a syntax error: the findings of the last text that parsed, moved to
their new lines when they lie outside what changed. Plain Python, tested without a server."""
from __future__ import annotations

import difflib
from dataclasses import replace

from ..findings import Finding, Fix, Related, Span


def changed_region(old_lines: list[str], new_lines: list[str]) -> tuple[int, int, int]:
    """(first changed line, lines kept at the end, line delta): the region between the unchanged prefix and
    suffix of two versions, as 1-based `first` and a count of common trailing lines."""
    limit = min(len(old_lines), len(new_lines))
    prefix = 0
    while prefix < limit and old_lines[prefix] == new_lines[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old_lines[-1 - suffix] == new_lines[-1 - suffix]:
        suffix += 1
    return prefix + 1, suffix, len(new_lines) - len(old_lines)


MAX_DIFF_LINES = 500  # beyond this, the middle of an edit counts as changed as a whole (difflib is quadratic)


def line_mover(old_lines: list[str], new_lines: list[str]):
    """A function from old 1-based lines to new ones, None for lines inside the edited region. The unchanged
    prefix and suffix move trivially; a small middle is aligned line by line with difflib."""
    first, suffix, delta = changed_region(old_lines, new_lines)
    suffix_start = len(old_lines) - suffix + 1  # first old line of the unchanged tail
    inner: dict[int, int] = {}
    old_middle = old_lines[first - 1: len(old_lines) - suffix]
    new_middle = new_lines[first - 1: len(new_lines) - suffix]
    if old_middle and new_middle and len(old_middle) <= MAX_DIFF_LINES and len(new_middle) <= MAX_DIFF_LINES:
        for a, b, size in difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False).get_matching_blocks():
            for k in range(size):
                inner[first + a + k] = first + b + k

    def move(line: int) -> int | None:
        if line < first:
            return line
        if line >= suffix_start:
            return line + delta
        return inner.get(line)

    return move


def carry_over(old_text: str, old_findings: list[Finding], new_text: str, error: Finding | None = None) -> list[Finding]:
    """The findings shown for `old_text` that lie wholly outside what changed in `new_text` (and off the
    syntax error's lines), moved to their new lines. Fixes and related locations that touch a changed line
    are dropped with them."""
    move = line_mover(old_text.split("\n"), new_text.split("\n"))

    def move_span(span: Span) -> Span | None:
        start, end = move(span.line), move(span.end_line)
        if start is None or end is None or end - start != span.end_line - span.line:
            return None
        if error is not None and start <= error.span.end_line and error.span.line <= end:
            return None
        return Span(start, span.col, end, span.end_col)

    kept = []
    for finding in old_findings:
        if finding.code == "AG000":
            continue
        span = move_span(finding.span)
        if span is None:
            continue
        fixes = []
        for fix in finding.fixes:
            edits = [replace(edit, span=moved) for edit in fix.edits if (moved := move_span(edit.span)) is not None]
            if len(edits) == len(fix.edits):
                fixes.append(Fix(fix.title, fix.safety, tuple(edits)))
        related = tuple(Related(moved, item.message) for item in finding.related if (moved := move_span(item.span)) is not None)
        kept.append(replace(finding, span=span, fixes=tuple(fixes), related=related))
    return kept
