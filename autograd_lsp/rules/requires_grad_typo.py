"""## What it does
Flags misspellings of `requires_grad` on tensors, parameters and modules: attributes
(`p.require_grad = False`, `if w.requires_grads:`), keywords of torch calls
(`torch.ones(3, require_grad=True)`, `nn.Parameter(t, requieres_grad=False)`) and the in-place method
(`x.require_grad_()`, or `x.requires_grad(True)` called like a method).

## Why is this bad?
Assigning a misspelt attribute on a tensor or module just creates a new Python attribute: the parameter
you meant to freeze keeps training, silently. Reading one raises `AttributeError`; a misspelt keyword
raises `TypeError`; calling the `requires_grad` flag raises `TypeError: 'bool' object is not callable`.

## Example
```python
for p in model.backbone.parameters():
    p.require_grad = False
```

## Use instead
```python
for p in model.backbone.parameters():
    p.requires_grad = False
```

## Fix safety
Renaming to `requires_grad` (or calling `requires_grad_`) is safe: the misspelt form never did what its
spelling says. Setting the flag on a whole module (`model.require_grad = False`) is rewritten to
`model.requires_grad_(False)`, unsafe because it now really freezes every parameter of the module.

## Runtime signature
silent (attribute assignment: `requires_grad` is unchanged), `AttributeError: ... has no attribute`
(attribute read), `TypeError: ... got an unexpected keyword argument` (keyword).
"""
from __future__ import annotations

import ast
import sys

from ..analysis.model import AttrLoadEvent, AttrStoreEvent, BindEvent, CallEvent, ClassInfo, Context, ModuleModel
from ..analysis.provenance import Kind, Provenance
from ..analysis.torch_api import MODULE_ITERATORS, PARAMETER_NAMES, misspells_requires_grad
from ..findings import Edit, Fix, Safety, Severity, Span
from . import edits

CODE = "AG018"
NAME = "requires-grad-typo"
SEVERITY = Severity.ERROR
SUMMARY = "Misspelt `requires_grad` attribute, keyword or method"
RUNTIME_SIGNATURE = "silent: requires_grad unchanged | AttributeError: object has no attribute | TypeError: unexpected keyword argument"
RULE = sys.modules[__name__]


def check(model: ModuleModel):
    # From the events' index by kind, not a pass over all events. A call's findings never share a place with an
    # attribute's; a store and a load can (`p.requires_gard += 1`): those keep the events' order.
    attributes = [event for event in model.of_type(AttrStoreEvent) if _misspelt_attribute(event.target.attr)]
    loads = [event for event in model.of_type(AttrLoadEvent) if _misspelt_attribute(event.attr)]
    if attributes and loads:
        order = {id(event): index for index, event in enumerate(model.events)}
        attributes = sorted(attributes + loads, key=lambda event: order[id(event)])
    else:
        attributes = attributes or loads
    for event in attributes:
        if isinstance(event, AttrStoreEvent):
            kind = _evidence(model, event.target.value, event.prov, event.ctx, event.target.attr)
            if kind is not None:
                yield _attribute_store(model, event, kind)
        else:
            kind = _evidence(model, event.receiver, event.prov, event.ctx, event.attr)
            if kind is not None:
                yield _attribute_load(model, event, kind)
    for event in model.of_type(CallEvent):
        method = event.method
        if event.node.keywords or method is not None and (method == "requires_grad" or method.endswith("_")):
            yield from _call(model, event)  # (only these can hold a typo: most calls skip the generator)


def _misspelt_attribute(attr: str) -> bool:
    return misspells_requires_grad(attr) and not attr.endswith("_")


def _call(model: ModuleModel, event: CallEvent):
    call = event.node
    torch_call = bool(event.qualname and event.qualname.startswith("torch."))
    method = event.method
    if torch_call or method in ("requires_grad_", "to") or (method or "").startswith("new_"):
        for keyword in call.keywords:
            if keyword.arg and misspells_requires_grad(keyword.arg) and not keyword.arg.endswith("_"):
                yield _keyword(model, event, keyword)
    if method is None or event.receiver is None:
        return
    misspelt_method = method == "requires_grad" or (method.endswith("_") and misspells_requires_grad(method))
    if misspelt_method and _evidence(model, event.receiver, event.receiver_prov, event.ctx, method) is not None:
        yield _method(model, event)


# -- evidence that the receiver is a tensor or a module -------------------------------------------------
def _evidence(model: ModuleModel, receiver: ast.expr, prov: Provenance | None, ctx: Context, attr: str) -> str | None:
    """"tensor" / "module" when the analysis knows what `receiver` is; None: someone's own object, stay silent."""
    if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
        return None  # a class's own attribute, named as its author likes
    if prov is not None:
        if prov.kind is Kind.TENSOR and prov.origin != "param":
            return "tensor"
        if prov.kind is Kind.MODULE:
            cls = prov.module_class
            if isinstance(cls, ClassInfo) and _class_sets(cls, attr):
                return None
            return "module"
    if isinstance(receiver, ast.Name) and _bound_to_parameters(model, receiver.id, ctx):
        return "tensor"
    if isinstance(receiver, ast.Attribute) and receiver.attr in PARAMETER_NAMES:
        return "tensor"
    return None


def _bound_to_parameters(model: ModuleModel, name: str, ctx: Context) -> bool:
    """`for p in model.parameters():` (or over `params = list(model.parameters())`, or a comprehension) binds `name`
    to parameters."""
    for loop in ctx.loops():
        node = loop.node
        if isinstance(node, (ast.For, ast.AsyncFor)) and _targets(node.target, name) and \
                (_iterates_parameters(node.iter) or isinstance(node.iter, ast.Name) and _holds_parameters(model, node.iter, loop)):
            return not _rebinds(node.body, name)
    scope = ctx.scope
    while scope is not None and isinstance(scope.node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        for generator in scope.node.generators:
            if _targets(generator.target, name) and _iterates_parameters(generator.iter):
                return True
        scope = scope.parent
    return False


def _holds_parameters(model: ModuleModel, name: ast.Name, loop) -> bool:
    """`params = list(model.parameters())` bound last before the loop, in the same scope."""
    found = None
    for event in model.of_type(BindEvent):
        if event.node.lineno >= loop.node.lineno:
            break
        if event.name == name.id and event.ctx.scope is loop.scope:
            found = event
    return found is not None and found.value is not None and _iterates_parameters(found.value)


def _rebinds(body: list[ast.stmt], name: str) -> bool:
    return any(isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Store) for stmt in body for sub in ast.walk(stmt))


def _targets(target: ast.expr, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)) and target.elts:
        last = target.elts[-1]  # `for name, p in model.named_parameters()`
        return isinstance(last, ast.Name) and last.id == name
    return False


def _iterates_parameters(node: ast.expr) -> bool:
    return any(isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in MODULE_ITERATORS
               for sub in ast.walk(node))


def _class_sets(cls: ClassInfo, attr: str) -> bool:
    for node in ast.walk(cls.node):
        if isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.ctx, ast.Store):
            return True
    return False


# -- findings -----------------------------------------------------------------------------------------
def _attr_span(model: ModuleModel, node: ast.Attribute) -> Span:
    span = model.span(node)
    return Span(span.end_line, span.end_col - len(node.attr), span.end_line, span.end_col)


def _rename(model: ModuleModel, node: ast.Attribute, correct: str) -> Fix:
    return Fix(f"Rename `{node.attr}` to `{correct}`", Safety.SAFE, (Edit(_attr_span(model, node), correct),))


def _attribute_store(model: ModuleModel, event: AttrStoreEvent, kind: str):
    target = event.target
    receiver = model.text(target.value)
    fixes = []
    stmt = event.ctx.statement
    if kind == "module":
        message = (f"`{receiver}.{target.attr}` is not `requires_grad`: this only adds a new attribute to the module and freezes "
                   f"nothing (and a module has no `requires_grad` flag either); use `{receiver}.requires_grad_(...)`")
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is target and edits.own_line(model, stmt):
            value = model.text(stmt.value)
            fixes.append(Fix(f"Call `{receiver}.requires_grad_({value})`", Safety.UNSAFE,
                             (Edit(model.span(stmt), f"{receiver}.requires_grad_({value})"),)))
    else:
        message = (f"`{target.attr}` is a misspelling of `requires_grad`: assigning it only adds a new Python attribute to "
                   f"`{receiver}`, whose `requires_grad` stays unchanged")
        fixes.append(_rename(model, target, "requires_grad"))
    return model.finding(RULE, target, message, fixes=fixes, attribute=target.attr, target=receiver)


def _attribute_load(model: ModuleModel, event: AttrLoadEvent, kind: str):
    node = event.node
    receiver = model.text(event.receiver)
    what = "module" if kind == "module" else "tensor"
    message = f"`{event.attr}` is a misspelling of `requires_grad`: reading it from the {what} `{receiver}` raises AttributeError"
    fixes = [] if kind == "module" else [_rename(model, node, "requires_grad")]
    return model.finding(RULE, node, message, fixes=fixes, attribute=event.attr, target=receiver)


def _keyword(model: ModuleModel, event: CallEvent, keyword: ast.keyword):
    line, col = keyword.lineno, model.char_col(keyword.lineno, keyword.col_offset)
    span = Span(line, col, line, col + len(keyword.arg))
    func = model.text(event.node.func)
    message = f"`{keyword.arg}=` is a misspelling of `requires_grad=`: `{func}(...)` raises TypeError (unexpected keyword argument)"
    fix = Fix(f"Rename the keyword to `requires_grad`", Safety.SAFE, (Edit(span, "requires_grad"),))
    finding = model.finding(RULE, keyword, message, fixes=[fix], keyword=keyword.arg)
    return finding


def _method(model: ModuleModel, event: CallEvent):
    func = event.node.func
    receiver = model.text(event.receiver)
    if func.attr == "requires_grad":
        message = (f"`{receiver}.requires_grad(...)` calls the `requires_grad` flag (a bool, or missing on a module): "
                   f"TypeError or AttributeError; the method is `requires_grad_(...)`")
    else:
        message = f"`{func.attr}` is a misspelling of `requires_grad_`: `{receiver}.{func.attr}(...)` raises AttributeError"
    return model.finding(RULE, func, message, fixes=[_rename(model, func, "requires_grad_")], method=func.attr, target=receiver)
