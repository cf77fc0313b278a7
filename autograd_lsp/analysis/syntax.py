"""Small syntax queries rules need around a node the walk recorded: its parent, its enclosing statement in a body."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # (imports.py, which model.py needs, uses this module)
    from .model import ModuleModel

_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


_BLOCKS: dict[type, tuple[str, ...]] = {}  # node type -> its fields of _BLOCK_FIELDS (most statements have none)


def statements(body: list[ast.stmt], kinds: tuple[type, ...]) -> Iterator[ast.stmt]:
    """Statements of `kinds` at any depth of statement nesting, in source order; expressions are never entered
    (they hold no statement), which makes this several times cheaper than ast.walk."""
    stack = list(reversed(body))
    blocks = _BLOCKS
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            yield node
            continue
        kind = type(node)
        fields = blocks.get(kind)
        if fields is None:
            fields = blocks[kind] = tuple(name for name in _BLOCK_FIELDS if name in kind._fields)
        for field in fields:
            children = getattr(node, field)
            if children:
                stack.extend(reversed(children))


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of attributes on a name; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def parents(model: ModuleModel, root: ast.AST) -> dict[int, ast.AST]:
    """id(child) -> parent for every node under `root` (cached per root; rules ask for a handful of statements)."""
    cache = model.__dict__.setdefault("_parent_maps", {})
    found = cache.get(id(root))
    if found is None:
        found = {}
        for node in ast.walk(root):
            for child in ast.iter_child_nodes(node):
                found[id(child)] = node
        cache[id(root)] = found
        model.__dict__.setdefault("_parent_roots", []).append(root)  # keep ids valid
    return found


def body_statement(body: list[ast.stmt], line: int) -> ast.stmt | None:
    """The statement of `body` (directly, not nested) whose lines contain `line`."""
    for stmt in body:
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        if start <= line <= (stmt.end_lineno or stmt.lineno):
            return stmt
    return None


def stores(node: ast.AST, name: str) -> bool:
    """`name` (a plain name) is assigned somewhere under `node`, nested functions and classes excluded."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Name) and item.id == name and not isinstance(item.ctx, ast.Load):
            return True
        for child in ast.iter_child_nodes(item):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)
    return False
