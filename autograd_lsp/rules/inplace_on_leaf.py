"""## What it does
Flags an in-place operation (`+=`, `x[i] = …`, `add_`, `zero_`, `clamp_`, `copy_`, `fill_`, `normal_`, any in-place
method torch's schema marks `Tensor(a!) self`, an in-place activation: `nn.ReLU(inplace=True)(x)`, `F.relu(x,
inplace=True)`, `F.relu_(x)`) on a leaf tensor that requires grad, or on a view of one (`w[:, 1].zero_()`,
`w.view(-1).add_(1)`, `w.t().mul_(2)`), or a torch function's `out=` into one (`torch.arange(n, out=w)`), outside
`torch.no_grad()` / `torch.inference_mode()`. Parameters are found through the layers that own them: `model.blocks[i].weight`, the `self.bias` a subclass of a torch layer inherits (`class NoisyLinear(nn.Linear)`), a layer registered with `add_module`, a loop variable
narrowed by `isinstance(m, nn.Conv2d)` (also in a helper `model.apply(init)` runs in its caller's grad mode), or the
loop variable over a list of trainable leaves (a hand-written optimizer's `for p in self.params: p -= lr * p.grad`).
A helper of the module that writes the tensor a call hands it (`init_weights(layer.weight)`) is reported at its write
and at that call, where the leaf comes from and `no_grad` goes. Silent where the parameter may not require grad: a write
under `if not p.requires_grad:`, or after a freeze of its module that surely ran first (`freeze(teacher)` before
`for w in teacher.parameters(): w.mul_(d)`; a freeze under `if freeze:` leaves the other path reported).

## Why is this bad?
A leaf that requires grad is a variable autograd differentiates *with respect to*; changing its values in
place would make the recorded graph lie, so PyTorch refuses at once. Users meet it when initialising
weights (`w += 2`), clamping parameters, or writing a manual SGD step without `no_grad`.

## Example
```python
a = torch.ones(2, 2, requires_grad=True)
a += 2
```

## Use instead
```python
a = torch.ones(2, 2, requires_grad=True)
with torch.no_grad():  # an update autograd should not see
    a += 2
```
or, when the result should be part of the graph, an out-of-place op: `a = a + 2`.

## Fix safety
Both fixes are unsafe: wrapping in `no_grad()` hides the change from autograd, the out-of-place rewrite
makes `a` a non-leaf (its `.grad` is no longer populated).

## Runtime signature
`RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.` (for a view: `a view
of a leaf Variable that requires grad is being used in an in-place operation.`; for `out=`: `functions with out=...
arguments don't support automatic differentiation, but one of the arguments requires grad.`)
"""
from __future__ import annotations

import ast
import sys

from ..analysis import callsite
from ..analysis import torch_api as api
from ..analysis.model import InplaceEvent, ModuleModel
from ..analysis.syntax import flag_false, parents
from ..analysis.toggles import matches, requires_grad_changes, switched_off
from ..analysis.torch_api import out_of_place
from ..findings import Edit, Fix, Safety, Severity
from . import edits

CODE = "AG001"
NAME = "inplace-on-leaf"
SEVERITY = Severity.ERROR
SUMMARY = "In-place operation on a leaf tensor that requires grad"
RUNTIME_SIGNATURE = ("RuntimeError: a leaf Variable that requires grad is being used in an in-place operation | "
                     "functions with out=... arguments don't support automatic differentiation")
RULE = sys.modules[__name__]


def check(model: ModuleModel):
    handed: set = set()  # calls reported already (a helper writing its argument twice: one finding there)
    for event in model.of_type(InplaceEvent):
        prov = event.prov
        if prov is None or event.ctx.no_grad:
            continue
        view = not prov.is_trainable_leaf
        if view:  # `w[:, 1].zero_()`, `w.t().mul_(2)`: a view writes its base's storage
            # (`w[0].detach().fill_(1)` writes it too, but through a tensor that requires no grad: autograd allows it)
            prov = prov.base if prov.base is not None and prov.base.is_trainable_leaf \
                and not (prov.detached and prov.requires_grad is False) else None
            if prov is None:
                continue
        # an error needs a known grad mode: a body whose callers this module does not show stays silent
        if model.grad_enabled(event.ctx) is not True:
            continue
        target = event.target.value if isinstance(event.target, ast.Subscript) and not view else event.target
        scope = event.ctx.scope
        if flag_false(parents(model, scope.node if scope.function is not None else model.tree), event.node,
                      f"{_base_name(model, target)}.requires_grad") or switched_off(model, _owners(model, prov), event) \
                or event.ctx.via is not None and _passed_frozen(model, event):
            continue  # (a freeze somewhere in the module may have switched the parameter off: not a known leaf that requires grad)
        name = model.text(target)
        made = model.describe(prov)
        what = f"a view of `{_base_name(model, target)}`, " if view else ""
        message = (f"in-place `{event.op}` on `{name}`, {what}a leaf tensor that requires grad ({made}); "
                   f"autograd raises at runtime. Wrap the update in `torch.no_grad()` or use an out-of-place op")
        node = event.node if event.form in ("method", "call") else event.ctx.statement
        found = model.finding(
            RULE,
            node,
            message,
            fixes=_fixes(model, event, target),
            related=[(prov.node, f"`{name}` created here as a leaf that requires grad")],
            target=name,
        )
        yield found
        for call, passed in _handed_by(model, event, target):
            if id(call) in handed:
                continue
            handed.add(id(call))
            cause = (f"`{model.text(call.func)}(...)` is handed `{model.text(passed)}`, a leaf tensor that requires grad, and "
                     f"writes it in place (`{event.op}` at line {found.span.line}) outside `torch.no_grad()`: autograd raises at runtime. "
                     f"Wrap this call in `torch.no_grad()`")
            yield from model.with_cause(found, call, cause, "written in place here")[1:]


def _handed_by(model: ModuleModel, event: InplaceEvent, target: ast.expr) -> list:
    """The calls of this module, in grad mode, that hand the written tensor to the helper walked for one of them (the
    helper's parameter, never rebound there) as a leaf that requires grad, or a view of one, seen as such where the
    call is (not a parameter of a body walked for its own caller: the call that passed that is not this one)."""
    name = _base_name(model, target)
    function = event.ctx.scope.function
    if event.ctx.via is None or not _parameter(function, name):
        return []
    calls = [call for call in model.callers(function.context_of) if call.ctx.via is None and call.function is function.context_of]
    # (only the calls whose walk made this write: their own, or one they share by passing the same facts; a call whose
    # walk took another branch of the helper never reaches it)
    emitters = {id(e.ctx.via.statement) for e in model.of_type(InplaceEvent) if e.node is event.node and e.ctx.via is not None}
    walked = {_facts(model, call) for call in calls if id(call.ctx.statement) in emitters}
    found, seen = [], set()
    for call in calls:
        if id(call.node) in seen or id(call.ctx.statement) not in emitters and _facts(model, call) not in walked:
            continue
        seen.add(id(call.node))
        passed = callsite.argument_for(call, {name})
        prov = model.prov(passed) if passed is not None else None
        if prov is None or not (prov.is_trainable_leaf or prov.base is not None and prov.base.is_trainable_leaf):
            continue
        if call.ctx.no_grad or model.grad_enabled(call.ctx) is not True:
            continue
        found.append((call.node, passed))
    return found


def _facts(model: ModuleModel, call) -> tuple:
    """What a call passes, as the walk memoises a body's walk by it."""
    return (tuple(callsite.facts(model.prov(a)) for a in call.node.args),
            tuple((k.arg, callsite.facts(model.prov(k.value))) for k in call.node.keywords))


def _parameter(function, name: str) -> bool:
    """`name` is a parameter of the function that its body never binds again."""
    node = function.node if function is not None and function.context_of is not None else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    args = node.args
    if name not in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
        return False
    return not any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def _passed_frozen(model: ModuleModel, event: InplaceEvent) -> bool:
    """A helper walked for one call writes what the call passes: a module named there whose parameters something in
    this module walked before the write may switch off (`for p in target.parameters(): p.requires_grad_(False)`, then
    `ema_into(target.parameters(), ...)`) makes its items no known leaves that require grad."""
    names = set()
    for call in ast.walk(event.ctx.via.statement):
        if not isinstance(call, ast.Call):
            continue
        for node in [*call.args, *(keyword.value for keyword in call.keywords)]:
            if isinstance(node, ast.Starred):
                node = node.value
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in api.MODULE_ITERATORS:
                node = node.func.value
            if isinstance(node, (ast.Name, ast.Attribute)):
                names.add(model.text(node))
                prov = model.prov(node)
                if prov is not None:  # (`tparams = list(target.parameters())` passed: target's)
                    names |= _owners(model, prov)
    return any(toggle.value is not True and toggle.event.seq < event.seq and matches(toggle.targets, names)
               for toggle in requires_grad_changes(model))


def _owners(model: ModuleModel, prov) -> set:
    """What the leaf is known by, for matching a freeze: `teacher` of `teacher.parameters()`, `model.fc.weight`."""
    found = set(prov.composed_from)
    node = prov.node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in api.MODULE_ITERATORS:
        node = node.func.value
    if isinstance(node, (ast.Name, ast.Attribute)):
        found.add(model.text(node))
    return found


def _base_name(model: ModuleModel, view: ast.expr) -> str:
    """`w` for `w[:, 1]`, `w.t()`, `w.view(-1)[0]`: the expression the chain of views starts from."""
    while isinstance(view, ast.Subscript) or isinstance(view, ast.Attribute) or isinstance(view, ast.Call) and isinstance(view.func, ast.Attribute):
        view = view.value if not isinstance(view, ast.Call) else view.func.value
    return model.text(view)


def _fixes(model: ModuleModel, event: InplaceEvent, target: ast.expr) -> list[Fix]:
    fixes = []
    stmt = event.ctx.statement
    wrapped = edits.wrap_in_no_grad(model, stmt)
    if wrapped:
        fixes.append(Fix("Wrap the in-place update in `with torch.no_grad():`", Safety.UNSAFE, tuple(wrapped)))
    name = model.text(target)
    if event.form == "augassign" and isinstance(stmt, ast.AugAssign) and isinstance(target, (ast.Name, ast.Attribute)) and stmt.target is target:
        op = event.op[:-1]
        value = model.text(stmt.value)
        if isinstance(stmt.value, (ast.BinOp, ast.BoolOp, ast.IfExp, ast.Compare)):
            value = f"({value})"
        fixes.append(Fix(f"Rewrite out of place: `{name} = {name} {op} …`", Safety.UNSAFE,
                         (Edit(model.span(stmt), f"{name} = {name} {op} {value}"),)))
    elif event.form == "method" and isinstance(stmt, ast.Expr) and stmt.value is event.node:
        twin = out_of_place(event.op)
        if twin and isinstance(target, (ast.Name, ast.Attribute)):
            call = event.node
            args = model.text(call)[len(model.text(call.func)):]
            fixes.append(Fix(f"Rewrite out of place: `{name} = {name}.{twin}(…)`", Safety.UNSAFE,
                             (Edit(model.span(stmt), f"{name} = {name}.{twin}{args}"),)))
    return fixes
