"""Findings rendered for people and machines: text (ruff-like), JSON, SARIF 2.1.0, GitHub annotations."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from . import __version__
from .docs import AG000_DOC, AG000_SUMMARY
from .findings import Finding, Safety
from .rules import ALL_RULES, SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME
from .source import Source

DOCS_URL = "https://github.com/autograd-lsp/autograd-lsp/blob/main/docs/rules.md#{code}"


@dataclass
class FileFindings:
    path: str
    source: Source | None
    findings: list[Finding]


def position(entry: FileFindings, finding: Finding) -> str:
    """`12:5` for files, `cell 3, line 2:5` for notebooks (1-based, like editors show)."""
    line, col = finding.span.line, finding.span.col + 1
    if entry.source is not None and entry.source.cells:
        cell = entry.source.cell_of(line)
        if cell is not None:
            return f"cell {cell[0] + 1}, line {cell[1]}:{col}"
    return f"{line}:{col}"


def _message(source: Source | None, message: str) -> str:
    # In a notebook, "at line 15" would name a line of the joined program: say "at cell 2, line 3".
    return source.in_cells(message) if source is not None else message


def text(entries: list[FileFindings], show_fixes: bool = False) -> str:
    lines = []
    for entry in entries:
        for finding in entry.findings:
            marker = " [*]" if finding.safe_fix else ""
            lines.append(f"{entry.path}:{position(entry, finding)}: {finding.code}{marker} {_message(entry.source, finding.message)}")
            if show_fixes and finding.fixes:
                for fix in finding.fixes:
                    lines.append(f"    fix ({fix.safety.value}): {fix.title}")
    return "\n".join(lines)


def summary(total: int, fixable: int, fixed: int = 0, unsafe_hidden: int = 0) -> str:
    parts = []
    if fixed:
        parts.append(f"Fixed {fixed} problem{'s' if fixed != 1 else ''}.")
    if total == 0:
        parts.append("All checks passed!" if not fixed else "No problems remain.")
    else:
        line = f"Found {total} problem{'s' if total != 1 else ''}"
        line += f" ({fixable} fixable with --fix)." if fixable else "."
        if unsafe_hidden:
            line += f"\n{unsafe_hidden} more fix{'es are' if unsafe_hidden != 1 else ' is'} available with --unsafe-fixes."
        parts.append(line)
    return "\n".join(parts)


def statistics(entries: list[FileFindings]) -> str:
    counts = Counter((f.code, f.name, bool(f.safe_fix)) for entry in entries for f in entry.findings)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0][0]))
    return "\n".join(f"{count:>5}  {code}  {name}{'  [*]' if fixable else ''}" for (code, name, fixable), count in rows)


def _edit_json(edit) -> dict:
    return {"line": edit.span.line, "column": edit.span.col + 1, "end_line": edit.span.end_line, "end_column": edit.span.end_col + 1, "text": edit.text}


def cell_position(source: Source | None, line: int) -> tuple[int, int] | None:
    """(cell number, line in the cell), both 1-based as Jupyter shows them, of a notebook line; else None."""
    if source is None or not source.cells:
        return None
    cell = source.cell_of(line)
    return None if cell is None else (cell[0] + 1, cell[1])


def finding_json(path: str, finding: Finding, source: Source | None = None) -> dict:
    fix = finding.fixes[0] if finding.fixes else None
    cell = cell_position(source, finding.span.line)
    return {
        "path": path,
        "cell": cell[0] if cell else None,  # notebooks: the cell (1-based, among all cells) and the line in it
        "cell_line": cell[1] if cell else None,
        "line": finding.span.line,
        "column": finding.span.col + 1,
        "end_line": finding.span.end_line,
        "end_column": finding.span.end_col + 1,
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": _message(source, finding.message),
        "fix": None if fix is None else {"safety": fix.safety.value, "title": fix.title, "edits": [_edit_json(e) for e in fix.edits]},
    }


def as_json(entries: list[FileFindings]) -> str:
    return json.dumps([finding_json(entry.path, f, entry.source) for entry in entries for f in entry.findings], indent=2, ensure_ascii=False)


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def as_sarif(entries: list[FileFindings]) -> str:
    rules = [{"id": SYNTAX_ERROR_CODE, "name": SYNTAX_ERROR_NAME, "shortDescription": {"text": AG000_SUMMARY},
              "help": {"text": AG000_SUMMARY, "markdown": AG000_DOC}, "defaultConfiguration": {"level": "error"}}]
    for rule in ALL_RULES:
        rules.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.summary},
            "help": {"text": rule.summary, "markdown": rule.doc},
            "helpUri": DOCS_URL.format(code=rule.code.lower()),
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity.value]},
            "properties": {"runtimeSignature": rule.signature},
        })
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for entry in entries:
        uri = entry.path.replace("\\", "/")
        for finding in entry.findings:
            location = _sarif_location(entry, uri, finding.span)
            result = {
                "ruleId": finding.code,
                "ruleIndex": index.get(finding.code, 0),
                "level": _SARIF_LEVEL[finding.severity.value],
                "message": {"text": _message(entry.source, finding.message)},
                "locations": [location],
            }
            if finding.related:
                result["relatedLocations"] = [{"id": i, "message": {"text": _message(entry.source, r.message)}, **_sarif_location(entry, uri, r.span, end=False)}
                                              for i, r in enumerate(finding.related)]
            if finding.fixes and "logicalLocations" in location:
                result["properties"] = {"fixSafety": finding.fixes[0].safety.value}  # notebook cells: `--fix` applies it
            elif finding.fixes:
                fix = finding.fixes[0]
                result["fixes"] = [{"description": {"text": fix.title}, "artifactChanges": [{
                    "artifactLocation": {"uri": uri},
                    "replacements": [{"deletedRegion": {"startLine": e.span.line, "startColumn": e.span.col + 1,
                                                        "endLine": e.span.end_line, "endColumn": e.span.end_col + 1},
                                      "insertedContent": {"text": e.text}} for e in fix.edits]}]}]
                result["properties"] = {"fixSafety": fix.safety.value}
            results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "autograd-lsp", "version": __version__, "semanticVersion": __version__,
                                      "informationUri": "https://github.com/autograd-lsp/autograd-lsp", "rules": rules}},
                  "columnKind": "unicodeCodePoints", "results": results}],
    }
    return json.dumps(log, indent=2, ensure_ascii=False)


def _sarif_location(entry: FileFindings, uri: str, span, end: bool = True) -> dict:
    """A physical location; in a notebook its region counts lines within the cell, and a logical location
    names the cell (`cell 3`, 1-based among all cells as Jupyter shows them)."""
    line, end_line = span.line, span.end_line
    cell = cell_position(entry.source, line)
    if cell is not None:
        line, end_line = cell[1], cell[1] + (span.end_line - span.line)
    region = {"startLine": line, "startColumn": span.col + 1}
    if end:
        region.update(endLine=end_line, endColumn=span.end_col + 1)
    location: dict = {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}
    if cell is not None:
        location["logicalLocations"] = [{"name": f"cell {cell[0]}", "fullyQualifiedName": f"{uri}:cell {cell[0]}",
                                         "kind": "notebookCell"}]
        location["properties"] = {"cell": cell[0], "joinedLine": span.line}
    return location


def _escape(value: str, property: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if property else value


def as_github(entries: list[FileFindings]) -> str:
    level = {"error": "error", "warning": "warning", "info": "notice"}
    lines = []
    for entry in entries:
        for f in entry.findings:
            props = (f"file={_escape(entry.path, True)},line={f.span.line},col={f.span.col + 1},endLine={f.span.end_line},"
                     f"endColumn={f.span.end_col + 1},title={_escape(f'{f.code} {f.name}', True)}")
            lines.append(f"::{level[f.severity.value]} {props}::{_escape(_message(entry.source, f.message))}")
    return "\n".join(lines)


def fixable_count(findings: list[Finding], unsafe: bool) -> int:
    return sum(1 for f in findings if any(unsafe or fix.safety is Safety.SAFE for fix in f.fixes))
