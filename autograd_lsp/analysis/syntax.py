"""Small syntax queries rules need around a node the walk recorded: its parent, its enclosing statement in a body."""
from __future__ import annotations

import ast

from .model import ModuleModel


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
