"""Build the reproducer: the smallest program that runs the flagged code from the user's own source.

Three shapes, chosen by where the flagged line is:

* **script** — the line is module-level code, or inside a function/class that module-level code
  (the ``if __name__ == "__main__":`` block included) reaches: the whole module runs, loops bounded.
* **function** / **method** — the line is in a function or method nothing at module level calls (a
  library-like file): the module is cut down to its imports, definitions and the module-level
  assignments they need (a backward slice over names), and a call with synthesized arguments is
  appended (``synth.py``); a method gets an instance of its class first.
* **class** — the line is in a class body: the sliced module defines the class.

Everywhere: training loops (``while True``, a ``for`` whose body calls ``backward``/``step``/
``zero_grad``, ``for batch in loader``, ``range(big)``) are bounded to ``LOOP_LIMIT`` iterations;
the flagged statement is wrapped in ``__agl__.before()``/``__agl__.after()`` (reach marker and the
rule's probe). The program is produced with ``ast.unparse`` and every line is mapped back to the
user's line (``line_map``), so the harness can report where things happened in the user's file.

Pure stdlib: nothing here imports torch.
"""
from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field

from ..findings import Finding
from ..source import Source
from . import synth

LOOP_LIMIT = 3
BIG_RANGE = 1000

_TRAINING_CALLS = {"backward", "step", "zero_grad"}
_DATA_NAME = re.compile(r"(loader|dataset|batches|data_?iter|dl$|^dl_|_dl$|train_data|val_data|test_data)", re.I)


@dataclass
class Reproducer:
    code: str  # the program that runs (what --show prints)
    line_map: dict[int, int]  # reproducer line -> user line; 0 for synthesized code
    mode: str  # script | function | method | class
    flagged: tuple[int, int]  # first and last user line of the flagged statement
    probe: dict | None = None  # the rule's probe configuration for the harness
    entry: str | None = None  # what the reproducer calls, e.g. "train(...)" or "Net().forward(...)"
    notes: list[str] = field(default_factory=list)  # what was rewritten, for --show and the summary
    reach_check: bool = True  # "flagged statement never ran" makes the run inconclusive


@dataclass
class Inconclusive:
    reason: str

    def __bool__(self) -> bool:  # so `if build_reproducer(...)` reads naturally
        return False


# --------------------------------------------------------------------------------------------
# Locating the flagged statement
# --------------------------------------------------------------------------------------------
_CONTAINERS = ("body", "orelse", "finalbody", "handlers", "cases")


def _span(node: ast.AST) -> tuple[int, int]:
    if isinstance(node, ast.match_case):
        start = node.pattern.lineno
        end = node.body[-1].end_lineno if node.body else start
        return start, end
    start = node.lineno
    for decorator in getattr(node, "decorator_list", ()):
        start = min(start, decorator.lineno)
    return start, node.end_lineno or node.lineno


def locate(tree: ast.Module, line: int) -> list[tuple[str, int]]:
    """Path (field, index)* from the module to the innermost node containing `line`."""
    path: list[tuple[str, int]] = []
    node: ast.AST = tree
    while True:
        for name in _CONTAINERS:
            items = getattr(node, name, None)
            if not isinstance(items, list):
                continue
            hit = next((i for i, child in enumerate(items) if isinstance(child, ast.AST) and _span(child)[0] <= line <= _span(child)[1]), None)
            if hit is not None:
                path.append((name, hit))
                node = items[hit]
                break
        else:
            return path


def _nodes_on(tree: ast.AST, path: list[tuple[str, int]]) -> list[ast.AST]:
    nodes, node = [], tree
    for name, index in path:
        node = getattr(node, name)[index]
        nodes.append(node)
    return nodes


def _stmt_path(tree: ast.Module, line: int) -> list[tuple[str, int]]:
    path = locate(tree, line)
    nodes = _nodes_on(tree, path)
    while path and not isinstance(nodes[-1], ast.stmt):  # an except/case line: its statement
        path, nodes = path[:-1], nodes[:-1]
    return path


# --------------------------------------------------------------------------------------------
# Names, reachability, slicing
# --------------------------------------------------------------------------------------------
def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _base_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _defines(stmt: ast.stmt) -> set[str]:
    """Names a module-level statement binds or mutates (targets, `x.attr = `, `x.method(...)`)."""
    names: set[str] = set()
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
            base = _base_name(node)
            if base:
                names.add(base)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = _base_name(node.func.value)
            if base:
                names.add(base)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
    return names


def _is_main_guard(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    parts = [stmt.test.left, *stmt.test.comparators]
    return any(isinstance(p, ast.Name) and p.id == "__name__" for p in parts) and any(
        isinstance(p, ast.Constant) and p.value == "__main__" for p in parts
    )


def _top_defs(tree: ast.Module) -> dict[str, ast.AST]:
    defs: dict[str, ast.AST] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[stmt.name] = stmt
    return defs


def reachable_defs(tree: ast.Module) -> set[str]:
    """Top-level functions/classes that module-level code (main block included) may call."""
    defs = _top_defs(tree)
    roots: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for part in [*stmt.decorator_list, *getattr(stmt, "bases", ()), *[k.value for k in getattr(stmt, "keywords", ())]]:
                roots |= _loads(part)
        else:
            roots |= _loads(stmt)
    seen: set[str] = set()
    stack = [name for name in roots if name in defs]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(n for n in _loads(defs[name]) if n in defs and n not in seen)
    return seen


def _uncalled_method(tree: ast.Module, enclosing: list[ast.AST]) -> bool:
    """A method (not forward/__init__/a dunder) whose name no attribute access in the file mentions:
    running the module would define and instantiate the class but never call it."""
    if not (isinstance(enclosing[0], ast.ClassDef) and len(enclosing) >= 2 and isinstance(enclosing[1], ast.FunctionDef)):
        return False
    name = enclosing[1].name
    if name in {"forward", "__call__"} or (name.startswith("__") and name.endswith("__")):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == name:
            return False
        if isinstance(node, ast.Constant) and node.value == name:  # getattr(obj, "name"), hooks by name
            return False
    return True


_SETTINGS_CALLS = {"manual_seed", "seed", "set_default_dtype", "set_default_tensor_type", "set_grad_enabled",
                   "use_deterministic_algorithms", "set_printoptions", "filterwarnings", "set_num_threads"}


def _is_setting_call(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr in _SETTINGS_CALLS
    )


def slice_module(body: list[ast.stmt], needed: set[str]) -> list[ast.stmt]:
    """Imports, definitions, settings calls, and the module-level statements that bind or mutate
    names the kept code needs (transitively); the main block and other module-level code go."""
    keep = [False] * len(body)
    needed = set(needed)
    for i, stmt in enumerate(body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or _is_setting_call(stmt):
            keep[i] = True
            needed |= _loads(stmt)
    changed = True
    while changed:
        changed = False
        for i, stmt in enumerate(body):
            if keep[i] or _is_main_guard(stmt):
                continue
            if _defines(stmt) & needed:
                keep[i] = True
                needed |= _loads(stmt)
                changed = True
    return [stmt for stmt, k in zip(body, keep) if k]


# --------------------------------------------------------------------------------------------
# Loop bounding
# --------------------------------------------------------------------------------------------
def _training_functions(tree: ast.Module) -> set[str]:
    """Names of functions/methods in this file whose bodies (transitively) call backward/step/zero_grad."""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    trains: set[str] = set()
    changed = True
    while changed:
        changed = False
        for fn in functions:
            if fn.name not in trains and _calls_training(fn, trains):
                trains.add(fn.name)
                changed = True
    return trains


def _calls_training(node: ast.AST, trains: set[str]) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            func = n.func
            if isinstance(func, ast.Attribute) and (func.attr in _TRAINING_CALLS or func.attr in trains):
                return True
            if isinstance(func, ast.Name) and func.id in trains:
                return True
            if isinstance(func, ast.Attribute) and func.attr == "grad" and _base_name(func) == "torch":
                return True
    return False


def _data_like(node: ast.expr) -> bool:
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = node.id if isinstance(node, ast.Name) else node.attr
        return bool(_DATA_NAME.search(name))
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in {"count", "cycle", "repeat"} and not node.args[1:]:
            return True
        if name in {"DataLoader"}:
            return True
        if name in {"enumerate", "tqdm", "iter", "zip", "trange"}:
            return any(_data_like(a) for a in node.args) or name == "trange"
    return False


def _big_range(node: ast.expr) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"):
        return False
    for arg in node.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, int) and arg.value > BIG_RANGE:
            return True
    return False


def _small_range(node: ast.expr) -> bool:
    """range(...) of literals with at most LOOP_LIMIT items: nothing to bound."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and not node.keywords):
        return False
    try:
        values = [ast.literal_eval(a) for a in node.args]
        return all(isinstance(v, int) for v in values) and len(range(*values)) <= LOOP_LIMIT
    except (ValueError, TypeError, SyntaxError):
        return False


def _always_true(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value) is True


class _Bounder(ast.NodeTransformer):
    def __init__(self, trains: set[str], notes: list[str]):
        self.trains = trains
        self.notes = notes
        self.counter = 0

    def _training(self, loop: ast.AST) -> bool:
        return any(_calls_training(stmt, self.trains) for stmt in loop.body)

    def visit_For(self, node: ast.For):
        self.generic_visit(node)
        if _small_range(node.iter):
            return node
        if self._training(node) or _data_like(node.iter) or _big_range(node.iter):
            self.notes.append(f"line {node.lineno}: `for` loop bounded to {LOOP_LIMIT} iterations")
            node.iter = ast.Call(
                func=ast.Attribute(value=ast.Name("__agl__", ast.Load()), attr="bound", ctx=ast.Load()),
                args=[node.iter, ast.Constant(LOOP_LIMIT)],
                keywords=[],
            )
            ast.copy_location(node.iter, node)
        return node

    def visit_While(self, node: ast.While):
        self.generic_visit(node)
        if not (_always_true(node.test) or self._training(node)):
            return node
        self.counter += 1
        name = f"_agl_n{self.counter}"
        self.notes.append(f"line {node.lineno}: `while` loop bounded to {LOOP_LIMIT} iterations")
        init = ast.Assign(targets=[ast.Name(name, ast.Store())], value=ast.Constant(0))
        bound = ast.Compare(left=ast.Name(name, ast.Load()), ops=[ast.Lt()], comparators=[ast.Constant(LOOP_LIMIT)])
        node.test = bound if _always_true(node.test) else ast.BoolOp(op=ast.And(), values=[bound, node.test])
        tick = ast.AugAssign(target=ast.Name(name, ast.Store()), op=ast.Add(), value=ast.Constant(1))
        node.body.insert(0, tick)
        for new in (init, tick, bound):
            _locate_all(new, node.lineno)
        _locate_all(node.test, node.lineno)
        return [init, node]


# Datasets that download or read files: replaced by random tensors of the same shape (harness:
# ``__agl__.fake_dataset``); a transform= argument is dropped (the fake items are tensors already).
FAKE_DATASETS = {
    "MNIST": ((1, 28, 28), 10), "FashionMNIST": ((1, 28, 28), 10), "KMNIST": ((1, 28, 28), 10),
    "EMNIST": ((1, 28, 28), 26), "QMNIST": ((1, 28, 28), 10), "CIFAR10": ((3, 32, 32), 10),
    "CIFAR100": ((3, 32, 32), 100), "SVHN": ((3, 32, 32), 10), "STL10": ((3, 96, 96), 10),
    "ImageFolder": ((3, 64, 64), 10), "ImageNet": ((3, 224, 224), 1000), "CelebA": ((3, 64, 64), 40),
}


class _FakeData(ast.NodeTransformer):
    """`torchvision.datasets.MNIST(root, download=True, transform=...)` → a random dataset of MNIST's shape."""

    def __init__(self, notes: list[str]):
        self.notes = notes

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in FAKE_DATASETS:
            return node
        if isinstance(func, ast.Attribute) and "datasets" not in _dotted(func.value) and _dotted(func.value) not in {"torchvision", "tv"}:
            return node
        train = next((k.value for k in node.keywords if k.arg == "train"), ast.Constant(True))
        shape, classes = FAKE_DATASETS[name]
        self.notes.append(f"line {node.lineno}: {name}(...) replaced by random tensors of shape {shape} with {classes} classes")
        fake = ast.Call(
            func=ast.Attribute(value=ast.Name("__agl__", ast.Load()), attr="fake_dataset", ctx=ast.Load()),
            args=[ast.Constant(name), ast.Constant(list(shape)), ast.Constant(classes)],
            keywords=[ast.keyword(arg="train", value=train)],
        )
        return _locate_all(fake, node.lineno)


def _locate_all(node: ast.AST, line: int) -> ast.AST:
    for n in ast.walk(node):
        if "lineno" in n._attributes:
            n.lineno = n.end_lineno = line
            n.col_offset = n.end_col_offset = 0
    return node


# --------------------------------------------------------------------------------------------
# Probes: which names the harness measures, from the finding's data or the flagged statement
# --------------------------------------------------------------------------------------------
def _data_names(finding: Finding, *keys: str) -> list[str]:
    for key in keys:
        value = finding.data.get(key) if finding.data else None
        if isinstance(value, str) and value:
            return [value]
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
            return list(value)
    return []


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        out = []
        for target in stmt.targets:
            out.extend(target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
        return out
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target]
    return []


_MODULE_NAMES = {"torch", "F", "nn", "np", "numpy", "math", "optim", "functional"}


def _source_names(expr: ast.expr) -> list[str]:
    called = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    names = []
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in called and n.id not in _MODULE_NAMES and n.id not in names:
            names.append(n.id)
    return names


def _data_read(stmt: ast.stmt) -> dict | None:
    """For `v = <expr reading x.data>`: v, the x's, and <expr> with x for x.data (the value autograd would
    have tracked). None for anything else (in-place changes through .data are judged by their gradient)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Name, ast.Attribute))):
        return None
    target = _plain_tensor(stmt.targets[0]) if not isinstance(stmt.targets[0], ast.Attribute) or stmt.targets[0].attr != "data" else None
    sources = []

    class Strip(ast.NodeTransformer):
        def visit_Attribute(self, node):
            self.generic_visit(node)
            if node.attr == "data" and isinstance(node.ctx, ast.Load) and _plain_tensor(node.value) == _dotted(node.value):
                sources.append(_dotted(node.value))
                return node.value
            return node

    reference = Strip().visit(copy.deepcopy(stmt.value))
    in_place = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_")
                   and not n.func.attr.startswith("_") for n in ast.walk(stmt.value))
    if not target or not sources or in_place:
        return None
    return {"target": target, "sources": list(dict.fromkeys(sources)), "reference": ast.unparse(reference)}


def _plain_tensor(node: ast.expr) -> str | None:
    """`w` for `w`, `w.data`, `w.data.clamp_(…).mul_(…)` receivers; a dotted name or None (never a call)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value
    if isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    part = node
    while isinstance(part, ast.Attribute):
        part = part.value
    return _dotted(node) if isinstance(part, ast.Name) else None


def _dotted(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every expression
        return ""


_UNINIT_FACTORIES = {"empty", "empty_like", "empty_strided", "new_empty"}
_LEGACY_TENSORS = re.compile(r"^(Tensor|(Float|Double|Half|BFloat16|Long|Int|Short|Char|Byte|Bool)Tensor)$")


def _uninit_call(value: ast.expr | None) -> tuple[bool, list[str] | None]:
    """(creates an uninitialized tensor?, size-argument expressions to check at run time)."""
    if not isinstance(value, ast.Call):
        return False, None
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in _UNINIT_FACTORIES:
        return True, None
    if _LEGACY_TENSORS.match(name) and value.args:
        if any(isinstance(a, (ast.List, ast.Tuple, ast.ListComp)) for a in value.args):
            return False, None
        return True, [_dotted(a) for a in value.args]
    return False, None


def _composition_of(stmt: ast.stmt, loops: list[ast.stmt], scope_body: list[ast.stmt]) -> tuple[list[str], list[str]]:
    """Without the rule's data: the flagged statement is either the composition (`w = f(a, b)`)
    or a use of `w` inside a loop, `w` being assigned before that loop in the same scope."""
    if not loops and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return [stmt.targets[0].id], _source_names(stmt.value)
    if not loops:
        return [], []
    outer = loops[0]
    before = scope_body[: next((i for i, s in enumerate(scope_body) if s is outer), len(scope_body))]
    for name in _source_names(stmt.value if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr)) else stmt):
        for earlier in reversed(before):
            if isinstance(earlier, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in earlier.targets):
                sources = _source_names(earlier.value)
                if sources:
                    return [name], sources
                break
    return [], []


def probe_config(code: str, finding: Finding, stmt: ast.stmt, enclosing: list[ast.AST],
                 enclosing_loops: list[ast.stmt] = (), scope_body: list[ast.stmt] = ()) -> dict | None:
    from .signatures import signature_of

    signature = signature_of(code)
    name = signature.probe if signature else None
    if name is None:
        return None
    targets = _targets(stmt)
    if name == "stale_composed":
        composed = _data_names(finding, "composed", "weight", "tensor")
        sources = _data_names(finding, "sources", "leaves", "params")
        if not composed:
            composed, sources = _composition_of(stmt, enclosing_loops, scope_body)
        return {"name": name, "composed": composed[0] if composed else None, "sources": sources}
    if name == "requires_grad_alias":
        aliases = [_dotted(t) for t in targets] or _data_names(finding, "alias", "target", "name")
        return {"name": name, "aliases": aliases}
    if name == "data_invisible":
        # Only plain names (w, self.w): the harness evaluates them before and after the statement, and
        # evaluating a call (the receiver of a chained `ema.data.mul_(a).add_(b)`) would run it again.
        exprs: list[str] = []
        for n in ast.walk(stmt):
            if isinstance(n, ast.Attribute) and n.attr == "data":
                exprs.append(_plain_tensor(n.value))
        for target in targets:
            exprs.append(_plain_tensor(target))
        for n in ast.walk(stmt):
            if isinstance(n, ast.AugAssign):
                exprs.append(_plain_tensor(n.target))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") and not n.func.attr.startswith("_"):
                exprs.append(_plain_tensor(n.func.value))
        exprs += _data_names(finding, "tensor", "variable", "name", "target")
        config = {"name": name, "exprs": list(dict.fromkeys(e for e in exprs if e))}
        read = _data_read(stmt)
        if read:
            config["read"] = read
        return config
    if name == "module_attribute":
        cls = next((n.name for n in reversed(enclosing) if isinstance(n, ast.ClassDef)), None)
        cls = (_data_names(finding, "class") or [cls])[0]
        attr = None
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                attr = target.attr
        for n in ast.walk(stmt):  # the fixed form: self.register_buffer("x", ...)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in {"register_buffer", "register_parameter"} \
                    and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
                attr = attr or n.args[0].value
        attr = (_data_names(finding, "attribute", "attr") or [attr])[0] or (_data_names(finding, "name", "target") or [None])[0]
        return {"name": name, "class": cls, "attr": attr}
    if name == "uninitialized_read":
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        uninit, sizes = _uninit_call(value)
        target = _dotted(targets[0]) if len(targets) == 1 else (_data_names(finding, "tensor", "variable", "name", "target") or [None])[0]
        config = {"name": name, "target": target, "uninit": uninit and target is not None}
        if sizes is not None:
            config["size_args"] = sizes
        return config
    if name == "unfreeze_grad_none":
        target = None
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr == "requires_grad":
                target = _dotted(t.value)
        if target is None:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "requires_grad_":
                    target = _dotted(n.func.value)
        target = target or (_data_names(finding, "param", "tensor", "target", "name") or [None])[0]
        return {"name": name, "target": target}
    if name == "graph_growth":
        target = None
        if isinstance(stmt, ast.AugAssign):
            target = _dotted(stmt.target)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in {"append", "extend"}:
            target = _dotted(stmt.value.func.value)
        elif isinstance(stmt, ast.Assign) and len(targets) == 1:
            target = _dotted(targets[0])
        target = (_data_names(finding, "accumulator", "target", "name") or [target])[0]
        return {"name": name, "target": target}
    if name == "zero_grads":
        target = None
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward":
                receiver = n.func.value
                if _dotted(receiver) in {"torch.autograd", "autograd"}:
                    receiver = n.args[0] if n.args else None
                target = _dotted(receiver) if receiver is not None else None
                break
        target = target or (_data_names(finding, "loss", "target", "name") or [None])[0]
        return {"name": name, "target": target}
    if name == "grad_accumulation":
        return {"name": name}
    if name == "typo_attribute":
        for t in targets:
            if isinstance(t, ast.Attribute) and "gr" in t.attr.lower() and t.attr.lower().startswith(("re", "rq")):
                return {"name": name, "target": _dotted(t.value), "attr": t.attr}
        return {"name": name, "target": None, "attr": None}
    return {"name": name}


# --------------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------------
def _hook(name: str, line: int) -> ast.stmt:
    call = ast.Expr(ast.Call(func=ast.Attribute(value=ast.Name("__agl__", ast.Load()), attr=name, ctx=ast.Load()), args=[], keywords=[]))
    return _locate_all(call, line)


def _synthesized(stmts: list[ast.stmt]) -> list[ast.stmt]:
    for stmt in stmts:
        _locate_all(stmt, 0)
    return stmts


def _is_future(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"


def build(source: Source, finding: Finding, force_mode: str | None = None) -> Reproducer | Inconclusive:
    try:
        tree = ast.parse(source.text, filename=source.path or "<unknown>")
    except (SyntaxError, ValueError, RecursionError) as error:
        return Inconclusive(f"the file does not parse ({type(error).__name__}: {error}); nothing can run")
    line = finding.span.line
    path = _stmt_path(tree, line)
    notes: list[str] = []
    if not path:
        # A blank or comment line (e.g. the line of a finding, applied to a fixed version of the
        # file): nothing to mark; the whole module runs and the probe works from the finding's data.
        notes.append(f"line {line} holds no statement: the whole module runs, nothing is marked")
        stmt, nodes = _locate_all(ast.Pass(), line), []
    else:
        nodes = _nodes_on(tree, path)
        stmt = nodes[-1]
    start, end = _span(stmt)
    enclosing = [n for n in nodes[:-1] if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    code = finding.code.upper()
    scope = ([tree] + [n for n in nodes[:-1] if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))])[-1]
    loops = [n for n in nodes[:-1] if isinstance(n, (ast.For, ast.While, ast.AsyncFor)) and any(n is m for m in ast.walk(scope))]
    probe = probe_config(code, finding, stmt, enclosing, loops, getattr(scope, "body", []))

    # Which shape?
    mode = "script"
    top_stmt = tree.body[path[0][1]] if path and path[0][0] == "body" else None
    if enclosing and top_stmt is enclosing[0] and (force_mode is not None or top_stmt.name not in reachable_defs(tree) or _uncalled_method(tree, enclosing)):
        top = enclosing[0]
        if any(isinstance(n, ast.AsyncFunctionDef) for n in enclosing):
            return Inconclusive(f"line {line} is inside an async function; the reproducer does not run event loops")
        if isinstance(top, ast.ClassDef):
            if len(enclosing) == 1:
                mode = "class"
            elif isinstance(enclosing[1], ast.FunctionDef) and enclosing[1] in top.body:
                mode = "method"
            else:
                return Inconclusive(f"line {line} is inside a class nested in {top.name}; there is no entry point to call it")
        else:
            mode = "function"
    elif force_mode is not None:
        return Inconclusive("no other entry point than running the module")

    work = copy.deepcopy(tree)
    if path:
        work_nodes = _nodes_on(work, path)
        flagged = work_nodes[-1]
        container = getattr(work_nodes[-2] if len(work_nodes) > 1 else work, path[-1][0])
        index = container.index(flagged)
        after = _hook("after", start)
        if isinstance(flagged, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            container.insert(index, _hook("before", start))
        elif _is_future(flagged):
            container.insert(index + 1, _hook("before", start))
        else:
            container[index:index + 1] = [_hook("before", start), flagged, after]
    if probe and probe.get("name") == "module_attribute" and probe.get("class"):
        # Let the harness see instances of the class (installed right after the class statement).
        for i, n in enumerate(work.body):
            if isinstance(n, ast.ClassDef) and n.name == probe["class"]:
                track = ast.parse(f"__agl__.track_class({n.name})").body[0]
                work.body.insert(i + 1, _locate_all(track, n.lineno))
                break

    trains = _training_functions(tree)
    _Bounder(trains, notes).visit(work)
    _FakeData(notes).visit(work)
    for node in ast.walk(work):  # errors the program catches itself are still reported
        if isinstance(node, ast.ExceptHandler):
            node.body.insert(0, _hook("caught", node.lineno))

    entry = None
    reach_check = True
    if mode != "script":
        top_name = enclosing[0].name
        call: list[ast.stmt] = []
        if mode in ("function", "method"):
            fn = enclosing[0] if mode == "function" else enclosing[1]
            result = synth.synthesize_call(tree, enclosing[0] if mode == "method" else None, fn, code, stmt)
            if isinstance(result, synth.Failure):
                return Inconclusive(result.reason)
            call, entry = result.statements, result.entry
            notes.extend(result.notes)
        elif mode == "class":
            entry = f"class {top_name}"
        needed = {top_name} | set().union(*(_loads(s) for s in call)) if call else {top_name}
        kept = slice_module(work.body, needed)
        dropped = len([s for s in work.body if not any(s is k for k in kept)])
        if dropped:
            notes.append(f"{dropped} module-level statement(s) not needed by {top_name} left out")
        work.body = kept + _synthesized(call)
    elif _is_future(stmt) or not path:
        reach_check = False

    ast.fix_missing_locations(work)
    program = ast.unparse(work)
    header = [
        f"# autograd-lsp reproducer for {code} at {source.path or '<buffer>'}:{line} ({mode}{': ' + entry if entry else ''})",
        "# __agl__ is the harness's instrumentation: before()/after() mark the flagged statement, bound() caps loops,",
        "# caught() records exceptions the program catches, fake_dataset() stands in for downloads.",
    ]
    text = "\n".join(header) + "\n" + program + "\n"
    line_map = _line_map(work, text, len(header))
    return Reproducer(text, line_map, mode, (start, end), probe, entry, notes, reach_check)


def _stmts_in_order(node: ast.AST):
    for name in _CONTAINERS:
        items = getattr(node, name, None)
        if isinstance(items, list):
            for child in items:
                if isinstance(child, ast.stmt):
                    yield child
                yield from _stmts_in_order(child)


def _line_map(work: ast.Module, text: str, offset: int) -> dict[int, int]:
    reparsed = ast.parse(text)
    mapping: dict[int, int] = {}
    old = list(_stmts_in_order(work))
    new = list(_stmts_in_order(reparsed))
    for a, b in zip(old, new):
        mapping.setdefault(b.lineno, a.lineno)
    # Lines inside multi-line statements (long strings) map like the statement they belong to.
    last = 0
    total = text.count("\n") + 1
    for number in range(1, total + 1):
        if number in mapping:
            last = mapping[number]
        elif number > offset:
            mapping[number] = last
    return {k: v for k, v in mapping.items() if k > offset}
