"""What every call this module shows passes for a parameter: a Python sequence on every path, or unknown."""
from __future__ import annotations

import ast

from ..analysis import uses
from ..analysis.callsite import argument_for
from ..analysis.model import BindEvent, ModuleModel
from ..analysis.provenance import Kind

_DEPTH = 3  # callers of callers followed (`build(stats=(...))` -> `Scaler(stats)` -> `torch.tensor(stats)`)


def passed_sequence(model: ModuleModel, function: ast.AST | None, node: ast.AST, depth: int = 0) -> bool:
    """`values` (or `config["key"]`) is a parameter of `function`, never rebound there, that every call of it this module
    shows (one at least) fills with a Python sequence of numbers: a display, a name the walk knows as one, a key of a dict
    display, a default display the call leaves, or a parameter of its own caller that is so in turn."""
    key = None
    if type(node) is ast.Subscript and type(node.slice) is ast.Constant and isinstance(node.slice.value, str):
        key, node = node.slice.value, node.value
    elif type(node) is ast.Attribute and depth == 0:
        key, node = _Field(node.attr), node.value  # `opts.center` of a `SimpleNamespace(center=[...])`
    return type(node) is ast.Name and _passed(model, function, node.id, key, depth)


class _Field(str):
    """An attribute of a namespace (`SimpleNamespace(k=...)`, `argparse.Namespace(k=...)`), not a key of a dict."""


def passed_strings(model: ModuleModel, function: ast.AST | None, node: ast.AST) -> frozenset | None:
    """The strings that every call of `function` this module shows gives its parameter `node` (a string constant, a
    default left, or a parameter of its caller that is so in turn), or None where one call gives something else."""
    found: set = set()

    def string(model, value, key):
        if type(value) is ast.Constant and type(value.value) is str:
            found.add(value.value)
            return True
        return False
    return frozenset(found) if type(node) is ast.Name and _passed(model, function, node.id, None, 0, string) and found else None


def passed_none(model: ModuleModel, function: ast.AST | None, node: ast.AST) -> bool:
    """Every call of `function` this module shows (one at least) leaves its parameter `node` at a None default or passes
    None (or a parameter of its caller that is so in turn)."""
    def none(model, value, key):
        return type(value) is ast.Constant and value.value is None
    return type(node) is ast.Name and _passed(model, function, node.id, None, 0, none)


def _passed(model: ModuleModel, function: ast.AST | None, name: str, key: str | None, depth: int, accept=None) -> bool:
    info = model.functions.get(function) if function is not None else None
    if info is None or depth > _DEPTH or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or name not in _parameters(function) or _rebinds(model, function, name):
        return False
    callers = [event for event in model.callers(info) if event.function is info]
    if not callers or len(callers) != len(model.callers(info)):
        return False  # (none seen, or one that runs it some other way: `model(x)` running forward)
    for event in callers:
        value = _argument_or_default(event, function, name, info)
        if value is None:
            return False
        caller = event.ctx.scope.function
        caller = (caller.context_of or caller).node if caller is not None else None
        if (accept or _sequence)(model, value, key):
            continue
        if type(value) is ast.Subscript and key is None and accept is None:
            if not passed_sequence(model, caller, value, depth + 1):
                return False
        elif type(value) is not ast.Name or not _passed(model, caller, value.id, key, depth + 1, accept):
            return False
    return True


def _sequence(model: ModuleModel, value: ast.AST, key: str | None) -> bool:
    """A sequence of numbers (nested too), or a dict display whose `key` holds one."""
    if type(key) is _Field:
        display = _namespace_display(model, value)
        found = [kw.value for kw in display.keywords if kw.arg == key] if display is not None else []
        return len(found) == 1 and _sequence(model, found[0], None)
    if key is not None:
        if type(value) is ast.Dict:
            found = [v for k, v in zip(value.keys, value.values) if type(k) is ast.Constant and k.value == key]
            return len(found) == 1 and len(value.keys) == len({getattr(k, "value", None) for k in value.keys}) \
                and _sequence(model, found[0], None)
        prov = model.prov(value)
        if prov is None or prov.kind is not Kind.MAPPING or not prov.keys or prov.keys.count(key) != 1 \
                or len(prov.keys) != len(prov.elements):
            return False
        return _numbers(prov.elements[prov.keys.index(key)])
    if type(value) in (ast.List, ast.Tuple):
        return bool(value.elts) and all(_number(e) or _sequence(model, e, None) for e in value.elts)
    return _numbers(model.prov(value))


def _number(node: ast.AST) -> bool:
    """`2.0`, `-0.3`: a number display."""
    if type(node) is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):
        node = node.operand
    return type(node) is ast.Constant and type(node.value) in (int, float)


def _namespace_display(model: ModuleModel, value: ast.AST) -> ast.Call | None:
    """`SimpleNamespace(k=...)` given inline, or a name the module binds once, to such a call."""
    if type(value) is ast.Name:
        binds = [e for e in model.of_type(BindEvent) if e.name == value.id and e.target is not None]
        if len(binds) != 1 or binds[0].ctx.scope.function is not None or type(binds[0].node) is not ast.Assign:
            return None  # (bound at the top level only, once: not rebound, not a loop variable)
        value = binds[0].value
    if type(value) is not ast.Call or value.args or any(kw.arg is None for kw in value.keywords):
        return None
    return value if model.imports.qualname(value.func) in uses.NAMESPACES else None


def _numbers(prov) -> bool:
    if prov is None or prov.kind is not Kind.SEQUENCE or not prov.elements:
        return False
    return all(e is not None and (e.kind is Kind.NUMBER or _numbers(e)) for e in prov.elements)


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = function.args
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]


def _rebinds(model: ModuleModel, function: ast.AST, name: str) -> bool:
    cache = model.__dict__.setdefault("_passed_stored", {})  # id of a def -> the names its body stores (one walk each)
    stored = cache.get(id(function))
    if stored is None:
        names: set = set()
        for n in ast.walk(function):
            if type(n) is ast.Name and not isinstance(n.ctx, ast.Load):
                names.add(n.id)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                names.update(n.names)
        stored = cache[id(function)] = frozenset(names)
    return name in stored


def _argument_or_default(event, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, info) -> ast.AST | None:
    """What the call passes for `name`, or the default it leaves; None when that is unknown."""
    call = event.node
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(kw.arg is None for kw in call.keywords):
        return None
    value = argument_for(event, {name})
    if value is not None:
        return value
    args = function.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    bound = info.cls is not None and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
    if any(kw.arg == name for kw in call.keywords) or name in positional and len(call.args) > positional.index(name) - bound:
        return None  # passed, yet not matched: unknown
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults.get(name)
