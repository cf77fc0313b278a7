"""Walks of a tree in ast's own orders without ast's generators, for the rules whose result follows that order.

Not a rule module (the registry loads only the catalog's names). ast.walk and ast.iter_child_nodes go through
two or three generators per node; these read each node type's fields once. Context markers (`ctx`: Load, Store,
Del) are left out: they are leaves, so the other nodes keep their order.
"""
from __future__ import annotations

import ast

from ..analysis.syntax import _CHILD_FIELDS, child_fields as _fields  # (fields that may hold nodes, per type)


def children(node: ast.AST) -> list[ast.AST]:
    """ast.iter_child_nodes(node), as a list."""
    found = []
    add, node_type = found.append, ast.AST
    fields = _CHILD_FIELDS.get(type(node))
    for name in fields if fields is not None else _fields(type(node)):
        value = getattr(node, name, None)
        if type(value) is list:
            for item in value:
                if isinstance(item, node_type):
                    add(item)
        elif isinstance(value, node_type):
            add(value)
    return found


def breadth_first(root: ast.AST) -> list[ast.AST]:
    """ast.walk(root)'s nodes, in its order (~2.5x cheaper)."""
    found = [root]
    add, node_type, fields_of = found.append, ast.AST, _CHILD_FIELDS
    # (children() inlined: a call and a list per node would cost most of what this saves over ast.walk)
    for node in found:  # (the list grows while it is read: a queue)
        fields = fields_of.get(type(node))
        for name in fields if fields is not None else _fields(type(node)):
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        add(item)
            elif isinstance(value, node_type):
                add(value)
    return found
