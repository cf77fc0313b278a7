"""Test doubles: objects a test builds so that the code under test computes nothing real.

A module built around a double (`ExpectedImprovement(model=MockModel(posterior))`, `Scorer(net=mock.MagicMock())`)
runs a forward whose values come from the double, which may ignore what the forward hands it: what such a call reads
of its input is not known. Rules that would claim a read or a computation there stay silent.

A double is a `unittest.mock` object (`Mock`, `MagicMock`, `NonCallableMock`, `create_autospec`, `patch` results) or an
instance of a class named as one (`MockModel`, `FakeEncoder`, `StubPosterior`, `DummyLikelihood`), in test code.
"""
from __future__ import annotations

import ast
import re

from .model import BindEvent, CallEvent, ModuleModel

_DOUBLE_CLASS = re.compile(r"(Mock|Fake|Stub|Dummy)(?=[A-Z_]|$)")
_MOCK_MODULES = ("unittest.mock.", "mock.")


def built_around_double(model: ModuleModel, call: CallEvent) -> bool:
    """`score(X)` where `score` was last bound, in this scope, to a constructor call given a test double: directly, as
    a name this scope last bound to one, or as a value of a dict display unpacked into it (`Scorer(**kwargs)`)."""
    func = call.node.func
    if not isinstance(func, ast.Name) or not _in_test(model, call):
        return False
    built = _last_binding(model, call, func.id)
    if not isinstance(built, ast.Call):
        return False
    given = [*built.args, *(kw.value for kw in built.keywords if kw.arg is not None)]
    for kw in built.keywords:
        unpacked = _last_binding(model, call, kw.value.id) if kw.arg is None and isinstance(kw.value, ast.Name) else kw.value
        if kw.arg is None and isinstance(unpacked, ast.Dict):
            given += [value for key, value in zip(unpacked.keys, unpacked.values) if key is not None]
    for arg in given:
        if isinstance(arg, ast.Starred):
            arg = arg.value
        if isinstance(arg, ast.Name):
            arg = _last_binding(model, call, arg.id)
        if isinstance(arg, ast.Call) and _double(model, arg):
            return True
    return False


def _in_test(model: ModuleModel, call: CallEvent) -> bool:
    """Test code: a test file (`test_*.py`, `*_test.py`, `conftest.py`), or a `test*` function or a method of a
    `Test*` / `*Test(s)` class. A class named `DummyEncoder` elsewhere may be a real layer."""
    name = (model.source.path or "").replace("\\", "/").rpartition("/")[2]
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return True
    scope = call.ctx.scope
    while scope is not None:
        function = scope.function
        if function is not None:
            if function.name.startswith("test"):
                return True
            owner = function.cls.node.name if function.cls is not None else ""
            if owner.startswith("Test") or owner.endswith(("Test", "Tests")):
                return True
        scope = scope.parent
    return False


def _double(model: ModuleModel, call: ast.Call) -> bool:
    qualname = model.imports.qualname(call.func) or ""
    if qualname.startswith(_MOCK_MODULES):
        return True
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return _DOUBLE_CLASS.match(name) is not None


def _last_binding(model: ModuleModel, call: CallEvent, name: str) -> ast.expr | None:
    """The value of the last plain binding of `name` before `call`, in the call's scope."""
    last = None
    scope = call.ctx.scope
    for event in model.of_type(BindEvent):
        if event.seq < call.seq and event.ctx.scope is scope and event.name == name and isinstance(event.target, ast.Name) \
                and (last is None or event.seq > last.seq):
            last = event
    return last.value if last is not None else None
