"""## What it does
Flags `p.requires_grad = …`, `p.requires_grad_(…)` or `module.requires_grad_(…)` (directly, or in a loop over
`module.parameters()`, or inside a helper such as `set_requires_grad(backbone, True)`) that runs after a
forward which used those parameters and before the `backward()` of the loss built by that forward. Turning
gradients *on* is reported only when the same parameters were frozen somewhere in the file (otherwise the
call changes nothing).

## Why is this bad?
Autograd records the graph during the forward. Changing `requires_grad` afterwards does not change the
pending graph (seed 001): parameters unfrozen after the forward get no gradient in this step
(`p.grad` stays `None`), and parameters frozen after the forward still receive gradients, so the coming
`optimizer.step()` updates them once more.

## Example
```python
for epoch in range(epochs):
    loss = criterion(head(backbone(x)), y)
    if epoch == unfreeze_epoch:
        for p in backbone.parameters():
            p.requires_grad_(True)
    loss.backward()
```

## Use instead
```python
for epoch in range(epochs):
    if epoch == unfreeze_epoch:
        for p in backbone.parameters():
            p.requires_grad_(True)
    loss = criterion(head(backbone(x)), y)
    loss.backward()
```

## Fix safety
Unsafe: the fix moves the statement that changes `requires_grad` to just before the forward; it is
offered only when that statement reads nothing computed in between.

## Runtime signature
unfreezing after the forward: `p.grad` stays `None` for that step (silent); freezing and then editing `p`
in place before backward: `RuntimeError: ... modified by an inplace operation`.
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

from ..analysis.model import AttrStoreEvent, BindEvent, CallEvent, Event, ModuleModel
from ..analysis.syntax import body_statement
from ..analysis.training import STEP_HOOKS, backward_target, is_backward, is_step
from ..findings import Edit, Fix, Safety, Severity, Span
from . import edits

CODE = "AG014"
NAME = "requires-grad-toggle-after-forward"
SEVERITY = Severity.WARNING
SUMMARY = "requires_grad changed after the forward and before that graph's backward()"
RUNTIME_SIGNATURE = "silent: p.grad stays None for that step | RuntimeError: modified by an inplace operation"
RULE = sys.modules[__name__]

PARAMETER_ITERATORS = {"parameters", "named_parameters", "modules", "children", "buffers"}


@dataclass
class Toggle:
    event: Event  # the AttrStoreEvent / requires_grad_ call / call of a helper that toggles
    value: bool | None  # True: unfreeze, False: freeze, None: computed
    targets: set  # texts of what it changes: `backbone`, `model.head`, `w`
    text: str  # the toggling code, for messages


def check(model: ModuleModel):
    toggles = list(_toggles(model))
    if not toggles:
        return
    frozen = [t for t in toggles if t.value is False]
    backwards = [event for event in model.of_type(CallEvent) if is_backward(event)]
    calls = {id(event.node): event for event in model.of_type(CallEvent)}
    for toggle in toggles:
        if toggle.value is True and not any(_matches(toggle.targets, other.targets) for other in frozen if other is not toggle):
            continue  # turning on what was never turned off changes nothing
        scope = toggle.event.ctx.scope
        for backward in backwards:
            if backward.seq <= toggle.event.seq or backward.ctx.scope is not scope:
                continue
            _, prov = backward_target(model, backward)
            if prov is None or not prov.graph:
                continue
            forward = _forward_using(model, prov, toggle, calls)
            if forward is None:
                continue
            if any(is_step(model, event) for event in model.of_type(CallEvent)
                   if event.ctx.scope is scope and forward.seq < event.seq < toggle.event.seq):
                continue  # a step between forward and toggle: that graph was already consumed
            yield _finding(model, toggle, forward, backward)
            break
        else:
            returned = _hook_return(model, toggle, calls)
            if returned is not None:
                yield _finding(model, toggle, returned[0], returned[1])


def _hook_return(model: ModuleModel, toggle: Toggle, calls):
    """In a per-batch hook (`training_step`), the framework backpropagates the returned loss after the return."""
    function = toggle.event.ctx.scope.function
    if function is None or function.name not in STEP_HOOKS or toggle.event.ctx.loop is not None:
        return None
    for node in ast.walk(function.node):
        if isinstance(node, ast.Return) and node.value is not None and node.lineno > toggle.event.node.lineno:
            values = node.value.values if isinstance(node.value, ast.Dict) else [node.value]
            for value in values:
                prov = model.prov(value)
                if prov is not None and prov.graph:
                    forward = _forward_using(model, prov, toggle, calls)
                    if forward is not None:
                        return forward, _Returned(node)
    return None


class _Returned:
    """The return of a per-batch hook, standing in for the framework's backward()."""

    def __init__(self, node: ast.Return):
        self.node = node


# -- the toggles ----------------------------------------------------------------------------------------
def _toggles(model: ModuleModel):
    direct: dict[int, list[Toggle]] = {}
    for event in model.events:
        toggle = None
        if isinstance(event, AttrStoreEvent) and event.target.attr == "requires_grad":
            toggle = Toggle(event, _bool(event.value), _targets(model, event.target.value, event), model.text(event.node))
        elif isinstance(event, CallEvent) and event.role == "requires_grad_" and event.receiver is not None:
            call = event.node
            value = call.args[0] if call.args else (event.keyword("requires_grad").value if event.keyword("requires_grad") else None)
            toggle = Toggle(event, True if value is None else _bool(value), _targets(model, event.receiver, event), model.text(call))
        if toggle is not None and toggle.targets:
            yield toggle
            function = event.ctx.scope.function
            if function is not None:
                direct.setdefault(id(function), []).append(toggle)
    # helpers that toggle: `set_requires_grad(backbone, True)`, `self.unfreeze()`
    for event in model.of_type(CallEvent):
        inner = direct.get(id(event.function)) if event.function is not None else None
        if not inner:
            continue
        targets = set()
        for toggle in inner:
            targets |= _at_call_site(model, event, toggle.targets)
        values = {toggle.value for toggle in inner}
        value = values.pop() if len(values) == 1 else None
        if value is None and event.node.args:
            literal = [_bool(arg) for arg in [*event.node.args, *(kw.value for kw in event.node.keywords)] if _bool(arg) is not None]
            value = literal[0] if len(literal) == 1 else None
        if targets:
            yield Toggle(event, value, targets, model.text(event.node))


def _bool(node) -> bool | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None


def _label(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _targets(model: ModuleModel, receiver: ast.expr, event: Event) -> set:
    """What a toggle changes: the module whose parameters a loop variable runs over, or the expression itself."""
    if isinstance(receiver, ast.Name):
        for loop in event.ctx.loops():
            node = loop.node
            if isinstance(node, (ast.For, ast.AsyncFor)) and _binds(node.target, receiver.id):
                owners = {_label(sub.func.value) for sub in ast.walk(node.iter) if isinstance(sub, ast.Call) and
                          isinstance(sub.func, ast.Attribute) and sub.func.attr in PARAMETER_ITERATORS}
                owners.discard(None)
                return owners
    name = _label(receiver)
    return {name} if name else set()


def _binds(target: ast.expr, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    return isinstance(target, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == name for e in target.elts)


def _at_call_site(model: ModuleModel, call: CallEvent, targets: set) -> set:
    """A helper's targets in the caller's terms: its parameters become the arguments passed, `self.x` stays."""
    function = call.function
    args = function.node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args]]
    offset = 1 if function.cls is not None and names and names[0] == "self" else 0
    found = set()
    for target in targets:
        head, _, rest = target.partition(".")
        if head in names:
            index = names.index(head) - offset
            keyword = next((kw for kw in call.node.keywords if kw.arg == head), None)
            argument = keyword.value if keyword is not None else (call.node.args[index] if 0 <= index < len(call.node.args) else None)
            text = _label(argument) if argument is not None else None
            if text:
                found.add(f"{text}.{rest}" if rest else text)
        elif head == "self" and isinstance(call.receiver, ast.Name) and call.receiver.id == "self":
            found.add(target)
    return found


def _matches(targets: set, others: set) -> bool:
    return any(a == b or b.startswith(a + ".") or a.startswith(b + ".") for a in targets for b in others)


# -- the forward that used them ----------------------------------------------------------------------
def _forward_using(model: ModuleModel, prov, toggle: Toggle, calls) -> CallEvent | None:
    """A call in the backward's graph, made before the toggle, that used a toggled module or tensor."""
    best = None
    for node_id in prov.graph:
        event = calls.get(node_id)
        if event is None or event.seq >= toggle.event.seq or event.ctx.scope is not toggle.event.ctx.scope:
            continue
        used = {_label(event.node.func)} if event.role == "forward" else set()
        if event.receiver is not None:
            used.add(_label(event.receiver))
        if event.function is not None or event.role == "forward":
            used |= {_label(arg) for arg in event.node.args}
        used.discard(None)
        if used and _matches(toggle.targets, used) and (best is None or event.seq < best.seq):
            best = event
    if best is None and prov.composed_from & toggle.targets and toggle.value is False:
        # a trainable tensor the loss was composed from, frozen only now: the first binding built from it
        for event in model.of_type(BindEvent):
            if event.seq >= toggle.event.seq:
                break
            bound = event.prov
            if event.ctx.scope is toggle.event.ctx.scope and bound is not None and bound.node is not None and \
                    id(bound.node) in prov.graph and bound.composed_from & toggle.targets:
                return event
    return best


# -- the finding ----------------------------------------------------------------------------------------
def _finding(model: ModuleModel, toggle: Toggle, forward, backward: CallEvent):
    targets = ", ".join(f"`{t}`" for t in sorted(toggle.targets))
    forward_node = forward.value if isinstance(forward, BindEvent) and forward.value is not None else forward.node
    forward_text = _short(model, forward_node)
    if isinstance(backward, _Returned):
        backward_text = f"the framework after `{_short(model, backward.node)}`"
    else:
        backward_text = f"`{_short(model, backward.node)}`"
    change = {True: "turns gradients on for", False: "turns gradients off for", None: "changes `requires_grad` of"}[toggle.value]
    effect = {True: "they get no gradient from it (`.grad` stays `None` this step)",
              False: "it still computes their gradients, and the next optimizer step still updates them",
              None: "it keeps the setting the parameters had during the forward"}[toggle.value]
    message = (f"`{_short(model, toggle.event.node)}` (line {toggle.event.node.lineno}) {change} {targets} after the forward "
               f"`{forward_text}` (line {forward_node.lineno}) built the graph backpropagated by {backward_text} (line {backward.node.lineno}): "
               f"the pending graph ignores the change, so {effect}. Change `requires_grad` before the forward")
    fixes = []
    fix = _move_fix(model, toggle, forward)
    if fix is not None:
        fixes.append(fix)
    related = [(forward_node, "the forward records the graph here"), (backward.node, "the graph is backpropagated here")]
    return model.finding(RULE, toggle.event.node, message, fixes=fixes, related=related, targets=sorted(toggle.targets),
                         value=toggle.value)


def _move_fix(model: ModuleModel, toggle: Toggle, forward: CallEvent) -> Fix | None:
    around_forward = [id(l) for l in forward.ctx.loops()]
    loop = next((l for l in toggle.event.ctx.loops() if id(l) in around_forward), None)  # innermost loop holding both
    if loop is not None:
        body = loop.node.body
    else:
        scope_node = toggle.event.ctx.scope.node
        body = getattr(scope_node, "body", None)
        if not isinstance(body, list):
            return None
    moved = body_statement(body, toggle.event.node.lineno)
    anchor = body_statement(body, forward.node.lineno)
    if moved is None or anchor is None or moved is anchor or body.index(anchor) > body.index(moved):
        return None
    if not (edits.own_line(model, moved) and edits.own_line(model, anchor)):
        return None
    between = body[body.index(anchor): body.index(moved)]
    stored = {name for stmt in between for name in _names(stmt, ast.Store)}
    if stored & _names(moved, ast.Load):
        return None  # the toggle reads something computed after the forward began
    if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("backward", "step")
           for node in ast.walk(moved)):
        return None
    first = min([moved.lineno] + [d.lineno for d in getattr(moved, "decorator_list", ())])
    last = moved.end_lineno or moved.lineno
    text = "\n".join(model.source.lines[first - 1: last]) + "\n"
    insert = Edit(Span(anchor.lineno, 0, anchor.lineno, 0), text)
    delete = Edit(Span(first, 0, last + 1, 0), "")
    return Fix("Move the `requires_grad` change before the forward", Safety.UNSAFE, (insert, delete))


def _names(node: ast.AST, context) -> set:
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, context):
            found.add(sub.id)
    return found


def _short(model: ModuleModel, node) -> str:
    text = " ".join(model.text(node).split())
    return text if len(text) <= 40 else text[:37] + "..."
