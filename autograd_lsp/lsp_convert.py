"""Findings ↔ LSP types: positions in the negotiated encoding (UTF-16 by default), diagnostics, edits.

The analyzer counts columns in Python characters (code points) and lines from 1; LSP counts lines from 0
and columns in UTF-16 code units unless the client negotiated UTF-8 or UTF-32. Everything that crosses
that edge goes through here, so the server itself never does column arithmetic.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from lsprotocol import types

from .findings import Finding, Severity, Span
from .report import DOCS_URL
from .rules import find_rule

SOURCE_NAME = "autograd-lsp"
DEPRECATED_CODES = frozenset({"AG011"})  # findings about deprecated APIs: shown struck through where supported

UTF8, UTF16, UTF32 = types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf32

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


# -- columns -------------------------------------------------------------------------------------------
def _encoding(encoding) -> str:
    value = getattr(encoding, "value", encoding) or "utf-16"
    return str(value).lower()


def char_to_units(line_text: str, col: int, encoding=UTF16) -> int:
    """A 0-based character column on `line_text` as a column in the client's code units."""
    col = max(col, 0)
    prefix = line_text[:col]
    beyond = col - len(prefix)  # columns past the end of the line (end-of-line edits) count one each
    enc = _encoding(encoding)
    if enc == "utf-32" or prefix.isascii():
        return col
    if enc == "utf-8":
        return len(prefix.encode("utf-8", "surrogatepass")) + beyond
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2 + beyond


def units_to_char(line_text: str, units: int, encoding=UTF16) -> int:
    """A column in the client's code units as a 0-based character column (clamped inside a character)."""
    units = max(units, 0)
    enc = _encoding(encoding)
    if enc == "utf-32" or line_text.isascii():
        return units
    count = 0
    for index, char in enumerate(line_text):
        if count >= units:
            return index
        if enc == "utf-8":
            count += len(char.encode("utf-8", "surrogatepass"))
        else:
            count += 2 if ord(char) > 0xFFFF else 1
    return len(line_text) + max(units - count, 0)


# -- where a joined-program line lives -----------------------------------------------------------------
@dataclass(frozen=True)
class Place:
    uri: str
    line: int  # 0-based line in that document
    text: str  # the line's text (for column conversion)


Locate = Callable[[int], "Place | None"]  # 1-based analysed line -> where it is shown


def to_range(span: Span, locate: Locate, encoding=UTF16) -> tuple[str, types.Range] | None:
    """The (uri, range) of a span; None when it crosses documents (a notebook cell boundary) or vanished."""
    start, end = locate(span.line), locate(span.end_line)
    if start is None or end is None or start.uri != end.uri:
        return None
    return start.uri, types.Range(
        start=types.Position(line=start.line, character=char_to_units(start.text, span.col, encoding)),
        end=types.Position(line=end.line, character=char_to_units(end.text, span.end_col, encoding)),
    )


def text_edits(edits, locate: Locate, encoding=UTF16) -> dict[str, list[types.TextEdit]] | None:
    """Edits grouped by document; None if any edit cannot be placed (then the fix is not offered)."""
    grouped: dict[str, list[types.TextEdit]] = {}
    for edit in edits:
        placed = to_range(edit.span, locate, encoding)
        if placed is None:
            return None
        uri, range_ = placed
        grouped.setdefault(uri, []).append(types.TextEdit(range=range_, new_text=edit.text))
    return grouped


def workspace_edit(grouped: dict[str, list[types.TextEdit]], versions: dict[str, int | None] | None = None,
                   document_changes: bool = False) -> types.WorkspaceEdit:
    """`documentChanges` (versioned: the client refuses stale edits) where supported, else `changes`."""
    if document_changes:
        return types.WorkspaceEdit(document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=(versions or {}).get(uri)),
                edits=edits,
            )
            for uri, edits in grouped.items()
        ])
    return types.WorkspaceEdit(changes=grouped)


# -- diagnostics ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DiagnosticSupport:
    """What the client can show; fields it cannot are left out (pytest-lsp checks this, and so do editors)."""

    related_information: bool = True
    code_description: bool = True
    tags: tuple = (types.DiagnosticTag.Unnecessary, types.DiagnosticTag.Deprecated)
    data: bool = True

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities | None, pull: bool = False) -> "DiagnosticSupport":
        """From the capabilities of the channel in use (pulled reports, else published ones); a field the
        pull capability leaves unset falls back to the publish capability's."""
        text_document = capabilities.text_document if capabilities else None
        publish = text_document.publish_diagnostics if text_document else None
        channels = [c for c in ((text_document.diagnostic if text_document and pull else None), publish) if c is not None]

        def flag(name: str):
            return next((value for c in channels if (value := getattr(c, name, None)) is not None), None)

        tag_support = flag("tag_support")
        return cls(bool(flag("related_information")), bool(flag("code_description_support")),
                   tuple(tag_support.value_set) if tag_support else (), bool(flag("data_support")))


def finding_key(finding: Finding) -> list:
    return [finding.code, finding.span.line, finding.span.col, finding.span.end_line, finding.span.end_col]


def rule_url(code: str) -> str:
    return DOCS_URL.format(code=code.lower())


def to_diagnostic(finding: Finding, locate: Locate, encoding=UTF16, support: DiagnosticSupport = DiagnosticSupport(),
                  extra_message: str | None = None) -> tuple[str, types.Diagnostic] | None:
    placed = to_range(finding.span, locate, encoding)
    if placed is None:
        start = locate(finding.span.line)
        if start is None:
            return None
        # A span that crosses a cell boundary: show it on its first line only.
        placed = start.uri, types.Range(start=types.Position(start.line, char_to_units(start.text, finding.span.col, encoding)),
                                        end=types.Position(start.line, char_to_units(start.text, len(start.text), encoding)))
    uri, range_ = placed
    message = finding.message if not extra_message else f"{finding.message} — {extra_message}"
    related = None
    if support.related_information and finding.related:
        related = []
        for item in finding.related:
            where = to_range(item.span, locate, encoding)
            if where is not None:
                related.append(types.DiagnosticRelatedInformation(location=types.Location(uri=where[0], range=where[1]), message=item.message))
        related = related or None
    tags = None
    if finding.code in DEPRECATED_CODES and types.DiagnosticTag.Deprecated in support.tags:
        tags = [types.DiagnosticTag.Deprecated]
    data = None
    if support.data:
        data = {"key": finding_key(finding), "fixes": [fix.safety.value for fix in finding.fixes]}
    return uri, types.Diagnostic(
        range=range_,
        message=message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=rule_url(finding.code)) if support.code_description and find_rule(finding.code) else None,
        source=SOURCE_NAME,
        related_information=related,
        tags=tags,
        data=data,
    )


def from_position(position: types.Position, line_text: str, encoding=UTF16) -> tuple[int, int]:
    """(1-based line, character column) of an LSP position on a line whose text is `line_text`."""
    return position.line + 1, units_to_char(line_text, position.character, encoding)


def span_contains(span: Span, line: int, col: int) -> bool:
    """Whether (1-based line, character col) is inside the span (ends inclusive, as a cursor sits there)."""
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)


def spans_overlap(span: Span, start: tuple[int, int], end: tuple[int, int]) -> bool:
    return (span.line, span.col) <= end and start <= (span.end_line, span.end_col)


