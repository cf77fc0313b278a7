"""Building blocks for fixes: statement text, indentation, inserting and wrapping lines."""
from __future__ import annotations

import ast
import textwrap

from ..analysis.model import ModuleModel
from ..findings import Edit, Span


def statement_text(model: ModuleModel, stmt: ast.stmt) -> str:
    """The statement's full source lines, dedented (comments and continuation lines included)."""
    lines = model.source.lines[stmt.lineno - 1 : (stmt.end_lineno or stmt.lineno)]
    return textwrap.dedent("\n".join(lines))


def indent_block(text: str, indent: str) -> str:
    return "\n".join(indent + line if line.strip() else line for line in text.split("\n"))


def insert_before(model: ModuleModel, stmt: ast.stmt, text: str) -> Edit:
    """Insert `text` (one or more lines, unindented) on its own lines before `stmt`, at its indentation."""
    indent = model.line_indent(stmt.lineno)
    return Edit(Span(stmt.lineno, 0, stmt.lineno, 0), indent_block(text, indent) + "\n")


def own_line(model: ModuleModel, stmt: ast.stmt) -> bool:
    """True when `stmt` alone occupies its lines (no `a; b`), so line-based edits are exact."""
    first = model.source.line_text(stmt.lineno)
    last = model.source.line_text(stmt.end_lineno or stmt.lineno)
    before = first[: model.char_col(stmt.lineno, stmt.col_offset)]
    after = last[model.char_col(stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0):]
    return not before.strip() and (not after.strip() or after.strip().startswith("#"))


def wrap_in_no_grad(model: ModuleModel, stmt: ast.stmt) -> list[Edit] | None:
    """Edits that put `stmt` inside `with torch.no_grad():`; None when torch has no local name or stmt shares its line."""
    torch = model.imports.torch_alias
    if torch is None or not own_line(model, stmt):
        return None
    indent = model.line_indent(stmt.lineno)
    body = indent_block(statement_text(model, stmt), indent + "    ")
    end_line = stmt.end_lineno or stmt.lineno
    return [Edit(Span(stmt.lineno, 0, end_line, len(model.source.line_text(end_line))), f"{indent}with {torch}.no_grad():\n{body}")]


