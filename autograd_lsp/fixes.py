"""Applying fixes to text: edits in (line, column) spans, non-overlapping, applied back to front."""
from __future__ import annotations

import re
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


_LINE = re.compile(r"[^\r\n]*(\r\n|\r|\n|$)")


def apply_edits_keeping_newlines(raw: str, edits: Iterable[Edit]) -> str:
    """apply_edits on text whose line endings were not normalised (CRLF, CR, mixed): positions count lines as
    the analysis does (each ending one line break), every existing ending is kept, and the line breaks an edit
    inserts take the ending of the line the edit starts on (the file's first ending on an unterminated last line)."""
    starts, lengths, endings = [], [], []
    for match in _LINE.finditer(raw):
        starts.append(match.start())
        lengths.append(match.start(1) - match.start())
        endings.append(match.group(1))
        if not match.group(1):
            break
    default = next((ending for ending in endings if ending), "\n")

    def offset(line: int, col: int) -> int:
        index = line - 1
        while index < len(starts) and col > lengths[index]:  # past the end: into the next line (rare)
            col -= lengths[index] + 1
            index += 1
        return len(raw) if index >= len(starts) else starts[index] + col

    out: list[str] = []

    def append(piece: str) -> None:
        if piece.startswith("\n") and out and out[-1].endswith("\r"):
            out[-1] += "\n"  # a lone CR meeting an LF would read as one CRLF: one line lost
        if piece:
            out.append(piece)

    ordered = sorted(edits, key=lambda edit: (edit.span.line, edit.span.col, edit.span.end_line, edit.span.end_col))
    cursor = 0
    for edit in ordered:
        start, end = offset(edit.span.line, edit.span.col), offset(edit.span.end_line, edit.span.end_col)
        if start < cursor:
            raise ValueError("overlapping edits")
        ending = endings[edit.span.line - 1] if edit.span.line - 1 < len(endings) else ""
        append(raw[cursor:start])
        append(edit.text.replace("\n", ending or default))
        cursor = end
    append(raw[cursor:])
    return "".join(out)
