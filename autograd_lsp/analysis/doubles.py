"""Test doubles: objects a test builds so that the code under test computes nothing real.

A module built around a double (`ExpectedImprovement(model=MockModel(posterior))`) runs a forward whose values come
from the double, which may ignore what the forward hands it: what such a call reads of its input is not known, and
rules that would claim a read there stay silent. Only where nothing else could read it:
- in test code: a test file (`test_*.py`, `*_test.py`, `conftest.py`) or a method of a `unittest.TestCase` class;
- the double is a bare `unittest.mock` object (no `wraps=` / `side_effect=`, which compute, nor configured attributes,
  `Mock(hidden_size=8)`, which size real layers), or an instance of a class named as one (`MockModel`, `FakeEncoder`,
  `StubPosterior`, `DummyLikelihood`) that is not torch's (`FakeQuantize`) and, defined in this file, is no
  nn.Module and whose `__call__` ignores its arguments;
- no other argument of the constructor is a layer (`nn.Linear(...)`, a module class of this file);
- the constructor's class, when defined in this file, hands its forward's input only to the attribute it stored the
  double in;
- every binding of the names involved before the call, in that scope, is such a value (not one branch of an `if`),
  and a dict unpacked into the constructor (`Scorer(**options)`) changes only by string keys other than the double's.
"""
from __future__ import annotations

import ast
import re

from .model import BindEvent, CallEvent, ClassInfo, ModuleModel
from .syntax import nodes, parents

_DOUBLE_CLASS = re.compile(r"(Mock|Fake|Stub|Dummy)(?=[A-Z_]|$)")
_MOCK_MODULES = ("unittest.mock.", "mock.")
# keywords of a mock that only say what it stands for or returns: anything else computes or configures
_PLAIN_MOCK_KEYWORDS = frozenset({"return_value", "spec", "spec_set", "name", "instance", "autospec"})


def built_around_double(model: ModuleModel, call: CallEvent) -> bool:
    """`score(X)` where every binding of `score` before it, in this scope, is a constructor call given a test double
    (directly, through a name, or as a value of a dict display unpacked into it) and nothing else that computes."""
    func = call.node.func
    if not isinstance(func, ast.Name) or not _in_test(model, call):
        return False
    built = _bindings(model, call, func.id)
    return bool(built) and all(isinstance(value, ast.Call) and _around_double(model, call, value) for value in built)


def _around_double(model: ModuleModel, call: CallEvent, built: ast.Call) -> bool:
    given = [(None, arg) for arg in built.args] + [(kw.arg, kw.value) for kw in built.keywords if kw.arg is not None]
    replaced = set()
    for kw in built.keywords:
        if kw.arg is not None:
            continue
        if not isinstance(kw.value, ast.Name):
            return False
        unknown, stored = _item_changes(call, kw.value.id)
        displays = _bindings(model, call, kw.value.id)
        if unknown or not displays or not all(isinstance(display, ast.Dict) and None not in display.keys for display in displays):
            return False  # changed in ways not known, or merging another dict (`{**defaults, "model": mm}`)
        given += [(key.value if isinstance(key, ast.Constant) else None, value)
                  for display in displays for key, value in zip(display.keys, display.values)]
        given += [(key, value) for key, values in stored.items() for value in values]
        replaced |= set(stored)
    doubles = []
    for position, (keyword, arg) in enumerate(given):  # positional arguments come first: their position is theirs
        if isinstance(arg, ast.Starred):
            return False
        values = _bindings(model, call, arg.id) if isinstance(arg, ast.Name) else [arg]
        calls = [value for value in values if isinstance(value, ast.Call)]
        if any(_layer(model, value) for value in calls):
            return False  # a real layer beside the double reads the input
        if calls and len(calls) == len(values) and all(_double(model, value) for value in calls):
            doubles.append((keyword, position))
    if any(keyword in replaced for keyword, _ in doubles):
        return False  # `options["model"] = ...`: the double may not be what the constructor gets
    return bool(doubles) and _hands_input_to(model, built, doubles)


def _hands_input_to(model: ModuleModel, built: ast.Call, doubles: list) -> bool:
    """The constructed class, when defined here, uses its forward's input only as an argument of calls on the
    attributes its `__init__` stored a double's parameter in. Not defined here: not known, and left to the double."""
    cls = model.classes.get(built.func.id) if isinstance(built.func, ast.Name) else None
    if cls is None:
        return True
    init, forward = cls.methods.get("__init__"), cls.methods.get("forward")
    if init is None or forward is None:
        return False
    params = [arg.arg for arg in init.node.args.args[1:]]
    names = {keyword if keyword is not None else params[position] if position < len(params) else None
             for keyword, position in doubles}
    stored = {target.attr for node in nodes(init.node) if isinstance(node, ast.Assign)
              and isinstance(node.value, ast.Name) and node.value.id in names
              for target in node.targets if isinstance(target, ast.Attribute) and _self(target.value)}
    inputs = [arg.arg for arg in forward.node.args.args[1:2]]
    if not stored or not inputs:
        return False
    parent_of = parents(model, forward.node)
    for node in nodes(forward.node):
        if isinstance(node, ast.Name) and node.id == inputs[0] and isinstance(node.ctx, ast.Load):
            used_in = parent_of.get(id(node))
            if not (isinstance(used_in, ast.Call) and node in used_in.args and _on_stored(used_in.func, stored)):
                return False
    return True


def _on_stored(func: ast.expr, stored: set) -> bool:
    """`self.model(x)` / `self.model.posterior(x)` for a stored attribute `model`."""
    while isinstance(func, ast.Attribute):
        if func.attr in stored and _self(func.value):
            return True
        func = func.value
    return False


def _self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _layer(model: ModuleModel, call: ast.Call) -> bool:
    qualname = model.imports.qualname(call.func) or ""
    if qualname.startswith("torch.nn."):
        return True
    cls = model.classes.get(call.func.id) if isinstance(call.func, ast.Name) else None
    return cls is not None and cls.is_module and not _DOUBLE_CLASS.match(cls.name)


def _double(model: ModuleModel, call: ast.Call) -> bool:
    qualname = model.imports.qualname(call.func) or ""
    if qualname.startswith(_MOCK_MODULES):
        return all(kw.arg in _PLAIN_MOCK_KEYWORDS for kw in call.keywords)
    if qualname.startswith("torch."):
        return False  # torch.ao.quantization.FakeQuantize computes
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if _DOUBLE_CLASS.match(name) is None:
        return False
    cls = model.classes.get(name) if isinstance(func, ast.Name) else None
    return cls is None or not cls.is_module and not _reads_arguments(cls.methods.get("__call__"))


def _reads_arguments(method) -> bool:
    if method is None:
        return False
    params = {arg.arg for arg in [*method.node.args.args[1:], *method.node.args.kwonlyargs]}
    params |= {arg.arg for arg in (method.node.args.vararg, method.node.args.kwarg) if arg is not None}
    return any(isinstance(node, ast.Name) and node.id in params and isinstance(node.ctx, ast.Load) for node in nodes(method.node))


def _in_test(model: ModuleModel, call: CallEvent) -> bool:
    """Test code: a test file, or a method of a `unittest.TestCase` class (`def test()` of a training script, a class
    `ABTest` of a benchmark, are not)."""
    name = (model.source.path or "").replace("\\", "/").rpartition("/")[2]
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return True
    scope = call.ctx.scope
    while scope is not None:
        function = scope.function
        if function is not None and function.cls is not None and _test_case(model, function.cls):
            return True
        scope = scope.parent
    return False


def _test_case(model: ModuleModel, cls: ClassInfo) -> bool:
    return any((model.imports.qualname(base) or "").endswith("TestCase") for base in cls.node.bases)


def _item_changes(call: CallEvent, name: str) -> tuple[bool, dict]:
    """How `options` changes in the call's scope: whether it changes in a way that is not known before the call (or
    after it, in a loop that runs the call again): `update(...)`, `pop(...)`, `del options[k]`, a key not written as a
    string; and the values stored by string key anywhere in the scope (`options["constraints"] = ...`)."""
    unknown, stored, known, loops = [], {}, set(), []
    for node in nodes(call.ctx.scope.node):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            loops.append(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name \
                        and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
                    stored.setdefault(target.slice.value, []).append(node.value)
                    known.add(id(target))
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name \
                and not isinstance(node.ctx, ast.Load) and id(node) not in known:
            unknown.append(node)  # `options[key] = ...`, `options["k"] += ...`, `del options["k"]`, a tuple target
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name \
                and node.attr in ("update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"):
            unknown.append(node)
    if any(change.lineno <= call.node.lineno for change in unknown):
        return True, stored
    return any(_within(call.node, loop) and _within(change, loop) for change in unknown for loop in loops), stored


def _within(node: ast.AST, outer: ast.AST) -> bool:
    return outer.lineno <= node.lineno <= outer.end_lineno


def _bindings(model: ModuleModel, call: CallEvent, name: str) -> list:
    """The values of every plain binding of `name` before `call`, in the call's scope (empty: one is not plain)."""
    values = []
    for event in _binds_by_name(model).get((id(call.ctx.scope), name), ()):
        if event.seq < call.seq:
            if not isinstance(event.target, ast.Name) or event.value is None:
                return []
            values.append(event.value)
    return values


def _binds_by_name(model: ModuleModel) -> dict:
    """(id of a scope, name) -> its bind events, indexed once per walk (a check asks for several names)."""
    index = model.__dict__.get("_binds_by_name")
    if index is None or index[0] != len(model.events):
        found = {}
        for event in model.of_type(BindEvent):
            found.setdefault((id(event.ctx.scope), event.name), []).append(event)
        index = model._binds_by_name = (len(model.events), found)
    return index[1]
