"""Small syntax queries rules need around a node the walk recorded: its parent, its enclosing statement in a body."""
from __future__ import annotations

import ast
import bisect
import builtins
import re
import weakref
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
# fields that hold only plain values (names, numbers, flags): skipped unread by every explicit-stack walk
_PLAIN_FIELDS = frozenset({"id", "attr", "arg", "module", "level", "kind", "type_comment", "conversion", "is_async"})
_NAMED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)


def nodes(root: ast.AST) -> Iterator[ast.AST]:
    """Every node under `root` (itself included) but the shared Load/Store/Del markers, in NO particular order:
    ~3x cheaper than ast.walk, whose breadth-first order goes through two generators per node. For sets and counts."""
    stack = [root]
    pop, push = stack.pop, stack.append
    fields_of, node_type = _CHILD_FIELDS, ast.AST
    while stack:
        node = pop()
        yield node
        kind = type(node)
        fields = fields_of.get(kind)
        if fields is None:
            fields = child_fields(kind)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:  # (a loop, not extend(generator): a generator per list costs more than it walks)
                    if isinstance(item, node_type):
                        push(item)
            elif isinstance(value, node_type):
                push(value)


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes (for explicit-stack walks): not `ctx`, nor a plain-value field
    (`Name.id`, `Attribute.attr`, `Constant.value`, a def's `name`)."""
    found = _CHILD_FIELDS.get(kind)
    if found is None:
        found = _CHILD_FIELDS[kind] = tuple(
            name for name in kind._fields if name != "ctx" and name not in _PLAIN_FIELDS
            and not (name == "value" and kind is ast.Constant) and not (name == "name" and kind in _NAMED))
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


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers")


def kept_on(node: ast.AST, key: str, compute):
    """`compute(node)`, kept on the node: a file consulted by another one and then checked (or walked again by the
    server) shares its tree. Kept with the statement lists it was computed from: the server's incremental parse
    copies a node on an edit's path (its __dict__ too) and gives the copy a new list where the edit lies (a loop's
    `orelse` as well as its `body`)."""
    lists = tuple(getattr(node, name, None) for name in _STATEMENT_LISTS)
    found = node.__dict__.get(key)
    if found is None or any(a is not b for a, b in zip(found[0], lists)):
        found = (lists, compute(node))
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


def attribute_name(node: ast.expr) -> str | None:
    """The attribute a string names (`"conv"`), or the family an f-string names (`f"block{i}"`: `block{}`, a key no
    identifier can be): `self.add_module(f"block{i}", ...)` stores on it and `getattr(self, f"block{i}")` reads it."""
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value if node.value.isidentifier() else None
    if type(node) is not ast.JoinedStr:
        return None
    key = "".join(part.value if type(part) is ast.Constant else "{}" for part in node.values)
    constant = key.replace("{}", "")  # (a family needs a name of its own: `f"{i}"` would match any attribute)
    return key if constant and (constant[0].isalpha() or constant[0] == "_") and constant.replace("_", "a").isalnum() else None


def parents(model: ModuleModel, root: ast.AST) -> dict[int, ast.AST]:
    """id(child) -> parent for every node under `root` (cached per root; rules ask for a handful of statements)."""
    cache = model.__dict__.setdefault("_parent_maps", {})
    found = cache.get(id(root))
    if found is None:
        found = cache[id(root)] = _parent_map(root)
        model.__dict__.setdefault("_parent_roots", []).append(root)  # keep ids valid
    return found


def _parent_map(root: ast.AST, root_as=None) -> dict[int, ast.AST]:
    """id(node) -> its parent, for every node under `root`; `root` itself is given as `root_as` when that is not None."""
    found = {}
    for node in nodes(root):
        parent = node if root_as is None or node is not root else root_as
        for name in child_fields(type(node)):
            value = getattr(node, name, None)
            if type(value) is list:
                for child in value:
                    if isinstance(child, ast.AST):
                        found[id(child)] = parent
            elif isinstance(value, ast.AST):
                found[id(value)] = parent
    return found


_ROOT = object()  # the root in a parent map kept on the root itself: holding the root there would be a reference cycle,
# which keeps the tree alive after its analysis past reference counting (the CLI runs without the cyclic collector)


def body_statement(body: list[ast.stmt], line: int) -> ast.stmt | None:
    """The statement of `body` (directly, not nested) whose lines contain `line`."""
    for stmt in body:
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        if start <= line <= (stmt.end_lineno or stmt.lineno):
            return stmt
    return None


def always_after(function: ast.AST, statement: ast.stmt, node: ast.AST) -> bool:
    """`node` runs whenever `statement` has run: it lies in a later statement of the block that holds `statement`
    (directly or nested). A statement inside an `if`, or a node in another branch, gives no such guarantee.
    Answered by climbing from `node` through the function's parent map (kept on its tree: rules ask per pair of events)."""
    parent_of = kept_on(function, "_parent_map", lambda root: _parent_map(root, root_as=_ROOT))
    owner = parent_of.get(id(statement))
    if owner is None:
        return False
    if owner is _ROOT:
        owner = function
    for field in ("body", "orelse", "finalbody"):
        block = getattr(owner, field, None)
        if type(block) is list:
            for index, item in enumerate(block):
                if item is statement:
                    later = {id(stmt) for stmt in block[index + 1:]}
                    while node is not None:
                        if id(node) in later:
                            return True
                        node = parent_of.get(id(node))
                    return False
    return False  # (a statement of an `except` handler's list is its handler's body: found above)


def none_default_parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set:
    """The parameters whose default is `None` (`def run(window=None)`)."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults), *zip(args.kwonlyargs, args.kw_defaults)]
    return {arg.arg for arg, default in pairs if type(default) is ast.Constant and default.value is None}


def bound_names(node: ast.AST) -> set:
    """The names an assignment binds: `a, (b, *c) = ...` binds a, b, c; `x.y = ...` and `x[i] = ...` bind none (an
    Assign, AugAssign, AnnAssign, For or NamedExpr)."""
    targets = list(node.targets) if isinstance(node, ast.Assign) else [node.target]  # a copy: the tree stays whole
    names = set()
    while targets:
        target = targets.pop()
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
    return names


def super_call(node: ast.AST, method: str | None = None) -> bool:
    """`node` is `super().<method>(...)`; with no method, the bare `super()` call itself."""
    if type(node) is not ast.Call:
        return False
    if method is None:
        return type(node.func) is ast.Name and node.func.id == "super"
    return type(node.func) is ast.Attribute and node.func.attr == method and super_call(node.func.value)


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


def exclusive(parent_of: dict, a: ast.AST, b: ast.AST) -> bool:
    """`a` and `b` never both run in one pass through their common block: they sit in different branches of one `if`
    (or `try`/`except`), or in the bodies of two `if` statements of that block whose tests contradict on a plain name
    nothing rebinds between them (`if ready and fresh:` ... `if ready and not fresh:`). `parent_of`: parents()."""
    path_a, path_b = _path(parent_of, a), _path(parent_of, b)
    ids_b = {id(node): index for index, node in enumerate(path_b)}
    for index, (child, ancestor) in enumerate(zip(path_a, path_a[1:])):
        if id(ancestor) not in ids_b:
            continue
        side_b = path_b[ids_b[id(ancestor)] - 1] if ids_b[id(ancestor)] > 0 else None
        if isinstance(ancestor, (ast.If, ast.Try, ast.IfExp)) and side_b is not None:
            if _branch(ancestor, child) != _branch(ancestor, side_b):
                return True
        # the paths part in a block: the two statements they went through, and the `if`s each went into below them
        ifs_a, ifs_b = _conditions(path_a[:index + 1]), _conditions(path_b[:ids_b[id(ancestor)]])
        return any(_contradict(test_a, test_b) and not _rebound_between(ancestor, if_a, if_b, test_a, test_b)
                   for if_a, test_a in ifs_a for if_b, test_b in ifs_b if if_a is not if_b)
    return False


def eval_only(parent_of: dict, node: ast.AST) -> bool:
    """`node` runs only when its module is in eval mode: under `if not self.training:` or the else of
    `if self.training:` (nothing backpropagates through what that branch computes). `parent_of`: parents()."""
    return flag_false(parent_of, node, "self.training")


def flag_false(parent_of: dict, node: ast.AST, flag: str) -> bool:
    """`node` runs only where the dotted name `flag` is false: under `if not <flag>:` or in the else of `if <flag>:`
    (`p.requires_grad`, `self.training`). `parent_of`: parents()."""
    path = _path(parent_of, node)
    for child, owner in zip(path, path[1:]):
        if isinstance(owner, (ast.If, ast.IfExp)):
            test, negated = owner.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, True
            if dotted(test) == flag and _branch(owner, child) == ("body" if negated else "orelse"):
                return True
    return False


def _path(parent_of: dict, node: ast.AST) -> list[ast.AST]:
    path = []
    while node is not None:
        path.append(node)
        node = parent_of.get(id(node))
    return path


def _branch(node, child) -> str:
    for name in ("body", "orelse", "handlers", "finalbody"):
        value = getattr(node, name, None)
        if value is child or isinstance(value, list) and any(item is child for item in value):
            return name
    return "test"


def _conditions(path: list[ast.AST]) -> list[tuple[ast.If, dict]]:
    """The `if`s a node sits under (from the innermost up the given path), each with what its branch requires of plain
    names: {name: True/False} from the conjuncts of its test (the body), or its single negated literal (the else)."""
    found = []
    for child, owner in zip(path, path[1:]):
        if isinstance(owner, ast.If):
            literals = _literals(owner.test)
            branch = _branch(owner, child)
            if branch == "body" and literals:
                found.append((owner, literals))
            elif branch == "orelse" and len(literals) == 1:
                found.append((owner, {name: not value for name, value in literals.items()}))
    return found


def _literals(test: ast.expr) -> dict[str, bool]:
    """`a and not b and c is False` -> {a: True, b: False, c: False}; conjuncts of other shapes are left out."""
    conjuncts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    out: dict[str, bool] = {}
    for conjunct in conjuncts:
        value = True
        if isinstance(conjunct, ast.UnaryOp) and isinstance(conjunct.op, ast.Not):
            conjunct, value = conjunct.operand, False
        if isinstance(conjunct, ast.Compare) and len(conjunct.ops) == 1 and isinstance(conjunct.ops[0], (ast.Is, ast.Eq)) \
                and isinstance(conjunct.comparators[0], ast.Constant) and isinstance(conjunct.comparators[0].value, bool):
            value = value == conjunct.comparators[0].value
            conjunct = conjunct.left
        if isinstance(conjunct, ast.Name):
            if out.get(conjunct.id, value) != value:
                return {}  # `a and not a`: never true; nothing to compare with
            out[conjunct.id] = value
    return out


def _contradict(a: dict, b: dict) -> bool:
    return any(name in b and b[name] != value for name, value in a.items())


def _rebound_between(block_owner: ast.AST, if_a: ast.If, if_b: ast.If, test_a: dict, test_b: dict) -> bool:
    """Every contradicting name is assigned in the common block somewhere from the first `if` to the end of the second
    (either body included): then the two tests may read different values in one pass."""
    names = [name for name, value in test_a.items() if name in test_b and test_b[name] != value]
    start = min(if_a.lineno, if_b.lineno)
    end = max(if_a.end_lineno or if_a.lineno, if_b.end_lineno or if_b.lineno)
    span = [node for node in ast.iter_child_nodes(block_owner) if isinstance(node, ast.stmt)
            and node.lineno <= end and (node.end_lineno or node.lineno) >= start]
    return all(any(stores(node, name) for node in span) for name in names)


def guarded_appends(function: ast.AST, name: str, built: ast.Call) -> list | None:
    """`layers = []`, then `layers.append(layer)` statements, some under `if` tests of a parameter (`if pre_act:`,
    `if not flat:`, `if norm is not None:`), then `nn.Sequential(*layers)` (`built`): [(layer, [(parameter, test)])] in
    order, `test` giving the branch's truth for a parameter's value. None when the list is used any other way, an
    append sits in a loop or a `try`, or a test is not of a parameter."""
    params = {arg.arg for arg in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    uses = [node for node in nodes(function) if type(node) is ast.Name and node.id == name]
    scan = _AppendScan(name, built, params, {id(node) for node in uses})
    if not scan.visit(function.body, []):
        return None
    starred = built.args[0].value if built.args and isinstance(built.args[0], ast.Starred) else None
    if any(id(node) not in scan.handled and node is not starred for node in uses):
        return None
    return scan.found


class _AppendScan:
    """guarded_appends' walk over the statements before the container is built (a class, not a nested function calling
    itself: that is a reference cycle keeping the nodes it holds alive after the analysis)."""

    def __init__(self, name: str, built: ast.Call, params: set, wanted: set):
        self.name, self.built, self.params, self.wanted = name, built, params, wanted
        self.found: list = []
        self.handled: set = set()

    def visit(self, body, guards) -> bool:
        name, built, params, wanted, found, handled = self.name, self.built, self.params, self.wanted, self.found, self.handled
        for stmt in body:
            if stmt.lineno > built.lineno:
                return True
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and stmt.targets[0].id == name:
                if not (isinstance(stmt.value, ast.List) and not stmt.value.elts) or guards:
                    return False
                found.clear()
                handled.add(id(stmt.targets[0]))
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
                    and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == name:
                call = stmt.value
                if call.func.attr != "append" or len(call.args) != 1 or call.keywords:
                    return False
                found.append((call.args[0], list(guards)))
                handled.add(id(call.func.value))
            elif isinstance(stmt, ast.If):
                test = _parameter_test(stmt.test, params)
                if test is None:
                    if any(id(n) in wanted for n in nodes(stmt)):
                        return False
                    continue
                parameter, truth = test
                if not self.visit(stmt.body, guards + [(parameter, truth)]):
                    return False
                if not self.visit(stmt.orelse, guards + [(parameter, lambda value, truth=truth: _negate(truth(value)))]):
                    return False
            elif any(id(n) in wanted for n in nodes(stmt)):
                if isinstance(stmt, ast.Assign) and stmt.value is built or built in list(nodes(stmt)):
                    continue
                return False  # (a loop, a `try`, another use of the list)
        return True


def _negate(value):
    return None if value is None else not value


def test_truth(test: ast.expr, values: dict):
    """Whether an `if` test of parameters (`p`, `not p`, `p is None`, `p is not None`, an `and`/`or` of such and other
    tests) holds, the parameters in `values` holding those values; None where it is not known."""
    if isinstance(test, ast.BoolOp):
        found = [test_truth(value, values) for value in test.values]
        decisive = isinstance(test.op, ast.Or)  # (`or`: one true operand decides; `and`: one false one)
        if decisive in found:
            return decisive
        return None if None in found else not decisive
    known = _parameter_test(test, set(values))
    return known[1](values[known[0]]) if known is not None else None


def _parameter_test(test: ast.expr, params: set):
    """`p`, `not p`, `p is None`, `p is not None` of a parameter `p`: (p, truth of the test for a value)."""
    if isinstance(test, ast.Name) and test.id in params:
        return test.id, lambda value: bool(value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _parameter_test(test.operand, params)
        return (inner[0], lambda value, truth=inner[1]: _negate(truth(value))) if inner is not None else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) and test.left.id in params \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None \
            and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        negated = isinstance(test.ops[0], ast.IsNot)
        return test.left.id, lambda value: (value is None) != negated
    return None


# list / nn.Sequential methods that move, drop or replace items (append and extend only add after the last)
_REORDERING = frozenset({"insert", "pop", "remove", "clear", "reverse", "sort"})


def reordered_labels(root: ast.AST) -> set[str]:
    """The names and `self.x` attributes under `root` whose items are moved, dropped or replaced: `layers.pop()`,
    `seq.insert(1, m)`, `layers[-1] = m`, `del self[-1]` (a walk that does not apply these no longer knows the order);
    and the names whose appends the walk may not have seen in order: handed to a call that may add to them
    (`add_block(layers)`; `*layers` and builtins like `len(layers)` do not), bound to another name (`seq = layers`),
    changed by a nested def or lambda, or changed in a loop that a `continue` or `break` may cut short."""
    found = set()
    for node in nodes(root):
        kind = type(node)
        if kind is ast.Call:
            if isinstance(node.func, ast.Attribute) and node.func.attr in _REORDERING:
                _add_label(found, node.func.value)
            if not (type(node.func) is ast.Name and node.func.id in _BUILTIN_NAMES):
                found.update(arg.id for arg in [*node.args, *(k.value for k in node.keywords)] if type(arg) is ast.Name)
        elif kind is ast.Subscript and isinstance(node.ctx, (ast.Store, ast.Del)):
            _add_label(found, node.value)
        elif kind is ast.Assign and type(node.value) is ast.Name:
            found.add(node.value.id)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda) and node is not root and type(root) is not ast.ClassDef \
                or kind in (ast.For, ast.AsyncFor, ast.While) and any(type(n) in (ast.Continue, ast.Break) for n in nodes(node)):
            found.update(n.value.id for n in nodes(node) if type(n) is ast.Attribute and type(n.value) is ast.Name)
    return found


def item_changes(tree: ast.AST, follow: bool = True, reads_only=None) -> dict[str, frozenset[str]]:
    """The last part of each name or attribute whose items something under `tree` changes -> how: the methods called on
    it that add, move or drop items (`net.append(...)` -> {"net": {"append"}}), "[]" for a store or delete by item
    (`self.body[-1] = m` -> {"body": {"[]"}}). An argument of a call takes what a function of `tree` by that name does
    to the parameter it binds (`add_head(self.body)` with `def add_head(m): m.append(...)` -> {"body": {"append"}}), or
    "passed" when the callee is not defined under `tree` or `follow` is off (what it does is not read; builtins change no
    items, nor a callee `reads_only(func)` says only reads: a torch.nn constructor wrapping it, `copy.deepcopy`, a logger).
    One pass, then one per function an argument is given to (not following its own calls). A walk asks a module name
    by name: ItemChanges."""
    scan = _ChangeScan(reads_only)
    for node in nodes(tree):
        scan.note(node)
    defs = _functions_by_name(tree) if follow else {}
    read: dict = {}  # (each function's own changes, scanned once however many calls give it one)
    found = scan.found
    for call in scan.passed:
        for name, hows in _passed_changes(call, defs, reads_only, read):
            found.setdefault(name, set()).update(hows)
    for alias, value in scan.aliases:  # (one step: what is done to the alias is done to the container it names)
        alias_name, name = _last_part(alias), _last_part(value)
        if alias_name in found and name is not None:
            found.setdefault(name, set()).update(found[alias_name])
    return {name: frozenset(hows) for name, hows in found.items()}


class ItemChanges:
    """item_changes of a module, asked name by name (`get(name)`: how its items change, None when nothing changes them)
    for the few containers a walk reads by position: each answer reads only the statements on lines where that name
    (or a name bound to it) is written, not the whole tree (a whole-module scan cost ~6% of `check` on timm). Through
    names bound to it, any number of steps (`a = self.head; b = a; b.append(m)` changes `head`)."""

    def __init__(self, tree: ast.Module, text: str, reads_only=None, imported=None):
        # (kept on its tree: a strong reference back would be a cycle keeping every tree asked alive after its analysis,
        # until a full collection, which the CLI runs only after millions of objects: +106 MB on the benchmark corpus)
        self._tree, self.text, self.reads_only = weakref.ref(tree), text, reads_only
        self.imported = imported  # (a call's callee -> the defs of another module it runs, None when not known)
        self._known: dict[str, frozenset | None] = {}
        self._grown: dict[str, list] = {}  # name -> the calls that add layers at its end (`append`, `add_module`)
        self._defs: dict | None = None
        self._read: dict = {}

    def get(self, name: str, default=None):
        if not name:
            return default  # (a container with no name: nothing can change it by name)
        if name not in self._known:
            self._known[name] = self._changes(name)
        found = self._known[name]
        return default if found is None else found

    def grown_by(self, name: str) -> list[ast.Call]:
        """The calls that append a layer to `name` or add one at its end (`append`, `add_module`, `register_module`),
        under any name bound to it."""
        self.get(name)
        return self._grown.get(name, [])

    def _changes(self, name: str) -> frozenset | None:
        hows: set = set()
        bound, todo = {name}, [name]
        while todo:
            current = todo.pop()
            scan = _ChangeScan(self.reads_only)
            for node in self._mentioning(current):
                scan.note(node)
            hows.update(scan.found.get(current, ()))
            self._grown.setdefault(name, []).extend(scan.appends.get(current, ()))
            for call in scan.passed:
                if self._defs is None:
                    self._defs = _functions_by_name(self._tree())
                for passed, passed_hows in _passed_changes(call, self._defs, self.reads_only, self._read, self.imported):
                    if passed == current:
                        hows.update(passed_hows)
            for alias, value in scan.aliases:
                alias_name = _last_part(alias)
                if alias_name is not None and alias_name not in bound and _last_part(value) == current:
                    bound.add(alias_name)
                    todo.append(alias_name)
        return frozenset(hows) if hows else None

    def _mentioning(self, name: str) -> Iterator[ast.AST]:
        """The nodes whose lines hold `name` as a word, and the nodes above them (nodes() order): every node that can
        change `name`'s items has it in its text."""
        lines = _lines_holding(self.text, name)
        if not lines:
            return
        # (nodes()'s loop with a line filter: one loop with a per-node test would slow every caller of that hot helper)
        stack = [self._tree()]
        pop, extend, first_at, fields_of = stack.pop, stack.extend, bisect.bisect_left, _CHILD_FIELDS
        node_type, count = ast.AST, len(lines)
        while stack:
            node = pop()
            first = getattr(node, "lineno", None)
            if first is not None:
                if type(node) in _DEFINITIONS and node.decorator_list:
                    first = node.decorator_list[0].lineno  # (its lineno is the `def` line, below its decorators)
                index = first_at(lines, first)
                if index == count or lines[index] > (node.end_lineno or first):
                    continue
            yield node
            kind = type(node)
            fields = fields_of.get(kind)
            if fields is None:
                fields = child_fields(kind)
            for field in fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, node_type):
                            stack.append(item)
                elif isinstance(value, node_type):
                    stack.append(value)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _lines_holding(text: str, word: str) -> list[int]:
    """The lines (1-based, as ast counts them: at each \\n, \\r\\n or lone \\r) where `word` is written as a word."""
    lines, line, at = [], 1, 0
    count = text.count
    for match in re.finditer(rf"{re.escape(word)}(?!\w)", text):  # (a lookbehind first would cost the literal search)
        start = match.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue  # (the end of a longer name)
        line += count("\n", at, start) + count("\r", at, start) - count("\r\n", at, start)
        at = start
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


class _ChangeScan:
    """What item_changes reads of each node: changes by item, calls that give something away, names bound to others."""

    def __init__(self, reads_only):
        self.reads_only = reads_only
        self.found: dict[str, set] = {}
        self.passed: list[ast.Call] = []
        self.aliases: list[tuple] = []
        self.appends: dict[str, list] = {}  # name -> its `append`/`add_module`/`register_module` calls

    def note(self, node: ast.AST) -> None:
        kind = type(node)
        if kind is ast.Call:
            if (node.args or node.keywords) and not (type(node.func) is ast.Name and node.func.id in _BUILTIN_NAMES) \
                    and not (self.reads_only is not None and self.reads_only(node.func)):
                self.passed.append(node)
            if type(node.func) is ast.Attribute and node.func.attr in _ITEM_METHODS:
                target, how = node.func.value, node.func.attr
            elif type(node.func) is ast.Name and node.func.id in ("setattr", "delattr") and node.args:
                target, how = node.args[0], "[]"  # (`setattr(self.pi, "1", nn.Identity())`: a layer replaced by name)
            else:
                return
        elif kind is ast.Subscript and type(node.ctx) in (ast.Store, ast.Del):
            target, how = node.value, "[]"
        elif kind is ast.AugAssign:
            target, how = node.target, "[]"  # (`self.layers += nn.Sequential(...)`: layers added at the end)
        elif kind is ast.Assign and type(node.value) in (ast.Name, ast.Attribute):
            self.aliases.extend((target, node.value) for target in node.targets)  # (`layers = self.head`, then `layers.append`)
            return
        elif kind is ast.For or kind is ast.AsyncFor:
            # (`for head in (self.policy, self.value): head.append(m)`: each name the loop binds stands for each container
            # written in a display it runs over, `zip((self.a, self.b), sizes)` too)
            listed = [element for sub in nodes(node.iter) if type(sub) in (ast.Tuple, ast.List, ast.Set)
                      for element in sub.elts if type(element) in (ast.Name, ast.Attribute)]
            if listed:
                self.aliases.extend((bound, element) for bound in nodes(node.target) if type(bound) is ast.Name for element in listed)
            return
        else:
            return
        name = _container_part(target)
        if name is not None:
            self.found.setdefault(name, set()).add(how)
            if how in ADDED_AT_END and _last_part(target) == name:  # (not `self.stages[-1].append(m)`: inside a layer)
                self.appends.setdefault(name, []).append(node)


def replaces_children(tree: ast.AST) -> bool:
    """A function here sets attributes by computed names to new objects (`setattr(parent, name, nn.Hardsigmoid())` in a
    walk over `named_modules()`, as activation swaps and quantization preparation do) and is called here: after that
    call, which layer a module instance holds is no longer what its constructor built. (`setattr(self, key, value)` of
    a config's keywords sets no new object.)"""
    calls = [node for node in nodes(tree) if type(node) is ast.Call]
    setters = [call for call in calls if type(call.func) is ast.Name and call.func.id == "setattr" and len(call.args) == 3
               and type(call.args[1]) is not ast.Constant and type(call.args[2]) is ast.Call]
    if not setters:
        return False
    swapping = {name for name, defs in _functions_by_name(tree).items()
                if any(function.lineno <= setter.lineno <= function.end_lineno for function in defs for setter in setters)}
    return any(_last_part(call.func) in swapping for call in calls)


def _functions_by_name(tree: ast.AST) -> dict[str, list]:
    """Every function defined under `tree`, at any depth (methods, nested functions), by name."""
    found: dict[str, list] = {}
    stack = [tree]
    while stack:
        for node in statements(stack.pop().body, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if type(node) is not ast.ClassDef:
                found.setdefault(node.name, []).append(node)
            stack.append(node)
    return found


def _passed_changes(call: ast.Call, defs: dict, reads_only, read: dict, imported=None):
    """(name, hows) for each argument of a call that gives something away: what the callee of that name under the tree
    (or, `imported`, the def of another module the call runs) does to the parameter it binds, "passed" when there is
    none."""
    callee = call.func.id if type(call.func) is ast.Name else call.func.attr if type(call.func) is ast.Attribute else None
    functions = defs.get(callee) if callee in defs else imported(call.func) if imported is not None else None
    for position, arg in _call_arguments(call):
        name = _last_part(arg)
        if name is None:
            continue
        hows = _changes_to_parameter(functions, position, type(call.func) is ast.Attribute, reads_only, read) if functions else {"passed"}
        if hows:
            yield name, hows


def _last_part(target: ast.AST) -> str | None:
    return target.id if type(target) is ast.Name else target.attr if type(target) is ast.Attribute else None


def _container_part(target: ast.AST) -> str | None:
    """The container a change lands in: `self.stages[-1].append(m)` and `self.body[1][-1] = m` change `stages` and
    `body` (a layer of theirs), `seq._modules[k] = m` changes `seq`."""
    while type(target) is ast.Subscript:
        target = target.value
    if type(target) is ast.Attribute and target.attr == "_modules":
        target = target.value
    return _last_part(target)


def _call_arguments(call: ast.Call):
    """(position or keyword, argument) of a call; a starred argument's position is not known (None)."""
    starred = False
    for position, arg in enumerate(call.args):
        starred = starred or type(arg) is ast.Starred
        yield (None if starred else position), (arg.value if type(arg) is ast.Starred else arg)
    for keyword in call.keywords:
        yield keyword.arg, keyword.value


def _changes_to_parameter(functions: list, position, method: bool, reads_only, read: dict) -> set:
    """What the functions of a name do to the items of the parameter an argument at `position` (an index, a keyword, None:
    not known) binds; "passed" where that parameter is not known (a starred argument, *args)."""
    hows: set = set()
    for function in functions:
        params = [*function.args.posonlyargs, *function.args.args]
        if method and params and params[0].arg in ("self", "cls"):
            params = params[1:]  # (`self.grow(self.body)`, `obj.grow(x)`: the receiver is the first parameter)
        if isinstance(position, int):
            param = params[position].arg if position < len(params) else None  # (into *args: not followed)
        elif isinstance(position, str):
            param = position if any(p.arg == position for p in [*params, *function.args.kwonlyargs]) else None
        else:
            param = None
        if param is None:
            hows.add("passed")
            continue
        if id(function) not in read:
            read[id(function)] = item_changes(function, follow=False, reads_only=reads_only)
        hows.update(read[id(function)].get(param, ()))
    return hows


ADDED_AT_END = frozenset({"append", "add_module", "register_module"})  # (item methods that add a layer at the end)
_ITEM_METHODS = frozenset({"append", "extend", "insert", "add_module", "register_module", "pop", "remove", "clear",
                           "__setitem__", "__delitem__", "update", "setdefault", "popitem"})


def _add_label(found: set, target: ast.AST) -> None:
    if isinstance(target, ast.Name):
        found.add(target.id)
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        found.add(f"{target.value.id}.{target.attr}")


_BUILTIN_NAMES = frozenset(dir(builtins))  # (`len(layers)`, `print(layers)`: they add nothing to a list)
