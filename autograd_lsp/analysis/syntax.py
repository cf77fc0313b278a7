"""Small syntax queries rules need around a node the walk recorded: its parent, its enclosing statement in a body."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # (imports.py, which model.py needs, uses this module)
    from .model import ModuleModel

_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


_BLOCKS: dict[type, tuple[str, ...]] = {}  # node type -> its fields of _BLOCK_FIELDS (most statements have none)


def statements(body: list[ast.stmt], kinds: tuple[type, ...], enter=None) -> Iterator[ast.stmt]:
    """Statements of `kinds` at any depth of statement nesting, depth first: in source order within a block, a
    compound statement's later blocks before its first (an if's `else` before its body, a try's handlers, `finally`
    and `else` before its body; ImportTable's last-binding-wins reads this order). Expressions are never entered
    (they hold no statement), which makes this several times cheaper than ast.walk. `enter(first, last)`, when
    given, says whether a compound statement spanning those lines can hold one (its blocks are skipped if not)."""
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
        if fields and enter is not None and kind is not ast.match_case and not enter(node.lineno, node.end_lineno or node.lineno):
            continue
        for field in fields:
            children = getattr(node, field)
            if children:
                stack.extend(reversed(children))


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}  # node type -> the fields that may hold nodes (ctx never matters)


def nodes(root: ast.AST) -> Iterator[ast.AST]:
    """Every node under `root` (itself included) but the shared Load/Store/Del markers, in NO particular order:
    ~2x cheaper than ast.walk, whose breadth-first order goes through two generators per node. For sets and counts."""
    stack = [root]
    pop, push, extend = stack.pop, stack.append, stack.extend
    fields_of, node_type = _CHILD_FIELDS, ast.AST
    while stack:
        node = pop()
        yield node
        kind = type(node)
        fields = fields_of.get(kind)
        if fields is None:
            fields = _child_fields(kind)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(item for item in value if isinstance(item, node_type))
            elif isinstance(value, node_type):
                push(value)


def _child_fields(kind: type) -> tuple[str, ...]:
    found = _CHILD_FIELDS.get(kind)
    if found is None:
        found = _CHILD_FIELDS[kind] = tuple(name for name in kind._fields if name != "ctx")
    return found


def basic_index(index: ast.expr) -> bool:
    """`0`, `:`, `1:3`, `..., None`, `(0, -1)`: basic indexing, which returns a view; a tensor or a name may be a copy."""
    if isinstance(index, ast.Tuple):
        return all(basic_index(element) for element in index.elts)
    if isinstance(index, ast.Slice):
        return True
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    return isinstance(index, ast.Constant) and (index.value is None or index.value is Ellipsis or type(index.value) is int)


def head(node: ast.AST) -> ast.Name | None:
    """The name an attribute chain starts at (`a` of `a.b.c`); None when it starts at anything else."""
    while type(node) is ast.Attribute:
        node = node.value
    return node if type(node) is ast.Name else None


def kept_on(node: ast.AST, key: str, compute):
    """`compute(node)`, kept on the node: a file consulted by another one and then checked (or walked again by the
    server) shares its tree. Kept with the body it was computed from: the server's incremental parse copies a node
    on an edit's path (its __dict__ too) and gives the copy a new body list."""
    found = node.__dict__.get(key)
    if found is None or found[0] is not node.body:
        found = (node.body, compute(node))
        setattr(node, key, found)
    return found[1]


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
        for node in nodes(root):
            for name in _child_fields(type(node)):
                value = getattr(node, name, None)
                if type(value) is list:
                    for child in value:
                        if isinstance(child, ast.AST):
                            found[id(child)] = node
                elif isinstance(value, ast.AST):
                    found[id(value)] = node
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


def always_after(function: ast.AST, statement: ast.stmt, node: ast.AST) -> bool:
    """`node` runs whenever `statement` has run: it lies in a later statement of the block that holds `statement`
    (directly or nested). A statement inside an `if`, or a node in another branch, gives no such guarantee."""
    for owner in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(owner, field, None)
            if isinstance(block, list) and statement in block:
                return any(inner is node for later in block[block.index(statement) + 1:] for inner in ast.walk(later))
    return False


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
