"""## What it does
Flags `p.requires_grad = …`, `p.requires_grad_(…)` or `module.requires_grad_(…)` (directly, in a loop over
`module.parameters()`, or inside a helper such as `set_requires_grad(backbone, True)`, also one defined in
another module) that runs after a forward which used those tensors and before the `backward()` of the loss
that forward built — including a Lightning-style `training_step` whose returned loss the framework
backpropagates, and any function or method that returns that loss to a caller which calls `backward()` on it
(`loss = model.compute_loss(x, y); loss.backward()`); a helper's toggle is reported at the call and at the helper's
statement. Turning gradients *on* is reported when the tensors are
known to have been frozen (otherwise the call changes nothing; a freeze in the class's `__init__` of a module it keeps,
`self.net = net`, counts for `self.net` in its methods), but not when they were frozen just before this
same forward (freeze, forward, unfreeze: the graph leaves them out on purpose); turning them *off* is reported
only when the frozen tensors are then modified in place before that backward. A tensor that needs no grad (data, a row
or chunk of it: `for xb in data.split(64)`) made to require grad after a forward used it is reported too; with
`torch.autograd.grad(out, xb)` that raises.

Also flags (as an error) changing `requires_grad` of a tensor known to be computed from a trainable one: a
non-leaf (`h = w * 2; h.requires_grad = False`), including one that a loop rebinds to such a result before the
next iteration's `x.requires_grad = True` (the iterative-attack shape: `x = x + step` without `.detach()`), and one
a helper is given (`def stop_gradient(x): return x.requires_grad_(False)` called with a computed tensor). Loops
are followed per path: a branch or a `continue` that skips the detaching statement (a warning when only some paths
do), and a slice `x = batch[i]` made to require grad and written back into `batch` (`batch[i] = x`) while it still
requires grad — e.g. when an inner loop leaves by `break` before the `.detach()` — which puts `batch` in a graph, so
the next iteration's slice is a non-leaf.

## Why is this bad?
Autograd records the graph during the forward, and changing `requires_grad` afterwards does not change the
pending graph. Parameters unfrozen after the forward are not in it: they get no gradient in this
step (`p.grad` stays `None`), silently. Parameters frozen after the forward are skipped by the backward,
but the graph saved their values: editing them in place (pruning, re-initialising, clamping) before the
backward makes it fail the version check.

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
Unsafe: the fix moves the statement that changes `requires_grad` (with an in-place edit it contains) to just
before the forward; it is offered only when that statement reads nothing computed in between.

## Runtime signature
unfreezing after the forward: `p.grad` stays `None` for that step (silent); freezing and then editing `p`
in place before backward: `RuntimeError: ... modified by an inplace operation`; on a non-leaf:
`RuntimeError: you can only change requires_grad flags of leaf variables`.
"""
from __future__ import annotations

import ast
import sys

from ..analysis import torch_api as api
from ..analysis.model import AttrStoreEvent, BindEvent, CallEvent, Event, InplaceEvent, ModuleModel
from ..analysis.provenance import Kind
from ..analysis.syntax import body_statement, dotted
from ..analysis.toggles import (Toggle, in_class_terms, literal_bool, matches, requires_grad_changes, surely_runs, switched_on,
                                targets_of)
from ..analysis import uses
from ..analysis.training import GRADIENT_FUNCTIONS, STEP_HOOKS, backward_target, computes_gradients, is_step
from ..findings import Edit, Fix, Safety, Severity, Span
from . import edits

CODE = "AG014"
NAME = "requires-grad-toggle-after-forward"
SEVERITY = Severity.WARNING
SUMMARY = "requires_grad changed after the forward and before that graph's backward()"
RUNTIME_SIGNATURE = ("silent: p.grad stays None for that step | RuntimeError: modified by an inplace operation | "
                     "RuntimeError: you can only change requires_grad flags of leaf variables")
RULE = sys.modules[__name__]


def check(model: ModuleModel):
    toggles = requires_grad_changes(model)
    if not toggles:
        return
    frozen = [t for t in toggles if t.value is False]
    on_non_leaf = set()
    for finding, node in _non_leaf_toggles(model, toggles):
        on_non_leaf.add(id(node))
        yield finding
    toggles = [t for t in toggles if id(t.event.node) not in on_non_leaf]
    backwards = [event for event in model.of_type(CallEvent) if computes_gradients(event)]  # (torch.autograd.grad too: the graph it differentiates)
    calls = {id(event.node): event for event in model.of_type(CallEvent)}
    # a helper's toggle walked for a call site knows what that call passes (`fgsm(model, x.clone(), y)`: a tensor that
    # needs no grad); its forward and backward are the helper's own, in its symbolic walk: judged there, once
    symbolic = {id(t.event.node): t for t in toggles if t.event.ctx.via is None}
    judged = set()
    for toggle in toggles:
        if toggle.value is not False and not _was_frozen(model, toggle, frozen):
            continue  # turning on what was never turned off changes nothing
        if toggle.event.ctx.via is not None:
            toggle = symbolic.get(id(toggle.event.node))
            if toggle is None or toggle.value is not True:
                continue
        if id(toggle.event.node) in judged:
            continue
        judged.add(id(toggle.event.node))
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
            if _bracketed(toggle, forward, frozen) or toggle.value is True and switched_on(model, toggle, forward):
                break
            if any(is_step(model, event) for event in model.of_type(CallEvent)
                   if event.ctx.scope is scope and forward.seq < event.seq < toggle.event.seq):
                continue  # a step between forward and toggle: that graph was already consumed
            edit = None
            if toggle.value is False:
                # Freezing after the forward is harmless by itself (backward then skips the leaf); editing the frozen
                # tensor in place before the backward breaks the version check of the graph that saved it.
                edit = _edited_in_place(model, toggle, backward)
                if edit is None:
                    break
            yield from _reported(model, toggle, _finding(model, toggle, forward, backward, edit))
            break
        else:
            if toggle.value is not False:
                returned = _hook_return(model, toggle, calls) or _returned_to_caller(model, toggle, backwards, calls)
                if returned is not None and not _bracketed(toggle, returned[0], frozen) \
                        and not (toggle.value is True and switched_on(model, toggle, returned[0])):
                    yield from _reported(model, toggle, _finding(model, toggle, returned[0], returned[1], None))


def _reported(model: ModuleModel, toggle: Toggle, found):
    """A helper's toggle is reported at the call and at the statement of the helper that changes the flag."""
    if toggle.inner is None:
        return [found]
    cause = (f"`{_short(model, toggle.inner)}` changes `requires_grad` here when `{_short(model, toggle.event.node)}` runs it "
             f"(line {toggle.event.node.lineno}), after the forward and before that graph's backward: {found.message}")
    return model.with_cause(found, toggle.inner, cause, "the helper is called here, after the forward")


def _was_frozen(model: ModuleModel, toggle: Toggle, frozen: list) -> bool:
    """Evidence that `requires_grad` was False before this toggle turned it on."""
    prov = toggle.event.prov if isinstance(toggle.event, AttrStoreEvent) else getattr(toggle.event, "receiver_prov", None)
    if prov is not None and prov.kind is Kind.TENSOR and prov.requires_grad is False and prov.origin != "param":
        return True
    if any(matches(toggle.targets, other.targets) for other in frozen if other is not toggle):
        return True
    mine = in_class_terms(toggle)  # `model.unfreeze()` after the class's `__init__` froze `self.backbone`
    cls = toggle.event.function.cls if mine else None
    if not mine:  # `self.unfreeze()`, `self.backbone.requires_grad_(True)` in a method of the class
        function = toggle.event.ctx.scope.function
        cls = function.cls if function is not None and function.name != "__init__" else None
        mine = {t for t in toggle.targets if t.startswith("self.")} if cls is not None else set()
    return any(matches(mine, _in_class_terms_of_init(other, cls)) for other in frozen
               if other is not toggle and _in_init_of(other, cls) and _stays_frozen(model, other))


def _in_class_terms_of_init(toggle: Toggle, cls) -> set:
    """A freeze in `__init__` in the class's terms: a parameter it keeps as `self.<name> = <parameter>` is `self.<name>`
    (`for p in model.encoder.parameters(): ...` with `self.model = model`)."""
    found = set(toggle.targets)
    args = toggle.event.ctx.scope.function.node.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    for target in toggle.targets:
        head, dot, rest = target.partition(".")
        if head not in params:
            continue
        for name, assign in cls.attribute_nodes.items():
            value = getattr(assign, "value", None)
            if type(value) is ast.Name and value.id == head and len(getattr(assign, "targets", [None])) == 1:
                found.add(f"self.{name}{dot}{rest}")
    return found


def _in_init_of(toggle: Toggle, cls) -> bool:
    """A freeze that runs whenever the class is built: written in its `__init__` (or a helper `__init__` calls), not one
    in a method that may never be called."""
    function = toggle.event.ctx.scope.function
    return cls is not None and function is not None and function.cls is cls and function.name == "__init__"


def _stays_frozen(model: ModuleModel, freeze: Toggle) -> bool:
    """An `__init__` freeze every construction leaves in force: not under `if freeze_backbone:` (its default may be
    False), and not followed in `__init__` by a change that may turn the same targets back on."""
    scope = freeze.event.ctx.scope
    return surely_runs(model, freeze.event) and not any(
        other.value is not False and other.event.ctx.scope is scope and other.event.seq > freeze.event.seq
        and matches(other.targets, freeze.targets) for other in requires_grad_changes(model))


def _edited_in_place(model: ModuleModel, toggle: Toggle, backward: CallEvent):
    """An in-place change of a frozen target between the toggle and the backward (`.data` edits do not count: they skip
    the version counter)."""
    scope = toggle.event.ctx.scope
    for event in model.events:
        if event.seq <= toggle.event.seq:
            continue
        if event.seq >= backward.seq:
            break
        if event.ctx.scope is not scope:
            continue
        if isinstance(event, CallEvent) and event.receiver is not None and event.method and api.is_inplace_method(event.method):
            target = event.receiver
        elif isinstance(event, InplaceEvent) and event.form in ("augassign", "setitem"):
            target = event.target.value if isinstance(event.target, ast.Subscript) else event.target
        else:
            continue
        if isinstance(target, ast.Attribute) and target.attr == "data":
            continue
        if matches(toggle.targets, targets_of(model, target, event)):
            return event
    return None


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


def _returned_to_caller(model: ModuleModel, toggle: Toggle, backwards: list, calls):
    """A function that runs the forward, then toggles, and hands the loss back: its caller's `backward()` of what the
    call returned (`loss = model.compute_loss(x, y); loss.backward()`) backpropagates the graph recorded before the toggle."""
    scope = toggle.event.ctx.scope
    function = scope.function
    if function is None:
        return None
    function = function.context_of or function
    if function.calls_backward:
        return None  # its own backward is judged in its scope
    callers = [event for event in model.of_type(CallEvent) if event.function is not None and event.ctx.scope is not scope
               and (event.function.context_of or event.function) is function]
    if not callers:
        return None
    for backward in backwards:
        if backward.ctx.scope is scope:
            continue
        _, prov = backward_target(model, backward)
        if prov is None or not prov.graph:
            continue
        if not any(call.ctx.scope is backward.ctx.scope and call.seq < backward.seq and id(call.node) in prov.graph for call in callers):
            continue  # that backward is not of what this function returned
        forward = _forward_using(model, prov, toggle, calls)
        if forward is not None:
            return forward, backward
    return None


def _bracketed(toggle: Toggle, forward, frozen: list) -> bool:
    """`D.requires_grad_(False); loss = -D(G(z)).mean(); D.requires_grad_(True)`: the freeze-for-this-forward idiom. The
    same targets were frozen just before this forward (same function, same loop iteration), so the graph leaving them
    out is what the code asked for; turning them back on after it restores them for the next forward."""
    if toggle.value is not True:
        return False
    return any(other.event.ctx.scope is toggle.event.ctx.scope and other.event.ctx.loop is toggle.event.ctx.loop
               and other.event.seq < forward.seq and matches(toggle.targets, other.targets) for other in frozen)


class _Returned:
    """The return of a per-batch hook, standing in for the framework's backward()."""

    def __init__(self, node: ast.Return):
        self.node = node


# -- requires_grad of a non-leaf ---------------------------------------------------------------------------
def _non_leaf_toggles(model: ModuleModel, toggles: list):
    """Toggles torch refuses: any `x.requires_grad = ...` and `x.requires_grad_(False)` on a non-leaf (autograd decides
    its requires_grad from its graph). Known non-leaf: computed, outside no_grad, from trainable tensors that nothing in
    this module freezes (a module's output is not enough: its parameters may all be frozen)."""
    freezes = [t for t in toggles if t.value is not True]
    seen = set()
    for toggle in toggles:
        event = toggle.event
        if id(event.node) in seen:
            continue
        if isinstance(event, AttrStoreEvent):
            prov, receiver = event.prov, event.target.value
        elif isinstance(event, CallEvent) and toggle.value is False:
            prov, receiver = event.receiver_prov, event.receiver
        else:
            continue  # requires_grad_(True) on a tensor that already requires grad is allowed
        where = None
        if _computed_from_trainable(prov, freezes) and (event.ctx.via is None or model.grad_enabled(event.ctx) is True):
            where = prov  # (a helper's call must be known to record a graph: else its argument may be a plain tensor)
        elif event.ctx.via is not None:
            continue  # (a helper's body walked for one call: only what that call passes is known there)
        elif isinstance(event, AttrStoreEvent) and isinstance(receiver, ast.Name):
            where = _rebound_in_loop(model, event, receiver.id, freezes)
            if where is None:
                written = _rebound_on_a_path(model, event, receiver.id) or _written_back_in_loop(model, event, receiver.id)
                if written is not None:
                    seen.add(id(event.node))
                    yield written, event.node
                    continue
        if where is None:
            continue
        seen.add(id(event.node))
        name = _short(model, receiver)
        caller = _caller_line(event)
        if where is prov and caller is not None:
            message = (f"the call at line {caller} passes `{name}` a tensor computed from tensors that require grad (line {prov.line}): "
                       f"it is not a leaf, and torch refuses to change `requires_grad` of a non-leaf. Use `{name}.detach()` (a leaf "
                       f"sharing its values) and change that")
        elif where is prov:
            message = (f"`{name}` is computed from tensors that require grad (line {prov.line}): it is not a leaf, and torch "
                       f"refuses to change `requires_grad` of a non-leaf. Use `{name}.detach()` (a leaf sharing its values) "
                       f"and change that")
        else:
            message = (f"`{name}` is rebound at line {where.line} to a result computed from it, so from the loop's second "
                       f"iteration on it is a non-leaf and torch refuses to change its `requires_grad`: detach it when "
                       f"rebinding (`{name} = (...).detach()`)")
        finding = model.finding(RULE, event.node, message, related=[(where.node, "the non-leaf is computed here")],
                                target=model.text(receiver), value=toggle.value)
        yield finding.with_severity(Severity.ERROR), event.node


def _caller_line(event: Event) -> int | None:
    """The line of the outermost call whose arguments a helper's body was walked with (None: not such a body)."""
    ctx = event.ctx
    while ctx.via is not None:
        ctx = ctx.via
    return ctx.statement.lineno if ctx is not event.ctx else None


def _computed_from_trainable(prov, freezes: list) -> bool:
    if prov is None or not prov.has_graph or prov.origin == "param" or prov.no_grad or prov.detached or not prov.composed_from:
        return False
    if prov.origin.endswith("(...)"):
        return False  # a module's output: its graph depends on parameters that may be frozen elsewhere
    return not any(matches(t.targets, prov.composed_from) for t in freezes)


def _rebound_in_loop(model: ModuleModel, event: AttrStoreEvent, name: str, freezes: list):
    """`for ...: x.requires_grad = True; ...; x = x + step`: the loop's last rebinding of `x` (a statement of the body
    itself, so every iteration runs it) makes it a non-leaf for the next iteration's toggle."""
    loop = event.ctx.loop
    if loop is None or event.node not in loop.node.body or not _iterates_twice(loop.node):
        return None
    if any(name in _names(stmt, ast.Store) for stmt in loop.node.body[:loop.node.body.index(event.node)]):
        return None  # the next iteration rebinds it before the toggle (`x = torch.rand(...)`): _rebound_on_a_path decides
    last = None
    for other in model.of_type(BindEvent):
        if other.seq > event.seq and other.name == name and other.ctx.scope is event.ctx.scope and other.ctx.via is None \
                and loop.contains(other.ctx.loop):
            last = other
    if last is None or last.node not in loop.node.body or not _computed_from_trainable(last.prov, freezes):
        return None
    return last.prov if name in last.prov.composed_from else None


def _written_back_in_loop(model: ModuleModel, event: AttrStoreEvent, name: str):
    """`for i ...: x = B[i]; x.requires_grad = True; ...; B[i] = x`: where `x` still requires grad when it is written
    back, the write makes `B` part of a graph (it now requires grad), so the next iteration's `x = B[i]` is a non-leaf and
    its toggle raises. Decided per path from the toggle to the write: a `break` that leaves an inner loop before the
    statement that detaches `x` keeps it requiring grad (a warning when only some paths do, an error when all do)."""
    loop = event.ctx.loop
    if loop is None or event.node not in loop.node.body or not _iterates_twice(loop.node) or literal_bool(event.value) is not True:
        return None
    body = loop.node.body
    at = body.index(event.node)
    source = next((stmt for stmt in reversed(body[:at]) if name in _names(stmt, ast.Store)), None)
    sliced = _sliced(source.value) if isinstance(source, ast.Assign) and len(source.targets) == 1 \
        and isinstance(source.targets[0], ast.Name) else None
    if sliced is None:
        return None  # `x` is not sliced from a tensor by every iteration right before the toggle
    base = sliced.value.id
    base_prov = model.prov(sliced.value)
    if base == name or base in loop.assigned or (base_prov is not None and base_prov.requires_grad) or _cleared(loop.node, base):
        return None  # rebound or detached inside the loop; or already requiring grad (the first iteration is another case)
    write = next((stmt for stmt in body[at + 1:] if _writes_back(stmt, base, name)), None)
    if write is None:
        return None
    if not _grad_mode_on(model, event, loop, write.lineno):
        return None
    try:
        state, _, _ = _flow(model, body[at + 1: body.index(write)], {(True, None)}, name)
    except _Unknown:
        return None
    kept = _paths(state)
    if not kept:
        return None
    text, base_text = _short(model, event.target.value), _short(model, write)
    every = all(flag in _REQUIRES for flag, _ in state)
    via = next((via for via in kept if via is not None), None)
    path = f"{_through(via)}, " if via is not None and not every else ("on some paths " if not every else "")
    message = (f"`{text}` is sliced from `{base}` (line {source.lineno}) and made to require grad here; {path}it still "
               f"requires grad when `{base_text}` (line {write.lineno}) writes it back, which makes `{base}` part of a graph: "
               f"from the loop's next iteration on, the slice is a non-leaf and torch refuses to change its `requires_grad`. "
               f"Write back a detached tensor (`{text}.detach()`)")
    related = [(source, "sliced here"), (write, f"written back into `{base}` here")]
    if via is not None and not every:
        related.append((via, "this path keeps it requiring grad"))
    finding = model.finding(RULE, event.node, message, related=related, target=model.text(event.target.value), value=True)
    return finding.with_severity(Severity.ERROR if every else Severity.WARNING)


def _rebound_on_a_path(model: ModuleModel, event: AttrStoreEvent, name: str):
    """`for ...: x.requires_grad = True; ...; x = x + step` where only some paths detach (`if ...: x = x.detach()`, a
    `continue` before the detaching statement): a path that comes back to the toggle with `x` rebound to a result
    computed from it (a non-leaf) makes the toggle raise. Decided per path over the loop body, from the toggle round to
    it again (a warning when only some paths do, an error when all do)."""
    loop = event.ctx.loop
    if loop is None or name not in loop.assigned or event.node not in loop.node.body or not _iterates_twice(loop.node) \
            or literal_bool(event.value) is not True:
        return None  # (a name the loop never rebinds cannot come back computed)
    body = loop.node.body
    at = body.index(event.node)
    if not _grad_mode_on(model, event, loop, None):
        return None
    effects = {}
    try:
        end, _, continues = _flow(model, body[at + 1:], {(True, None)}, name, effects)
        state, _, _ = _flow(model, body[:at], end | continues, name, effects)  # the next iteration, up to the toggle again
    except _Unknown:
        return None
    computed = {via for flag, via in state if flag is _GRAPH}
    if not computed:
        return None
    every = all(flag is _GRAPH for flag, _ in state)
    via = min((via for via in computed if via is not None), key=lambda node: node.lineno, default=None)
    path = f" {_through(via)}" if via is not None and not every else (" on some paths" if not every else "")
    text = _short(model, event.target.value)
    message = (f"`{text}` comes back to this toggle{path} rebound to a result computed from it (not detached): from the loop's "
               f"second iteration on it is a non-leaf, and torch refuses to change its `requires_grad`. Detach it on every "
               f"path (`{text} = (...).detach()`)")
    related = [(via, "this path keeps the computed tensor")] if via is not None and not every else []
    finding = model.finding(RULE, event.node, message, related=related, target=model.text(event.target.value), value=True)
    return finding.with_severity(Severity.ERROR if every else Severity.WARNING)


def _grad_mode_on(model: ModuleModel, event: Event, loop, before: int | None) -> bool:
    """Grad mode known on at the toggle, or the loop computes gradients after it (under no_grad that would raise)."""
    mode = model.grad_enabled(event.ctx)
    if mode is not None:
        return mode
    return any(computes_gradients(other) for other in model.of_type(CallEvent) if other.ctx.scope is event.ctx.scope
               and loop.contains(other.ctx.loop) and event.seq < other.seq and (before is None or other.node.lineno < before))


def _paths(state: set) -> list:
    """The `via` of each path on which the tensor requires grad, path-free ones first."""
    return sorted({via for flag, via in state if flag in _REQUIRES}, key=lambda node: -1 if node is None else node.lineno)


def _through(via: ast.stmt) -> str:
    if isinstance(via, ast.Break):
        return f"when a loop leaves by the `break` at line {via.lineno}"
    return f"after the `continue` at line {via.lineno}"


def _sliced(value: ast.expr) -> ast.Subscript | None:
    """`B[i]`, also through calls that keep its values and graph (`B[i].clone()`, `B[i:i + 1].to(device)`): what a
    tensor `B` that requires grad makes a non-leaf of."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and uses.keeps_values(value.func.attr) \
            and not uses.is_cut(value.func.attr):
        value = value.func.value
    return value if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) else None


def _writes_back(stmt: ast.stmt, base: str, name: str) -> bool:
    """`base[...] = name`, or an in-place op of `base` (or a slice of it) that takes `name`: `base[i].copy_(name)`."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == base \
            and isinstance(stmt.value, ast.Name) and stmt.value.id == name
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute)):
        return False
    call = stmt.value
    receiver = call.func.value.value if isinstance(call.func.value, ast.Subscript) else call.func.value
    return isinstance(receiver, ast.Name) and receiver.id == base and uses.is_write(call.func.attr) \
        and any(isinstance(arg, ast.Name) and arg.id == name for arg in call.args)


def _cleared(loop: ast.AST, base: str) -> bool:
    """`base.detach_()` / `base.requires_grad_(False)` somewhere in the loop: it leaves the graph again."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _clears(node.func.attr)
               and isinstance(node.func.value, ast.Name) and node.func.value.id == base for node in ast.walk(loop))


def _clears(method: str) -> bool:
    """`detach_()` (a graph cut done in place) or `requires_grad_(...)`: the receiver leaves the graph."""
    return method == "requires_grad_" or uses.is_cut(method) and method.endswith("_")


class _Unknown(Exception):
    """A statement the path walk does not follow (try, match, a rebinding it cannot classify as a whole)."""


_KEEP = object()  # the statement leaves the flag as it was
_DERIVED = object()  # rebound to a differentiable result of itself: a non-leaf if it required grad
_GRAPH = "graph"  # a non-leaf that requires grad
_REQUIRES = (True, _GRAPH)


def _flow(model: ModuleModel, stmts: list, state: set, name: str, effects: dict | None = None):
    """Whether `name` requires grad after `stmts`, per path: `state` is a set of (flag, via), flag True / _GRAPH (a
    non-leaf) / False / None (unknown), via the `break` or `continue` the path went through (None: none). Loops are taken to run at least once
    (a path that skips a loop entirely is not claimed), and leave by their condition or by `break`. Returns the state
    falling through, and the states at `break` and `continue`."""
    if effects is None:
        effects = {}  # id(statement) -> its effect: loops are walked again until their states settle
    breaks, continues = set(), set()
    for stmt in stmts:
        if not state:
            break
        if isinstance(stmt, ast.Break):
            breaks |= {(flag, via or stmt) for flag, via in state}
            return set(), breaks, continues
        if isinstance(stmt, ast.Continue):
            continues |= {(flag, via or stmt) for flag, via in state}
            return set(), breaks, continues
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return set(), breaks, continues
        if isinstance(stmt, ast.If):
            then, b1, c1 = _flow(model, stmt.body, state, name, effects)
            other, b2, c2 = _flow(model, stmt.orelse, state, name, effects)
            state, breaks, continues = then | other, breaks | b1 | b2, continues | c1 | c2
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            if not isinstance(stmt, ast.While) and name in _names(stmt.target, ast.Store):
                raise _Unknown
            seen, left = set(state), set()
            while True:
                end, b, c = _flow(model, stmt.body, seen, name, effects)
                left |= b
                grown = seen | end | c
                if grown == seen:
                    break
                seen = grown
            forever = isinstance(stmt, ast.While) and isinstance(stmt.test, ast.Constant) and bool(stmt.test.value)
            done = set() if forever else end | c
            if stmt.orelse and done:
                done, b, c = _flow(model, stmt.orelse, done, name, effects)
                breaks, continues = breaks | b, continues | c
            state = done | left
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            if any(item.optional_vars is not None and name in _names(item.optional_vars, ast.Store) for item in stmt.items):
                raise _Unknown
            state, b, c = _flow(model, stmt.body, state, name, effects)
            breaks, continues = breaks | b, continues | c
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == name:
                raise _Unknown
        elif isinstance(stmt, (ast.Try, ast.Match, getattr(ast, "TryStar", ast.Try))):
            if name in _names(stmt, ast.Load) | _names(stmt, ast.Store) or any(
                    isinstance(node, (ast.Break, ast.Continue)) for node in ast.walk(stmt)):
                raise _Unknown
        else:
            effect = effects.get(id(stmt), effects)
            if effect is effects:
                effect = effects[id(stmt)] = _effect(model, stmt, name)
            if effect is _DERIVED:
                state = {(_GRAPH if flag in _REQUIRES else None, via) for flag, via in state}
            elif effect is not _KEEP:
                state = {(effect, via) for _, via in state}
    return state, breaks, continues


def _effect(model: ModuleModel, stmt: ast.stmt, name: str):
    """What a simple statement makes of whether `name` requires grad: True / False / None (unknown), _KEEP, or
    _DERIVED (rebound to a differentiable result computed from it)."""
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" and isinstance(t.value, ast.Name)
                                            and t.value.id == name for t in stmt.targets):
        return literal_bool(stmt.value)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
            and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == name:
        call = stmt.value
        if call.func.attr == "requires_grad_":
            argument = call.args[0] if call.args else next((kw.value for kw in call.keywords if kw.arg == "requires_grad"), None)
            return True if argument is None else literal_bool(argument)
        if _clears(call.func.attr):
            return False
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and name not in _names(stmt.value, ast.Store):
        return _KEEP  # `x -= lr * g` of a tensor is in place: the same tensor, its flag unchanged
    if not any(isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) for node in ast.walk(stmt)):
        return _KEEP  # does not rebind or delete it
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        prov = model.prov(stmt.value)
        if prov is None or prov.kind is not Kind.TENSOR:
            return None
        value = stmt.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and uses.may_return_self(value.func.attr):
            return None  # `x = x.to(device)` may be `x` itself, a leaf
        if prov.requires_grad and prov.has_graph and not prov.detached and not prov.no_grad and name in _names(value, ast.Load):
            return _DERIVED
        if prov.requires_grad:
            return True
        if prov.detached or prov.no_grad or prov.requires_grad is False:
            return False
    return None


def _iterates_twice(node) -> bool:
    """Not `for _ in range(1)`: a literal count below two never runs the toggle twice."""
    if not isinstance(node, (ast.For, ast.AsyncFor)) or not isinstance(node.iter, ast.Call) or not isinstance(node.iter.func, ast.Name) \
            or node.iter.func.id != "range" or len(node.iter.args) != 1:
        return True
    count = node.iter.args[0]
    return not (isinstance(count, ast.Constant) and isinstance(count.value, int) and count.value < 2)


# -- the forward that used them ----------------------------------------------------------------------
def _forward_using(model: ModuleModel, prov, toggle: Toggle, calls) -> CallEvent | None:
    """A call in the backward's graph, made before the toggle, that used a toggled module or tensor."""
    best = None
    for node_id in prov.graph:
        event = calls.get(node_id)
        if event is None or event.seq >= toggle.event.seq or event.ctx.scope is not toggle.event.ctx.scope:
            continue
        used = {dotted(event.node.func)} if event.role == "forward" else set()
        if event.receiver is not None:
            used.add(dotted(event.receiver))
        if event.function is not None or event.role == "forward":
            used |= {dotted(arg) for arg in event.node.args}
        used.discard(None)
        if used and matches(toggle.targets, used) and (best is None or event.seq < best.seq):
            best = event
    if best is None:
        # plain tensors: the first binding in the loss's graph whose expression reads a toggled tensor (`pred = x @ w + b`)
        for event in model.of_type(BindEvent):
            if event.seq >= toggle.event.seq:
                break
            bound = event.prov
            if event.ctx.scope is not toggle.event.ctx.scope or bound is None or bound.node is None or id(bound.node) not in prov.graph:
                continue
            if event.value is not None and matches(toggle.targets, _read_labels(event.value)):
                return event
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


def _read_labels(node: ast.AST) -> set:
    return {label for sub in ast.walk(node) if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Load)
            for label in [dotted(sub)] if label}


def _differentiated_by(model: ModuleModel, backward, targets: set) -> bool:
    """`torch.autograd.grad(out, x)` asks for the gradient of a toggled `x` (without `allow_unused=True`): it raises."""
    if not isinstance(backward, CallEvent) or backward.qualname not in GRADIENT_FUNCTIONS or backward.keyword("allow_unused") is not None:
        return False
    inputs = backward.node.args[1] if len(backward.node.args) > 1 else getattr(backward.keyword("inputs"), "value", None)
    items = inputs.elts if isinstance(inputs, (ast.Tuple, ast.List)) else [inputs]
    return any(item is not None and dotted(item) in targets for item in items)


# -- the finding ----------------------------------------------------------------------------------------
def _finding(model: ModuleModel, toggle: Toggle, forward, backward, edit):
    targets = ", ".join(f"`{t}`" for t in sorted(toggle.targets))
    forward_node = forward.value if isinstance(forward, BindEvent) and forward.value is not None else forward.node
    forward_text = _short(model, forward_node)
    if isinstance(backward, _Returned):
        backward_text = f"the framework after `{_short(model, backward.node)}`"
    else:
        backward_text = f"`{_short(model, backward.node)}`"
    toggled = f"`{_short(model, toggle.event.node)}` (line {toggle.event.node.lineno})"
    built = (f"after the forward `{forward_text}` (line {forward_node.lineno}) built the graph backpropagated by {backward_text} "
             f"(line {backward.node.lineno})")
    if toggle.value is False:
        message = (f"{toggled} freezes {targets} {built}, and `{_short(model, edit.node)}` (line {edit.node.lineno}) then changes "
                   f"them in place: the pending graph saved their old version, so the backward raises \"modified by an inplace "
                   f"operation\". Freeze before the forward, or edit after the backward")
    else:
        change = "turns gradients on for" if toggle.value else "changes `requires_grad` of"
        outcome = ("so `torch.autograd.grad` raises \"One of the differentiated Tensors appears to not have been used in the graph\""
                   if _differentiated_by(model, backward, toggle.targets) else "so they get no gradient this step (`.grad` stays `None`)")
        message = (f"{toggled} {change} {targets} {built}: the pending graph was recorded without them, {outcome}. Change "
                   f"`requires_grad` before the forward")
    fixes = []
    fix = _move_fix(model, toggle, forward, edit)
    if fix is not None:
        fixes.append(fix)
    related = [(forward_node, "the forward records the graph here"), (backward.node, "the graph is backpropagated here")]
    if edit is not None:
        related.append((edit.node, "the frozen tensor is modified in place here"))
    event = toggle.event
    receiver = event.target.value if isinstance(event, AttrStoreEvent) else (event.receiver if event.role == "requires_grad_" else None)
    return model.finding(RULE, toggle.event.node, message, fixes=fixes, related=related, targets=sorted(toggle.targets),
                         target=model.text(receiver) if receiver is not None else sorted(toggle.targets)[0], value=toggle.value)


def _move_fix(model: ModuleModel, toggle: Toggle, forward, edit=None) -> Fix | None:
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
    if edit is not None and not moved.lineno <= edit.node.lineno <= (moved.end_lineno or moved.lineno):
        return None  # the in-place edit stays after the forward: moving the freeze alone would not help
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
