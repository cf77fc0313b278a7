"""## What it does
Flags a training loop body — a `for`/`while` body, or a per-batch hook like Lightning's `training_step`
with manual optimisation — that calls `backward()` and `optimizer.step()` (directly or through a helper
function of the same workspace) but never resets the gradients in between: no `optimizer.zero_grad()`,
`model.zero_grad()`, `zero_grad(set_to_none=True)`, `p.grad = None` or `p.grad.zero_()` in the same body. The closure
that `optimizer.step(closure)` runs is part of the step: its `backward()` counts, and so does a reset inside it.
With two optimizers (a GAN), each stepped optimizer needs its own reset, unless the others' resets zero all of
its parameters (an InfoGAN optimizer over `itertools.chain(G.parameters(), D.parameters())`); a module's own
`G.zero_grad()` resets G's gradients only: an optimizer over another module that builds layers of its own, made after
G (`D.opt`, `Adam(D.parameters())`), is not reset by it. A helper's reset under `if flag:`, for a
parameter defaulting to `False` that the loop's call leaves out (`optimizer_step()` of `def optimizer_step(self,
zero_grad=False)`), never runs; nor does a reset under `if params is not None` (alone or in an `and`) of a parameter every
call of the function in this module passes `None` (a hand-written SGD path, called with `params=None, optimizer=opt`);
nor does a reset in one arm of an `if` for a step in the other arm (`if amp: zero_grad(); ...` / `else: backward(); step()`).

Reported at the `step()` that applies the summed gradients, and at the `backward()` that adds to them; where the
step sits in a helper that the loop's call is the only caller of, at the helper's own `step()` too. Steps in the two
arms of an `if` (AMP or plain) are each reported. A loop calling a function whose own loop backpropagates and steps
(an epoch function) is that loop's to judge: a reset per epoch would not help.

## Why is this bad?
`backward()` *adds* to `.grad`. Without a reset, the second step applies the sum of the first two
batches' gradients, the third the sum of three, and so on: the effective learning rate grows every
step and training silently diverges or stalls. A `zero_grad()` before the loop runs only once.

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```
Gradient accumulation is fine as long as the reset happens in the loop (e.g. after every `k`-th step).

## Fix safety
Unsafe: the fix inserts `optimizer.zero_grad()` at the top of the step, before the forward. If the
accumulation was intended (gradients summed over the whole run), this changes the training.

## Runtime signature
silent: gradients accumulate across steps (each `step()` applies the sum of all gradients so far).
"""
from __future__ import annotations

import ast
import sys

from ..analysis import callsite
from ..analysis import torch_ops as ops
from ..analysis import torch_api as api
from ..analysis.model import BindEvent, CallEvent, ClassInfo, ModuleModel
from ..analysis.provenance import Kind
from ..analysis.syntax import parents, stores, test_truth
from ..analysis.training import (BACKWARD, STEP, ZERO_GRAD, Part, covers, first_forward, forward_statement, innermost_unit, is_zeroing,
                                 never_together, optimizer_of, optimizer_params, step_closure, training_units)
from ..findings import Fix, Safety, Severity
from . import edits

CODE = "AG016"
NAME = "missing-zero-grad"
SEVERITY = Severity.WARNING
SUMMARY = "Training loop calls backward() and optimizer.step() but never zeroes the gradients"
RUNTIME_SIGNATURE = "silent: gradients accumulate across steps"
RULE = sys.modules[__name__]


def check(model: ModuleModel):
    if not any(event.role == "backward" or event.method == "manual_backward" or event.function is not None and event.function.calls_backward
               for event in model.of_type(CallEvent)):
        return  # no backward anywhere: no training step to check (and no need to build the units)
    seen: set = set()  # lines of helpers' steps reported already (a helper stepped from two loops: once)
    for unit in training_units(model):
        backwards, steps = unit.of(BACKWARD), unit.of(STEP)
        if not backwards or not steps:
            continue
        own = [step for step in steps if innermost_unit(model, step.event, needs=BACKWARD) is unit]
        own = [step for step in own if not _fresh_each_iteration(model, unit, step) and not _callers_pass_no_optimizer(model, step)
               and not _judged_inside(model, unit, step)]
        if not own:
            continue
        zeros = [zero for zero in unit.of(ZERO_GRAD) if not _never_runs(model, zero)]
        if not zeros:
            # one step per path: the arms of an `if` (AMP or plain) each apply the summed gradients
            reported, named = [], set()  # (one fix per optimizer: the resets would go at the same place)
            for step in own:
                if all(never_together(model, other.event, step.event) for other in reported):
                    name = optimizer_of(model, step.event) if isinstance(step.event, CallEvent) else None
                    yield from _finding(model, unit, step, backwards, missing=None, seen=seen, fix=not reported or name not in named)
                    reported.append(step)
                    named.add(name)
            continue
        apart = next((step for step in own if all(never_together(model, zero.event, step.event) for zero in zeros)), None)
        if apart is not None:  # (`if args.amp: zero_grad(); scaled backward; step` `else: backward(); step()`)
            yield from _finding(model, unit, apart, backwards, missing=None, seen=seen, branch=zeros[0])
            continue
        uncovered = _past_module_resets(model, zeros, own)
        if uncovered is not None:
            for step, name, resets in uncovered[:1]:
                yield from _finding(model, unit, step, backwards, missing=name, seen=seen, resets=resets)
            continue
        # Every reset names an optimizer: each stepped optimizer needs its own (GAN: d_opt and g_opt).
        reset = set()
        zeroed: frozenset = frozenset()  # the parameters those resets reach, as far as known
        for zero in zeros:
            event = zero.event
            if zero.inner is not None or not isinstance(event, CallEvent) or event.role != "zero_grad" or event.receiver is None:
                break  # model.zero_grad(), p.grad = None, a helper: covers what we cannot tell apart
            if not _optimizer_receiver(model, event):
                break
            reset.add(optimizer_of(model, event))
            zeroed |= optimizer_params(model, event.receiver)
        else:
            reported = set()
            for step in own:
                if step.inner is not None or not isinstance(step.event, CallEvent):
                    continue
                name = optimizer_of(model, step.event)
                if name and _reset_through_others(model, step.event, zeroed):
                    continue
                if name and not any(_same_optimizer(name, other) for other in reset) and name not in reported:
                    reported.add(name)
                    yield from _finding(model, unit, step, backwards, missing=name, seen=seen)


def _judged_inside(model: ModuleModel, unit, step) -> bool:
    """The step a call reaches sits in a loop of the helper that backpropagates too (`run_epoch()` called per epoch): that
    loop is the training loop, judged on its own; a reset in the caller's loop would come once per epoch, too late."""
    inner = step.inner
    if inner is None:
        return False
    inside = innermost_unit(model, inner, needs=BACKWARD)
    return inside is not None and inside is not unit and inside.loop is not None and bool(inside.of(STEP))


def _past_module_resets(model: ModuleModel, zeros, own):
    """Where every reset is a module's own `zero_grad()` (`self.generator.zero_grad()`), all in one body with the steps:
    the steps of an optimizer over another module that has layers of its own, built after the reset modules (so none
    of them can hold those layers), whose gradients therefore no reset reaches. None where a reset is anything else."""
    scopes = {id((zero.inner if zero.inner is not None else zero.event).ctx.scope): zero for zero in zeros}
    if len(scopes) != 1:
        return None
    zero = next(iter(scopes.values()))
    scope = (zero.inner if zero.inner is not None else zero.event).ctx.scope
    # (a helper's part stands for its first reset and step: its body's own events are every one of them)
    events = [e for e in model.events if e.ctx.scope is scope] if zero.inner is not None else [
        (z.inner if z.inner is not None else z.event) for z in zeros]
    modules, texts = [], []
    for event in (e for e in events if is_zeroing(e)):
        if type(event) is not CallEvent or event.role != "zero_grad" or event.receiver is None:
            return None
        prov = model.prov(event.receiver)
        if prov is None or prov.kind is not Kind.MODULE or not isinstance(prov.node, ast.Call):
            return None
        modules.append(prov)
        texts.append(f"`{model.text(event.node).strip()}`")
    if not modules:
        return None
    resets = ", ".join(texts[:2])
    found, seen = [], set()
    for step in own:
        inner = step.inner if step.inner is not None else step.event
        if inner.ctx.scope is not scope:
            continue
        for event in [e for e in events if type(e) is CallEvent and e.role == "step"] if step.inner is not None else [inner]:
            if type(event) is not CallEvent or event.role != "step" or event.receiver is None or id(event) in seen:
                continue
            seen.add(id(event))
            owner = _stepped_module(model, event)
            if owner is not None and _fresh_layers(owner) and all(_built_before(model, module, owner) for module in modules):
                found.append((Part(STEP, step.event, event) if step.inner is not None else step, model.text(event.receiver), resets))
    return found


def _stepped_module(model: ModuleModel, step: CallEvent):
    """The module whose parameters the stepped optimizer updates, all of them: `X.optimizer` made in X's class over
    `self.parameters()`, or an optimizer over `net.parameters()` of a module named `net` here."""
    receiver = step.receiver
    params = optimizer_params(model, receiver)
    if len(params) != 1:
        return None
    (label,) = params
    if label == "self.*" and isinstance(receiver, ast.Attribute) and not (isinstance(receiver.value, ast.Name) and receiver.value.id == "self"):
        return model.prov(receiver.value)  # (made in the module's own __init__: its `self`)
    if label.endswith(".*") and "." not in label[:-2]:
        scope = step.ctx.scope
        while scope is not None and label[:-2] not in scope.bindings:
            scope = scope.parent
        return scope.bindings.get(label[:-2]) if scope is not None else None
    return None


def _fresh_layers(module) -> bool:
    """The module makes parameters of its own when it is built: a torch.nn layer with weights, or a workspace module whose
    __init__ builds one."""
    if module is None or module.kind is not Kind.MODULE or not isinstance(module.node, ast.Call):
        return False
    cls = module.module_class
    if isinstance(cls, str):
        return bool(api.layer_parameters(cls.rsplit(".", 1)[-1]))
    return isinstance(cls, ClassInfo) and cls.is_module and any(
        value is not None and value.kind is Kind.MODULE and isinstance(value.module_class, str) and isinstance(value.node, ast.Call)
        and (api.layer_parameters(value.module_class.rsplit(".", 1)[-1]) or value.elements) for value in cls.attributes.values())


def _built_before(model: ModuleModel, module, owner) -> bool:
    """`module` was constructed before `owner`, in the same body: it cannot hold the layers `owner` builds."""
    if module.node is owner.node or not isinstance(module.node, ast.Call) or not isinstance(owner.node, ast.Call):
        return False
    parent_of = parents(model, model.tree)
    enclosing = lambda node: next(n for n in _up(parent_of, node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)))  # noqa: E731
    return (module.node.lineno, module.node.col_offset) < (owner.node.lineno, owner.node.col_offset) and \
        enclosing(module.node) is enclosing(owner.node)


def _up(parent_of, node):
    while node is not None:
        node = parent_of.get(id(node))
        yield node if node is not None else ast.Module(body=[], type_ignores=[])


def _reset_through_others(model: ModuleModel, step: CallEvent, zeroed: frozenset) -> bool:
    """Every parameter the stepped optimizer updates is one the other optimizers' resets zero (InfoGAN's info optimizer
    over `chain(G.parameters(), D.parameters())`, with G's and D's own optimizers zeroed each iteration): its gradients
    are reset too, by those calls."""
    stepped = step.receiver
    if step.node.args and optimizer_of(model, step) == model.text(step.node.args[0]):
        stepped = step.node.args[0]  # scaler.step(opt)
    params = optimizer_params(model, stepped)
    return bool(params) and all(covers(zeroed, label) for label in params)


def _fresh_each_iteration(model: ModuleModel, unit, step) -> bool:
    """The stepped optimizer is made, in the loop's own body, over the parameters of a module also made there (`net =
    Net(); opt = SGD(net.parameters())` at the top of each iteration, maybe wrapped after): every iteration trains new
    parameters, whose gradients start empty, so nothing accumulates across iterations."""
    event = step.event
    if unit.loop is None or step.inner is not None or not isinstance(event, CallEvent) or not isinstance(event.receiver, ast.Name):
        return False
    binds = [b for b in model.of_type(BindEvent) if b.ctx.scope is unit.scope and b.node in unit.body]
    made = _made_before(binds, event.receiver.id, event.seq)
    if made is None:
        return False
    owners = [node.func.value for node in ast.walk(made.node.value) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Attribute) and node.func.attr in ops.MODULE_ITERATORS]
    return bool(owners) and all(isinstance(owner, ast.Name) and _made_before(binds, owner.id, made.seq) is not None
                                for owner in owners)


def _never_runs(model: ModuleModel, zero) -> bool:
    """The reset sits in a branch of an `if` on a parameter of its function (`if params is not None and ...:`) that is
    never taken: every call of the function in this module passes `None` there or leaves it at a `None` default, and
    the body never binds it again."""
    if zero.inner is not None:
        return False
    function = zero.event.ctx.scope.function
    function = function.context_of or function if function is not None else None
    node = function.node if function is not None else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    parent_of = parents(model, node)
    child, parent = zero.event.node, parent_of.get(id(zero.event.node))
    while parent is not None and child is not node:
        if isinstance(parent, ast.If) and child is not parent.test:
            names = {n.id for n in ast.walk(parent.test) if isinstance(n, ast.Name)}
            nones = {name: None for name in names if _none_from_every_call(model, function, name)}
            truth = test_truth(parent.test, nones) if nones else None
            if truth is not None and truth is not (child in parent.body):
                return True
        child, parent = parent, parent_of.get(id(parent))
    return False


def _none_from_every_call(model: ModuleModel, function, name: str) -> bool:
    """Every call of `function` this module shows (one at least) gives its parameter `name` None, which its body never
    rebinds."""
    node = function.node
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    if name not in {a.arg for a in [*positional, *args.kwonlyargs]} or stores(node, name):
        return False
    calls = {id(call.node): call for call in model.callers(function) if call.function is function}
    if not calls:
        return False
    for call in calls.values():
        if any(isinstance(a, ast.Starred) for a in call.node.args) or any(k.arg is None for k in call.node.keywords):
            return False
        passed = callsite.argument_for(call, {name})
        if passed is None:
            default = defaults.get(name)
            if not (isinstance(default, ast.Constant) and default.value is None) or _passes(call, function, name):
                return False
        elif not (isinstance(passed, ast.Constant) and passed.value is None):
            return False
    return True


def _passes(call, function, name: str) -> bool:
    """The call gives the parameter a value (argument_for also answers None for an argument it cannot place)."""
    node = function.node
    params = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    if function.cls is not None and call.receiver is not None and params:
        params = params[1:]
    return name in params[:len(call.node.args)] or any(k.arg == name for k in call.node.keywords)


def _callers_pass_no_optimizer(model: ModuleModel, step) -> bool:
    """The stepped object is a parameter of the function, judged an optimizer by its name (`ema_optimizer`), and every
    call this module shows passes it something known that is not one (`WeightEMA(model, ema_model)`, whose `step()`
    averages weights): no gradient of it accumulates."""
    event = step.event
    prov = event.receiver_prov if isinstance(event, CallEvent) else None
    function = event.ctx.scope.function if isinstance(event, CallEvent) else None
    if step.inner is not None or prov is None or prov.origin != "param" or function is None or not isinstance(event.receiver, ast.Name):
        return False
    callers = [call for call in model.callers(function) if call.function is function]
    if not callers:
        return False
    for call in callers:
        passed = callsite.argument_for(call, {event.receiver.id})
        value = model.prov(passed) if passed is not None else None
        if value is None or value.kind is Kind.OPTIMIZER or not _plain_class(value.module_class):
            return False
    return True


def _plain_class(cls) -> bool:
    """A class of this workspace that derives from nothing but `object`: not an optimizer of any library."""
    return isinstance(cls, ClassInfo) and all(isinstance(base, ast.Name) and base.id == "object" for base in cls.node.bases) \
        and not cls.node.keywords


def _made_before(binds: list, name: str, seq: int):
    """The loop body's last statement before `seq` that makes `name` from a call not involving it (`Net()`, not
    `wrap(net)`, which keeps the same parameters); None if the last one that does not involve it is something else."""
    for bind in sorted((b for b in binds if b.name == name and b.seq < seq), key=lambda b: b.seq, reverse=True):
        value = getattr(bind.node, "value", None)
        if value is None:
            return None
        if any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(value)):
            continue  # a wrapper of the same object
        return bind if isinstance(value, ast.Call) else None
    return None


def _same_optimizer(a: str, b: str | None) -> bool:
    """`self.opt` and `self.opt.optimizer` (a wrapper and what it wraps) name the same optimizer."""
    return b is not None and (a == b or a.startswith(b + ".") or b.startswith(a + "."))


def _optimizer_receiver(model: ModuleModel, event: CallEvent) -> bool:
    from ..analysis.training import optimizer_like

    receiver = event.receiver
    if isinstance(receiver, ast.Call):  # self.optimizers().zero_grad()
        return False
    return optimizer_like(model, receiver)


def _finding(model, unit, step, backwards, missing, seen: set, resets: str | None = None, branch=None, fix=True):
    step_event = step.event
    optimizer = optimizer_of(model, step.inner or step_event) if isinstance(step.inner or step_event, CallEvent) else None
    backward = max((b for b in backwards if b.seq < step.seq), key=lambda b: b.seq, default=backwards[0])
    closure = step_closure(step_event) if isinstance(step_event, CallEvent) and step.inner is None else None
    # (the closure `opt.step(closure)` runs: its own backward is where the gradients pile up)
    closure_backward = backward.inner if closure is not None and backward.event is step_event and isinstance(backward.inner, CallEvent) \
        and backward.inner.ctx.scope.function is closure else None
    backward_node = closure_backward.node if closure_backward is not None else backward.node
    forward = first_forward(unit, model, before=backward.seq)
    roles = []
    if forward is not None:
        roles.append(f"forward `{_short(model, _forward_node(forward))}` (line {forward.node.lineno})")
    roles.append(f"backward `{_short(model, backward_node)}` (line {backward_node.lineno})"
                 + (f" in the closure `{closure.name}` that `{_short(model, step.node)}` runs" if closure_backward is not None else ""))
    step_text = f"step `{_short(model, step.node)}` (line {step.line})"
    if step.inner is not None:
        step_text += f", which reaches `{_short(model, step.inner.node)}` (line {step.inner.node.lineno})"
    roles.append(step_text)
    where = unit.describe()
    if missing:
        others = f"the gradients of other modules ({resets})" if resets else "other optimizers' gradients"
        message = (f"{where} steps `{missing}` ({step_text}) but only resets {others}: `{missing}`'s "
                   f"gradients accumulate across iterations. Call `{missing}.zero_grad()` before its forward")
    else:
        outside = _zero_grad_outside(model, unit)
        message = f"{where} runs {', '.join(roles[:-1])} and {roles[-1]}, but never resets the gradients"
        if branch is not None:
            message += (f" on that path (`{_short(model, branch.node)}` at line {branch.node.lineno} runs only in the other "
                        f"branch of the `if`)")
        elif outside is not None:
            message += f" (`{_short(model, outside.node)}` at line {outside.node.lineno} runs outside it)"
        message += (": every step applies the sum of all gradients so far. "
                    f"Call `{optimizer or 'optimizer'}.zero_grad()` in the loop body, before the forward")
    fixes = []
    name = missing or (optimizer if step.inner is None else _at_call_site(model, step))
    if fix and name and not (resets and step.inner is not None):  # (a helper's optimizer, named as the helper names it)
        # (a closure: reset at its top, since LBFGS runs it several times per step)
        anchor = _first_statement(closure.node) if closure_backward is not None else forward_statement(model, unit, backward)
        if anchor is not None and edits.own_line(model, anchor):
            fixes.append(Fix(f"Insert `{name}.zero_grad()` before the forward", Safety.UNSAFE,
                             (edits.insert_before(model, anchor, f"{name}.zero_grad()"),)))
    related = [(backward_node, "gradients are accumulated into `.grad` here")]
    if forward is not None:
        related.insert(0, (_forward_node(forward), "the forward starts here"))
    found = model.finding(RULE, step.node, message, fixes=fixes, related=related, optimizer=name, unit_line=unit.line)
    # (the backward too: that is where the gradients pile up)
    whose = f"`{missing}`'s parameters" if missing else "the parameters"
    cause = (f"`{_short(model, backward_node)}` adds this iteration's gradients into {whose}' `.grad`, on top of every earlier "
             f"iteration's: {where} never resets them before {step_text}. Call `{missing or optimizer or 'optimizer'}.zero_grad()` "
             f"before the forward")
    findings = model.with_cause(found, backward_node, cause, "the step applies the summed gradients here")
    inner = step.inner
    if isinstance(inner, CallEvent) and inner.node.lineno not in {f.span.line for f in findings} \
            and inner.node.lineno not in seen and _only_caller(model, step.event, inner):
        # the helper's own `step()`: where a reader of that helper looks, and where its reset may go
        seen.add(inner.node.lineno)
        here = (f"`{_short(model, inner.node)}` applies {whose}' gradients summed over every iteration of {where}, which runs it "
                f"through `{_short(model, step.node)}` (line {step.line}) and never resets them. Call "
                f"`{_short(model, inner.receiver) if inner.receiver is not None and inner.role == 'step' else 'optimizer'}.zero_grad()` "
                f"right after this step, or in the loop before the forward")
        findings += model.with_cause(found, inner.node, here, "the loop whose steps it applies")[1:]
    return findings


def _first_statement(node) -> ast.stmt | None:
    """The first statement of a function's body after its docstring."""
    body = node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    return body[0] if body else None


def _only_caller(model: ModuleModel, call, inner: CallEvent) -> bool:
    """`call` (in the loop) is the only call of the helper whose own body steps (`inner`): what is said at its step
    holds for every way it runs (a helper also called from a loop that resets is left alone)."""
    function = getattr(call, "function", None)
    if function is None or inner.ctx.scope.function is not function and inner.ctx.scope.function is not None \
            and inner.ctx.scope.function.context_of is not function:
        return False
    return {id(c.node) for c in model.callers(function)} == {id(call.node)}


def _at_call_site(model: ModuleModel, step) -> str | None:
    """The optimizer a helper steps, as the caller names it: the argument passed for the helper's parameter, or a
    global / `self.` attribute visible in both places."""
    inner = step.inner
    call = step.event
    if not isinstance(inner, CallEvent) or not isinstance(call, CallEvent) or call.function is None:
        return None
    receiver = inner.node.args[0] if inner.method == "step" and inner.node.args and inner.receiver is not None and \
        inner.role != "step" else inner.receiver
    function = call.function
    if inner.ctx.scope.function is not function:
        return None  # stepped deeper down: keep to one level
    if isinstance(receiver, ast.Name):
        args = function.node.args
        names = [a.arg for a in [*args.posonlyargs, *args.args]]
        if receiver.id in names:
            index = names.index(receiver.id) - (1 if function.cls is not None and names and names[0] == "self" else 0)
            keyword = next((kw for kw in call.node.keywords if kw.arg == receiver.id), None)
            if keyword is not None:
                return model.text(keyword.value)
            return model.text(call.node.args[index]) if 0 <= index < len(call.node.args) else None
        module_scope = call.ctx.scope
        while module_scope.parent is not None:
            module_scope = module_scope.parent
        global_name = receiver.id in module_scope.bindings and receiver.id not in inner.ctx.scope.bindings
        return receiver.id if global_name else None
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
        caller = call.ctx.scope.function
        if caller is not None and caller.cls is not None and caller.cls is function.cls:
            return model.text(receiver)
    return None


def _forward_node(event):
    if isinstance(event, CallEvent):
        return event.node
    value = getattr(event, "value", None)
    return value if value is not None else event.node


def _zero_grad_outside(model: ModuleModel, unit):
    """A reset in the same body that runs around the unit rather than in it: before it, or in an enclosing loop."""
    start = min(part.seq for part in unit.parts)
    for event in model.of_type(CallEvent):
        if event.role != "zero_grad" or event.ctx.scope is not unit.scope or unit.contains(event):
            continue
        enclosing = event.ctx.loop
        if enclosing is None and event.seq < start or enclosing is not None and unit.loop is not None and enclosing.contains(unit.loop):
            return event
    return None


def _short(model: ModuleModel, node) -> str:
    text = " ".join(model.text(node).split())
    return text if len(text) <= 40 else text[:37] + "..."
