"""`# noqa` suppression: per line (`# noqa`, `# noqa: AG001,AG003`) and per file (`# autograd-lsp: noqa[: codes]`)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .findings import Edit, Finding, Span

LINE_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[\w\-]+(?:\s*,\s*[\w\-]+)*))?", re.IGNORECASE)
FILE_NOQA = re.compile(r"#\s*autograd-lsp:\s*noqa(?::\s*(?P<codes>[\w\-]+(?:\s*,\s*[\w\-]+)*))?", re.IGNORECASE)


@dataclass(frozen=True)
class Directive:
    codes: frozenset[str] | None  # None: every code

    def covers(self, finding: Finding) -> bool:
        return self.codes is None or finding.code in self.codes or finding.name in self.codes


def _codes(match: re.Match) -> frozenset[str] | None:
    codes = match.group("codes")
    if not codes:
        return None
    return frozenset(code.strip().upper() if code.strip()[:2].upper() == "AG" else code.strip().lower() for code in codes.split(","))


def _comment_part(line: str) -> str | None:
    # Cheap pre-filter: only lines with a '#' can hold a directive; string contents are rare false hits
    # and only ever suppress, never report.
    index = line.find("#")
    return None if index < 0 else line[index:]


def file_directive(lines: list[str], text: str | None = None) -> Directive | None:
    """`text`, the lines joined: one search of it rules out a directive in most files (a directive in a line is
    also a match in the text; a match in the text is checked line by line)."""
    if text is not None and FILE_NOQA.search(text) is None:
        return None
    for line in lines:
        comment = _comment_part(line)
        if comment and (match := FILE_NOQA.search(comment)):
            return Directive(_codes(match))
    return None


def line_directive(line: str) -> Directive | None:
    comment = _comment_part(line)
    if not comment or FILE_NOQA.search(comment):
        return None
    match = LINE_NOQA.search(comment)
    return Directive(_codes(match)) if match else None


def suppressed(finding: Finding, lines: list[str], file_level: Directive | None) -> bool:
    if file_level is not None and file_level.covers(finding):
        return True
    line = lines[finding.span.line - 1] if 0 < finding.span.line <= len(lines) else ""
    directive = line_directive(line)
    return directive is not None and directive.covers(finding)


def add_noqa_edit(line_text: str, line: int, code: str) -> Edit:
    """The edit that makes `line` ignore `code`: extends an existing `# noqa: ...` or appends one."""
    comment_at = line_text.find("#")
    match = LINE_NOQA.search(line_text, comment_at) if comment_at >= 0 else None
    if match and match.group("codes"):
        end = match.end("codes")
        return Edit(Span(line, end, line, end), f",{code}")
    if match:  # a bare `# noqa` already covers everything
        return Edit(Span(line, match.end(), line, match.end()), "")
    stripped = line_text.rstrip()
    return Edit(Span(line, len(stripped), line, len(line_text)), f"  # noqa: {code}")
