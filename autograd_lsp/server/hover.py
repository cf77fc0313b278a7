"""Hover: the findings under the cursor with their rule's documentation, and what the name under the cursor
holds (leaf, requires grad, composed from ...), read from the analysis model."""
from __future__ import annotations

import ast

from lsprotocol import types

from ..analysis.walker import label as _label
from ..lsp_convert import finding_key, from_position, span_contains, to_range
from ..rules import find_rule


async def hover(ls, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    unit = ls.unit_for(uri)
    if unit is None:
        return None
    analysis = await ls.current_analysis(unit)
    if analysis is None:
        return None
    snap = analysis.snapshot
    line = snap.joined_line(uri, params.position.line)
    if line is None:
        return None
    line_text = snap.source.line_text(line)
    _, col = from_position(params.position, line_text, ls.encoding)
    markdown = ls.markdown
    parts, hover_range = [], None
    shown = set()
    for finding in analysis.findings:
        if not span_contains(finding.span, line, col) or finding.code in shown:
            continue
        shown.add(finding.code)
        rule = find_rule(finding.code)
        head = f"**{finding.code} {finding.name}** ({finding.severity.value}): {finding.message}" if markdown else f"{finding.code} {finding.name} ({finding.severity.value}): {finding.message}"
        extra = ls.confirmed_text.get((analysis.content_hash, tuple(finding_key(finding))))
        parts.append(head + (f"\n\n{extra}" if extra else "") + (f"\n\n{rule.doc}" if rule else ""))
        placed = to_range(finding.span, snap.locate, ls.encoding)
        if placed is not None and placed[0] == uri:
            hover_range = placed[1]
    model = await ls.model_of(unit, analysis)
    if model is not None:
        byte_col = len(line_text[:col].encode("utf-8", "surrogatepass"))
        node = node_at(model.tree, line, byte_col)
        if node is not None:
            try:
                text = describe_provenance(model, node)
            except Exception:
                text = None
            if text:
                name = ast.unparse(node)
                parts.insert(0, f"`{name}`: {text}" if markdown else f"{name}: {text}")
                if hover_range is None:
                    span = model.span(node)
                    placed = to_range(span, snap.locate, ls.encoding)
                    hover_range = placed[1] if placed and placed[0] == uri else None
    if not parts:
        return None
    separator = "\n\n---\n\n" if markdown else "\n\n"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText,
                                                    value=separator.join(parts)), range=hover_range)


def node_at(tree: ast.AST, line: int, byte_col: int) -> ast.expr | None:
    """The innermost Name or `a.b` Attribute at (1-based line, UTF-8 byte column)."""
    best = None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        if node.lineno != line or (node.end_lineno or node.lineno) != line:
            continue
        start = node.col_offset
        end = node.end_col_offset or start
        if isinstance(node, ast.Attribute):
            # only the attribute part (`w` in `self.w`) selects the whole expression
            start = end - len(node.attr)
        if start <= byte_col <= end and (best is None or end - start < _width(best)):
            best = node
    return best


def _width(node: ast.AST) -> int:
    if isinstance(node, ast.Attribute):
        return len(node.attr)
    return (node.end_col_offset or node.col_offset) - node.col_offset


def describe_provenance(model, node: ast.expr) -> str | None:
    """One line about a tensor name: "leaf · requires grad · float · composed into `w` at line 12"."""
    prov = model.prov(node)
    if isinstance(getattr(node, "ctx", None), ast.Store):
        # an assignment target records the value it replaces; the hover wants the value it receives
        bound = next((event for event in model.events if getattr(event, "target", None) is node and hasattr(event, "alias_of")), None)
        prov = bound.prov if bound is not None else prov
    if prov is None:
        return None
    kind = getattr(prov.kind, "value", str(prov.kind))
    if kind != "tensor":
        parts = [kind]
        if prov.origin:
            parts.append(f"from `{prov.origin}`")
        if prov.line:
            parts.append(f"line {prov.line}")
        return " · ".join(parts)
    parts = []
    if prov.leaf is True:
        parts.append("leaf")
    elif prov.leaf is False:
        parts.append("non-leaf")
    if prov.requires_grad is True:
        parts.append("requires grad")
    elif prov.requires_grad is False:
        parts.append("no grad")
    if prov.dtype:
        parts.append(prov.dtype)
    if prov.no_grad:
        parts.append("made under no_grad")
    if prov.detached:
        parts.append("detached")
    if prov.composed_from:
        parts.append("composed from " + ", ".join(f"`{name}`" for name in sorted(prov.composed_from)))
    name = _label(node)
    if name and prov.is_trainable_leaf:
        into = _composed_into(model, name)
        if into:
            parts.append(into)
    if prov.origin:
        parts.append(f"made by `{prov.origin}`" + (f" at line {prov.line}" if prov.line else ""))
    return " · ".join(parts) if parts else None


def _composed_into(model, name: str) -> str | None:
    """`composed into `w` at line 12`: the first binding built from this leaf."""
    for event in model.events:
        prov = getattr(event, "prov", None)
        target = getattr(event, "name", None)
        if type(event).__name__ != "BindEvent" or prov is None or not target or target == name:
            continue
        if name in prov.composed_from:
            return f"composed into `{target}` at line {event.node.lineno}"
    return None
