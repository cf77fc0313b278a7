"""## What it does
Flags a tensor composed from trainable leaves or parameters (`torch.stack`, `cat`, arithmetic, `view`,
indexing, a helper function…) that is built once, outside a training loop, and used inside the loop
across `optimizer.step()` — or, in straight-line code, used again after a `step()` without being rebuilt.
A manual update of the sources in the loop (`w -= lr * w.grad` under `no_grad`, `w.data.sub_(…)`) counts as
a step; a `torch.distributions` object built from such a tensor (`Normal(mu, log_std.exp())`) is composed too,
and so is a trainer's attribute composed in a `setup()`-like method that the training loop never calls again.
A composed tensor bound into a callable once (`crit = functools.partial(f, w=torch.stack([a, b]))`) and called in the
loop is reported at the composition. So is a value with a graph through the parameters (a forward, `pred = model(x)`)
computed once outside the closure of `opt.step(closure)` and backpropagated in it, where the optimizer calls the closure
several times per step (LBFGS): the second call backpropagates through the freed graph.
An attribute of `__init__` is one assigned or registered as a buffer (`self.register_buffer("w", torch.cat([...]))`).
Nothing needs to update the sources when the composition kept tensors for backward (`3 * torch.rand(n, 1,
requires_grad=True)`, `X @ w`, `w.exp()`; not a view or an addition) and every iteration backpropagates a loss
computed through it: the first backward frees what it kept, the second raises. Every statement of the loop that
computes from the stale tensor is reported.

Reported twice: at the use that goes stale, and at the composition itself (the statement to move into the loop).

## Why is this bad?
The composition ran once. `optimizer.step()` updates the leaves in place, but the composed tensor still
holds the values it had when it was built, and its part of the graph was freed by the first
`backward()`. Depending on which ops built it, the second iteration raises "Trying to backward through
the graph a second time", a version-counter error, or — when the composition saved no tensors — trains
silently on stale weights (a conv2d weight stacked from two scalar leaves `a` and `b` once, before the
training loop).

## Example
```python
a = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(-1.2, requires_grad=True)
optimizer = torch.optim.Adam([a, b])
w = torch.stack((a, b))
for step in range(100):
    loss = (w * x).sum()
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for step in range(100):
    w = torch.stack((a, b))  # rebuilt from the current a, b every step
    loss = (w * x).sum()
    ...
```
or compose inside `forward()` / a function called per step.

## Fix safety
Unsafe: the fix copies the composing statement to the top of the loop body; if that statement has side
effects or depends on values changed in the loop, behaviour changes.

## Runtime signature
`RuntimeError: Trying to backward through the graph a second time`, or `one of the variables needed for
gradient computation has been modified by an inplace operation`, or silently stale: the composed tensor
keeps its old value while its sources change.
"""
from __future__ import annotations

import sys

import ast
import re
from dataclasses import replace

from ..analysis import torch_api, uses
from ..analysis.model import BindEvent, CallEvent, InplaceEvent, ModuleModel, UseEvent
from ..analysis.provenance import Kind
from ..analysis.syntax import dotted, statements
from ..analysis.training import step_closure
from ..findings import Fix, Safety, Severity
from . import edits

CODE = "AG002"
NAME = "stale-composed-weight"
SEVERITY = Severity.ERROR
SUMMARY = "Tensor composed from parameters once, outside the training loop, reused across optimizer.step()"
RUNTIME_SIGNATURE = ("RuntimeError: Trying to backward through the graph a second time | modified by an inplace operation | "
                     "silent: composed tensor unchanged after optimizer.step() while its sources changed")
RULE = sys.modules[__name__]


def _is_forward_use(use: UseEvent) -> bool:
    if use.usage not in ("arg", "operand", "receiver", "element"):
        return False
    callee = (use.callee or "").rsplit(".", 1)[-1] if use.callee and not use.callee.startswith(".") else use.callee
    # Uses that read a value without building on it (logging, shape checks, copies, hooks, comparing it with the
    # live parameters: `torch.allclose(before, layer.weight)` after training) are not forward uses.
    if use.usage in ("arg", "receiver") and uses.compares_values(callee):
        return False
    return not (uses.passive_receiver(callee) or uses.is_reporter(callee) or uses.receiver(callee) == uses.ALIAS)


def _leaf_sources(composed_from) -> frozenset:
    """The trainable tensors themselves among the sources, not the modules whose forward made the value (`model.*`)."""
    return frozenset(source for source in composed_from if not source.endswith(".*"))


def _optimizer_may_update(step_events, composed_from) -> bool:
    """False only when every optimizer stepped is known to update none of the composed sources."""
    for step in step_events:
        prov = step.receiver_prov
        if prov is None or not prov.params:
            return True
        for param in prov.params:
            owner = param[:-2] if param.endswith(".*") else None
            if any(source == param or (owner and source.startswith(owner + ".")) for source in composed_from):
                return True
    return not step_events


def _basic_index(node: ast.expr) -> bool:
    """Basic indexing (ints, slices, None, ...) returns a view; lists, tensors and masks copy."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    for item in items:
        if isinstance(item, ast.Slice) or isinstance(item, ast.Constant) and (item.value is None or item.value is Ellipsis
                                                                            or isinstance(item.value, int)):
            continue
        if isinstance(item, ast.UnaryOp) and isinstance(item.operand, ast.Constant):
            continue
        return False
    return True


def _is_view_of_leaf(model: ModuleModel, prov, depth: int = 0) -> bool:
    """The composed tensor is only views of trainable leaves: it shares their storage, so it is never stale."""
    node = prov.node
    source = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and uses.may_return_self(node.func.attr):
        qualname = model.imports.qualname(node.func)
        if qualname is None:
            source = node.func.value
        elif uses.is_view(qualname.rsplit(".", 1)[-1]) and qualname.startswith("torch.") and node.args:
            source = node.args[0]
    elif isinstance(node, ast.Call) and node.args and (model.imports.qualname(node.func) or "").startswith("torch.") \
            and uses.is_view(model.imports.qualname(node.func).rsplit(".", 1)[-1]):
        source = node.args[0]
    elif isinstance(node, ast.Subscript) and _basic_index(node.slice):
        source = node.value
    elif isinstance(node, ast.Attribute) and uses.is_view(node.attr):
        source = node.value
    if source is None or depth > 8:
        return False
    inner = model.prov(source)
    if inner is None or not inner.is_tensor:
        return False
    if inner.is_trainable_leaf:
        return True
    return inner.has_graph and inner.node is not None and _is_view_of_leaf(model, inner, depth + 1)


_BUILDS = (ast.Assign, ast.AugAssign, ast.AnnAssign)  # statements that compute a value from what they read
_DECLARED = re.compile(r"\s+[^\W\d]")  # (what follows the keyword)
_WORD_CHARACTER = re.compile(r"\w")


def _declares(text: str) -> bool:
    r"""Whether `\b(?:global|nonlocal)\s+[^\W\d]` matches somewhere in the text, tried only where the keywords
    occur (str.find): a search of that pattern tries every position of the text (2-10 ms on 2,000 lines). The same
    answer on 17,965 files (corpus, tests, stdlib), ~14x cheaper."""
    for keyword in ("global", "nonlocal"):
        at = text.find(keyword)
        while at >= 0:
            if (at == 0 or not _WORD_CHARACTER.match(text, at - 1)) and _DECLARED.match(text, at + len(keyword)):
                return True
            at = text.find(keyword, at + 1)
    return False


def _globally_rebound(model: ModuleModel) -> set[str]:
    """Names of `global`/`nonlocal` statements. Only statements are visited (no expression holds one), and
    only when the text has such a statement at all (`global_step` is not one): on a 2,000-line script a
    walk of the whole tree cost more than every other rule together."""
    if not _declares(model.source.text):
        return set()
    return {name for node in statements(model.tree.body, (ast.Global, ast.Nonlocal)) for name in node.names}


def _bind_of(model: ModuleModel) -> dict:
    """id of a value's node -> the first bind of that value (for the findings' related line; made when one is found)."""
    found = model.__dict__.get("_ag002_bind_of")
    if found is None:
        found = model.__dict__["_ag002_bind_of"] = {}
        for event in model.of_type(BindEvent):
            if event.prov is not None and event.prov.node is not None:
                found.setdefault(id(event.prov.node), event)
    return found


def check(model: ModuleModel):
    reported = set()
    rebound = None
    for use in model.of_type(UseEvent):
        prov = use.prov
        if not (prov.has_graph and prov.composed_from and not prov.no_grad and _is_forward_use(use)) or _is_view_of_leaf(model, prov):
            continue
        if not _leaf_sources(prov.composed_from):
            # a module's output (`loss = mse(model(x), y)`) reused across steps, or read after one (logged, returned):
            # a graph backpropagated again is AG003/AG017's; here only what `__init__` keeps on `self` (below)
            continue
        if rebound is None:
            # names some function rebinds through `global`/`nonlocal` (a `refresh()` called per step): not provably stale
            rebound = _globally_rebound(model)
        if use.name in rebound:
            continue
        for loop in use.ctx.loops():
            if loop.contains(prov.loop) or use.name in loop.assigned:
                continue
            manual = None if loop.has_step else _manual_update(model, loop, prov.composed_from)
            freeing = None
            if manual is None and not (loop.has_step and _optimizer_may_update(loop.steps, prov.composed_from)):
                # nothing updates the sources, but a backward through the composition frees its saved tensors
                freeing = _freeing_backward(model, loop, prov)
                if freeing is None:
                    continue
            key = (id(prov.node), id(loop))
            # every statement of the loop that reads it is stale; the composition is reported with the first
            again = key in reported
            line = (key, use.ctx.statement.lineno)
            if line in reported or again and not isinstance(use.ctx.statement, _BUILDS):
                break  # (a later read that builds nothing, `print(w.norm())`, is not reported on its own)
            reported.update((key, line))
            step = manual or (loop.steps[0] if loop.steps else None)
            if freeing is not None:
                found = _freed_finding(model, use, prov, _bind_of(model).get(id(prov.node)), freeing, loop)
            else:
                found = _finding(model, use, prov, _bind_of(model).get(id(prov.node)), step, loop=loop)
            yield from found[:1] if again else found
            break
        else:
            # Straight-line: composed, stepped, then used again in the same scope without a rebuild.
            if use.ctx.loop is None and prov.loop is None and use.ctx.epoch > prov.epoch and use.name in use.ctx.scope.bindings:
                key = (id(prov.node), "line")
                if key in reported:
                    continue
                steps = [s for s in model.calls(role="step") if s.ctx.scope is use.ctx.scope and s.ctx.epoch >= prov.epoch and s.seq < use.seq]
                if not _optimizer_may_update(steps, prov.composed_from):
                    continue
                if prov.composed_from == _leaf_sources(prov.composed_from) and not _used_before(model, use, steps[0].seq if steps else use.seq) \
                        and not _saves_for_backward(model, prov.node, 0, leaves_only=True):
                    # composed from leaves before a step, first used after it (`alpha = log_alpha.exp()`, the temperature
                    # step, then the actor loss): one use of the values from before the step, which no backward has
                    # freed and whose ops kept no source the step changes: nothing raises, nothing is reused
                    continue
                reported.add(key)
                yield from _finding(model, use, prov, _bind_of(model).get(id(prov.node)), steps[-1] if steps else None, loop=None)
                continue
            # A function that reads a global/closure composed once, called (directly or through another function)
            # from a training loop: `def predict(x): return x @ W` with `W = U @ V` at module level.
            if use.ctx.loop is not None or use.ctx.scope.function is None or use.name in use.ctx.scope.bindings:
                continue
            for loop in _calling_loops(model, use.ctx.scope.function):
                if not loop.has_step or loop.contains(prov.loop) or use.name in loop.assigned:
                    continue
                if not _optimizer_may_update(loop.steps, prov.composed_from):
                    continue
                key = (id(prov.node), id(loop))
                if key not in reported:
                    reported.add(key)
                    step = loop.steps[0] if loop.steps else None
                    yield from _finding(model, use, prov, _bind_of(model).get(id(prov.node)), step, loop=loop)
                break
    yield from _module_attributes(model)
    yield from _late_attributes(model)
    yield from _bound_by_partial(model)
    yield from _reevaluated_closures(model)


def _reevaluated_closures(model: ModuleModel):
    """`opt.step(closure)` of an optimizer that calls the closure several times per step, updating the parameters in
    between (LBFGS): a value with a graph through those parameters, computed once outside the closure and backpropagated
    in it, is stale from the second call on, and its graph was freed by the first call's backward."""
    for step in model.calls(role="step"):
        optimizer = step.receiver_prov
        # (`LBFGS(params, max_iter=1)` calls it once; a count the code does not show: unknown, silence)
        if optimizer is None or optimizer.kind is not Kind.OPTIMIZER or not torch_api.closure_reevaluated(optimizer.origin, optimizer.node):
            continue
        closure = step_closure(step)
        if closure is None or not isinstance(closure.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first, last = closure.node.lineno, closure.node.end_lineno or closure.node.lineno
        inside = [e for e in model.events if e.ctx.scope.function is closure and e.ctx.via is None]
        backwards = [e for e in inside if type(e) is CallEvent and e.method == "backward" and e.receiver_prov is not None
                     and len(e.node.args) <= 1 and not any(kw.arg in ("retain_graph", "create_graph") or kw.arg is None
                                                           for kw in e.node.keywords)]
        done = set()
        for use in (e for e in inside if type(e) is UseEvent):
            prov = use.prov
            if prov is None or not prov.is_tensor or not prov.has_graph or prov.no_grad or prov.requires_grad is not True \
                    or prov.node is None or first <= getattr(prov.node, "lineno", first) <= last or id(prov.node) in done \
                    or not _is_forward_use(use) or not prov.composed_from or not _optimizer_may_update([step], prov.composed_from):
                continue
            backward = next((b for b in backwards if b.seq > use.seq and id(prov.node) in b.receiver_prov.graph), None)
            if backward is None:
                continue
            done.add(id(prov.node))
            yield from _closure_finding(model, use, prov, step, backward)


def _closure_finding(model, use, prov, step, backward):
    bind = _bind_of(model).get(id(prov.node))
    where = f"line {bind.node.lineno}" if bind is not None else f"line {prov.line}"
    step_text = f"`{' '.join(model.text(step.node).split())}` (line {step.node.lineno})"
    call = f"`{' '.join(model.text(backward.node).split())}` (line {backward.node.lineno})"
    optimizer = model.text(step.receiver) if step.receiver is not None else "the optimizer"
    message = (f"`{use.name}` was computed once, at {where}, outside the closure that {step_text} runs; `{optimizer}` calls the "
               f"closure several times per step and updates the parameters in between, so from the second call on {call} "
               f"backpropagates through a graph the first call freed (\"Trying to backward through the graph a second time\"), "
               f"built from the old parameters. Compute `{use.name}` inside the closure")
    related = [(step.node, "calls the closure several times"), (backward.node, "frees the graph on the first call")]
    if bind is not None:
        related.insert(0, (bind.node, f"`{use.name}` computed here, once"))
    found = model.finding(RULE, use.node, message, related=related, composed=use.name, sources=sorted(prov.composed_from),
                          optimizer=optimizer, loop_line=None)
    if bind is None:
        return [found]
    cause = (f"`{use.name}` is computed here, once, outside the closure that {step_text} runs several times per step: its "
             f"second call backpropagates ({call}) through the graph the first freed. Compute it inside the closure")
    return model.with_cause(found, bind.node, cause, f"`{use.name}` is used here, in the closure")


def _bound_by_partial(model: ModuleModel):
    """`crit = functools.partial(weighted, log_vars=torch.stack([a, b]))` made once, outside a training loop that calls
    `crit(...)` across `optimizer.step()`: the composed argument is bound into the callable as it was then."""
    for event in model.calls():
        if event.qualname != "functools.partial" or event.ctx.loop is not None or event.ctx.via is not None:
            continue
        statement = event.ctx.statement
        if not (isinstance(statement, ast.Assign) and statement.value is event.node and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            continue
        name = statement.targets[0].id
        for argument in [*event.node.args[1:], *(keyword.value for keyword in event.node.keywords)]:
            prov = model.prov(argument)
            if prov is None or not prov.is_tensor or not (prov.has_graph and prov.composed_from and not prov.no_grad) \
                    or not _leaf_sources(prov.composed_from) or _is_view_of_leaf(model, prov):
                continue
            for call in model.calls():
                if type(call.node.func) is not ast.Name or call.node.func.id != name or call.ctx.scope is not event.ctx.scope:
                    continue
                loop = next((loop for loop in call.ctx.loops() if loop.has_step and name not in loop.assigned
                             and _optimizer_may_update(loop.steps, prov.composed_from)), None)
                if loop is None:
                    continue
                yield _partial_finding(model, name, argument, prov, call, loop)
                break
            else:
                continue
            break


def _partial_finding(model: ModuleModel, name: str, argument: ast.expr, prov, call, loop):
    sources = ", ".join(f"`{s}`" for s in sorted(prov.composed_from))
    step = loop.steps[0] if loop.steps else None
    step_text = f"`{' '.join(model.text(step.node).split())}` (line {step.node.lineno})" if step is not None else "`optimizer.step()`"
    text = " ".join(model.text(argument).split())
    message = (f"`{text}` is composed from trainable {sources} once, here, and bound into `{name}` by `functools.partial`; the "
               f"training loop at line {loop.node.lineno} calls `{name}` (line {call.node.lineno}) after {step_text} updates them, "
               f"so every call uses the old values and the graph freed by the first backward. Pass it at each call instead "
               f"(compose it inside the loop)")
    related = [(call.node, f"`{name}` is called here with the stale value")]
    if step is not None:
        related.append((step.node, "the optimizer updates the sources here"))
    return model.finding(RULE, argument, message, related=related, composed=text, sources=sorted(prov.composed_from),
                         loop_line=loop.node.lineno)


def _manual_update(model: ModuleModel, loop, composed_from):
    """An in-place update of one of the sources in the loop, without an optimizer (`W.data += -lr * W.grad`,
    `w -= lr * w.grad` under no_grad): the loop's own "step"."""
    for event in _inplace_events(model):
        if event.ctx.scope is not loop.scope or not loop.contains(event.ctx.loop) or event.form not in ("augassign", "method") \
                or event.reshape:
            continue
        prov = event.prov
        name = dotted(event.target)
        if prov is None or name is None:
            continue
        if prov.is_trainable_leaf and name in composed_from or prov.data_of is not None and prov.data_of in composed_from:
            return event
    return None


def _freeing_backward(model: ModuleModel, loop, prov):
    """The loop's `.backward()` whose loss was computed through the composition (its node is in the loss's graph) and
    which keeps no graph (no retain_graph/create_graph), when some op of the composition saved a tensor for backward:
    the first iteration's backward frees it, the second raises."""
    if not _saves_for_backward(model, prov.node, 0):
        return None
    for backward in loop.backwards:
        loss = backward.receiver_prov
        if type(backward) is not CallEvent or backward.method != "backward" or loss is None or id(prov.node) not in loss.graph:
            continue
        if len(backward.node.args) > 1 or any(kw.arg in ("retain_graph", "create_graph") or kw.arg is None for kw in backward.node.keywords):
            continue
        return backward
    return None


def _saves_for_backward(model: ModuleModel, node, depth: int, leaves_only: bool = False) -> bool:
    """Some torch op of this composition (or of a composed tensor it reads, as bound) keeps a tensor for backward
    (torch's derivatives.yaml): `3 * w`, `X @ w`, `w.exp()` do, `w + 1`, `w.view(-1)`, `w[0]` do not. `leaves_only`:
    keeps one of its inputs that is a leaf requiring grad (`a * b` keeps both; `w.exp()` keeps its result only), whose
    change in place by a step its backward then refuses."""
    if node is None or depth > 4:
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp):
            op, operands = torch_api.operator_op(sub.op), [sub.left, sub.right]
        elif isinstance(sub, ast.Call):
            op, operands = _op_of(model, sub)
        else:
            continue
        grads = [_requires_grad(model.prov(operand)) for operand in operands]
        if op is None:
            if leaves_only and isinstance(sub, ast.Call) and any(
                    _requires_grad(model.prov(arg)) for arg in [*sub.args, *(kw.value for kw in sub.keywords), getattr(sub.func, "value", None)]):
                return True  # (an op the table does not know, `F.softplus(w)`, given a tensor that requires grad: it may keep it)
            continue
        if not leaves_only and torch_api.saves_for_backward(op, grads):
            return True
        if leaves_only and any(index < len(operands) and _is_trainable_leaf(model.prov(operands[index]))
                               for index in torch_api.saved_inputs(op, grads)):
            return True
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            inner = model.prov(sub)
            bind = _bind_of(model).get(id(inner.node)) if inner is not None and inner.has_graph and inner.node is not None else None
            if bind is not None and bind.value is not None and bind.value is not node \
                    and _saves_for_backward(model, bind.value, depth + 1, leaves_only):
                return True
    return False


def _is_trainable_leaf(prov) -> bool:
    return prov is not None and prov.is_trainable_leaf


def _used_before(model: ModuleModel, later: UseEvent, seq: int) -> bool:
    """The name `later` reads held the same composed value in a computation of the same scope before event `seq` (a
    step): `later` is its reuse. (Not a `self.x` read there that another call's store made.)"""
    node, scope = later.prov.node, later.ctx.scope
    return any(use.seq < seq and use.name == later.name and use.ctx.scope is scope and use.prov.node is node and _is_forward_use(use)
               for use in model.of_type(UseEvent))


def _op_of(model: ModuleModel, call: ast.Call):
    """The torch op a call runs and its tensor operands in the op's order: `torch.mm(a, b)` (a, b), `a.exp()` (a)."""
    qualname = model.imports.qualname(call.func)
    if qualname is not None:
        if qualname.startswith("torch.") and qualname.count(".") == 1:
            return qualname[len("torch."):], list(call.args)
        return None, []
    if isinstance(call.func, ast.Attribute):
        receiver = model.prov(call.func.value)
        if receiver is not None and receiver.is_tensor:
            return call.func.attr, [call.func.value, *call.args]
    return None, []


def _requires_grad(prov) -> bool:
    return prov is not None and prov.is_tensor and prov.requires_grad is True


def _freed_finding(model, use, prov, bind, backward, loop):
    sources = ", ".join(f"`{s}`" for s in sorted(prov.composed_from))
    where = f"line {bind.node.lineno}" if bind is not None else f"line {prov.line}"
    call = f"`{' '.join(model.text(backward.node).split())}` (line {backward.node.lineno})"
    message = (f"`{use.name}` was composed once, at {where}, outside this loop, from leaves that require grad ({sources}), by ops "
               f"that keep tensors for backward; {call} frees them in the first iteration, so the second raises \"Trying to backward "
               f"through the graph a second time\". Recompute `{use.name}` inside the loop (or `.detach()` it if it needs no gradient)")
    fixes = []
    if bind is not None and edits.own_line(model, bind.node) and bind.ctx.scope is loop.scope and not _reads_composed(model, bind) \
            and loop.node.body[0].lineno > bind.node.lineno:
        fixes.append(Fix(f"Recompute `{use.name}` at the top of the loop body", Safety.UNSAFE,
                         (edits.insert_before(model, loop.node.body[0], edits.statement_text(model, bind.node)),)))
    related = [(backward.node, "this backward frees the composition's saved tensors")]
    if bind is not None:
        related.insert(0, (bind.node, f"`{use.name}` composed here, once"))
    found = model.finding(RULE, use.node, message, fixes=fixes, related=related, composed=use.name, sources=sorted(prov.composed_from),
                          optimizer=None, loop_line=loop.node.lineno)
    if bind is None:
        return [found]
    cause = (f"`{use.name}` is composed from leaves that require grad ({sources}) here, once, outside the loop at line {loop.node.lineno} "
             f"that backpropagates through it ({call}): the first backward frees what its ops saved, the second iteration's "
             f"raises. Compose it inside the loop")
    return model.with_cause(found, bind.node, cause, f"`{use.name}` is used here, after its graph was freed")


def _inplace_events(model: ModuleModel) -> list:
    found = model.__dict__.get("_ag002_inplace")
    if found is None:
        found = model.__dict__["_ag002_inplace"] = list(model.of_type(InplaceEvent))
    return found


def _calling_loops(model: ModuleModel, function, depth: int = 0):
    """The loops that call `function`, directly or through functions called without a loop of their own."""
    if depth > 3:
        return
    for call in model.calls():
        if call.function is not function:
            continue
        loops = list(call.ctx.loops())
        if loops:
            yield from loops
        elif call.ctx.scope.function is not None and call.ctx.scope.function is not function:
            yield from _calling_loops(model, call.ctx.scope.function, depth + 1)


def _self_loads(method, attr: str):
    """`self.<attr>` reads in a method, in source order (`self` being the method's first parameter)."""
    args = [*method.node.args.posonlyargs, *method.node.args.args]
    if not args:
        return []
    me = args[0].arg
    found = [node for node in ast.walk(method.node) if isinstance(node, ast.Attribute) and node.attr == attr
             and isinstance(node.value, ast.Name) and node.value.id == me and isinstance(node.ctx, ast.Load)]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def _later_builds(method, loads: list, first) -> list:
    """The reads among `loads` after `first`, one per line, that are inside an assignment (a value computed from them)."""
    spans = [(stmt.lineno, stmt.end_lineno or stmt.lineno) for stmt in ast.walk(method.node) if isinstance(stmt, _BUILDS)]
    found, lines = [], {first.lineno}
    for node in loads:
        if node.lineno not in lines and any(start <= node.lineno <= end for start, end in spans):
            lines.add(node.lineno)
            found.append(node)
    return found


def _self_stores(method, attr: str) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.ctx, (ast.Store, ast.Del))
               for node in ast.walk(method.node))


def _built_per_call(model: ModuleModel, cls) -> set:
    """Ids of the constructions of `cls` made inside a method of a module and not kept on `self` there (`return
    BatchLinear(weights=w, biases=b)` in a hypernetwork's forward): each call builds a new instance from what it
    composed then, so that instance's state is not composed once."""
    found, calls = set(), model.calls_by_node()
    for event in filter(None, map(calls.get, cls.instances)):
        function = event.ctx.scope.function
        statement = event.ctx.statement
        if function is None or function.cls is None or not function.cls.is_module:
            continue
        kept = isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
            isinstance(target, ast.Attribute) for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target]))
        if not kept:
            found.add(id(event.node))
    return found


def _module_attributes(model: ModuleModel):
    """`self.w_eff = self.scale * self.weight` in a class's `__init__`: a plain attribute with a graph, composed once at
    construction. An nn.Module's forward() reuses its freed graph and construction-time values on every call; in any
    other class (a trainer), a read inside a training loop of another method does across `optimizer.step()`."""
    for cls in model.classes.values():
        if "__init__" not in cls.methods:
            continue
        # the class's own table, then each instance this module constructs (one instance may hold a graph another lacks)
        candidates, seen = [], set()
        per_call = _built_per_call(model, cls)
        if per_call and per_call >= set(cls.instances):
            continue  # (every instance this module makes is made anew by each call that uses it)
        for table in [cls.known_attributes(), *(table for ident, table in cls.instances.items() if ident not in per_call)]:
            for attr, prov in table.items():
                if attr not in seen and prov is not None and prov.has_graph and prov.composed_from and not prov.no_grad and prov.node is not None:
                    seen.add(attr)
                    candidates.append((attr, prov))
        for attr, prov in candidates:
            if _is_view_of_leaf(model, prov):
                continue
            if all(source.endswith(".*") and not source.startswith("self.") for source in prov.composed_from):
                continue  # only outputs of modules this instance does not own (a helper's local layers): nothing trains them
            others = [method for name, method in cls.methods.items() if name != "__init__"]
            if any(_self_stores(method, attr) for method in others):
                continue  # refreshed somewhere else (a `reset()`/`_update()` method): not provably stale
            for method in others:
                loads = _self_loads(method, attr)
                loop = None
                if not cls.is_module:
                    placed = [(node, _training_loop(model, method, node, prov)) for node in loads]
                    loop = next((where for _, where in placed if where is not None), None)
                    if loop is None and loads and _steps_and_is_called_in_a_loop(model, method, prov):
                        loop = next(iter(_calling_loops(model, method)))
                    else:
                        loads = [node for node, where in placed if where is not None]
                if not loads:
                    continue
                node = loads[0]
                where = cls.attribute_nodes.get(attr)
                sources = ", ".join(f"`{s}`" for s in sorted(prov.composed_from))
                if loop is not None and loop.scope.node is not method.node:
                    message = (f"`self.{attr}` is composed from trainable {sources} once, in `__init__` (line {prov.line}), and read in "
                               f"`{method.name}()`, which steps the optimizer and is called by the loop at line {loop.node.lineno}: from the "
                               f"second call on it keeps its old values and its freed graph. Recompute it in `{method.name}()`")
                elif loop is None:
                    message = (f"`self.{attr}` is composed from trainable {sources} once, in `__init__` (line {prov.line}), and read in "
                               f"`{method.name}()`: every call reuses its construction-time values and its graph, which the first "
                               f"`backward()` frees and `optimizer.step()` makes stale. Compute it in `{method.name}()` (or a property)")
                else:
                    message = (f"`self.{attr}` is composed from trainable {sources} once, in `__init__` (line {prov.line}), and read in "
                               f"the training loop of `{method.name}()` (line {loop.node.lineno}): after the first `optimizer.step()` it "
                               f"keeps its old values and its freed graph. Recompute it inside the loop")
                found = model.finding(RULE, node, message, related=[(where, f"`self.{attr}` composed here, once")] if where is not None else [],
                                      composed=f"self.{attr}", sources=sorted(prov.composed_from), optimizer=None,
                                      loop_line=loop.node.lineno if loop is not None else None)
                yield from model.with_cause(found, where, _composed_once(attr, sources, "`__init__`", method, node), f"`self.{attr}` is read here, stale")
                # (the method's other statements that compute from it are stale too: each reported, the composition once)
                for other in _later_builds(method, loads, node):
                    yield replace(found, span=model.span(other))
                break


def _late_attributes(model: ModuleModel):
    """`self.w = torch.cat([self.a, self.b])` in a `setup()` method, read in another method's training loop that never
    calls `setup()` again: composed once, stale after the first `optimizer.step()` (as in `__init__`, but set later)."""
    for cls in model.classes.values():
        if cls.is_module:
            continue  # a module's forward() is called by others: which call comes first is beyond the file
        for attr, prov in list(cls.late.items()):
            if prov is None or not prov.has_graph or not prov.composed_from or prov.no_grad or prov.node is None or attr in cls.attributes:
                continue
            if _is_view_of_leaf(model, prov):
                continue
            setters = [method for method in cls.methods.values() if method.name != "__init__" and _self_stores(method, attr)]
            if len(setters) != 1:
                continue
            setter = setters[0]
            for method in cls.methods.values():
                if method is setter or method.name == "__init__":
                    continue
                placed = [(node, _training_loop(model, method, node, prov)) for node in _self_loads(method, attr)]
                node, loop = next(((node, loop) for node, loop in placed if loop is not None), (None, None))
                if loop is None or any(calling is loop or loop.contains(calling) for calling in _calling_loops(model, setter)):
                    continue  # not in a training loop, or the loop calls the setter again: rebuilt every iteration
                sources = ", ".join(f"`{s}`" for s in sorted(prov.composed_from))
                message = (f"`self.{attr}` is composed from trainable {sources} once, in `{setter.name}()` (line {prov.line}), and read "
                           f"in the training loop of `{method.name}()` (line {loop.node.lineno}), which never calls `{setter.name}()` "
                           f"again: after the first `optimizer.step()` it keeps its old values and its freed graph. Recompute it inside the loop")
                found = model.finding(RULE, node, message, related=[(prov.node, f"`self.{attr}` composed here, once")],
                                      composed=f"self.{attr}", sources=sorted(prov.composed_from), optimizer=None, loop_line=loop.node.lineno)
                yield from model.with_cause(found, prov.node, _composed_once(attr, sources, f"`{setter.name}()`", method, node),
                                            f"`self.{attr}` is read here, stale")
                break


def _composed_once(attr: str, sources: str, where: str, method, read) -> str:
    return (f"`self.{attr}` is composed from trainable {sources} here, once, in {where}, and read in `{method.name}()` "
            f"(line {read.lineno}) after the optimizer updates them: it keeps its old values and its freed graph. Compose it "
            f"where it is read (or in a property)")


def _steps_and_is_called_in_a_loop(model: ModuleModel, method, prov) -> bool:
    """A training-step method (`train_step()` reads, backpropagates and steps) that a loop calls: each call after the
    first reuses what the previous one stepped."""
    steps = [step for step in model.calls(role="step") if step.ctx.scope.node is method.node]
    return bool(steps) and _optimizer_may_update(steps, prov.composed_from) and any(True for _ in _calling_loops(model, method))


def _training_loop(model: ModuleModel, method, node, prov):
    """The innermost loop of `method` around `node` that steps an optimizer which may update the composed sources."""
    found = None
    for loop in model.loops:
        if loop.scope.node is not method.node or not loop.has_step:
            continue
        start, end = loop.node.lineno, loop.node.end_lineno or loop.node.lineno
        if start <= node.lineno <= end and _optimizer_may_update(loop.steps, prov.composed_from):
            if found is None or loop.node.lineno > found.node.lineno:
                found = loop
    return found


def _reads_composed(model, bind) -> bool:
    """The composing statement reads another composed tensor (`dist = Normal(mean, std)` with `std = exp(log_std)`):
    recomputing that statement alone would still use the stale one."""
    value = bind.value
    if value is None:
        return False
    for node in ast.walk(value):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            prov = model.prov(node)
            if prov is not None and prov.has_graph:
                return True
    return False


def _finding(model, use, prov, bind, step, loop):
    sources = ", ".join(f"`{s}`" for s in sorted(prov.composed_from))
    where = f"line {bind.node.lineno}" if bind is not None else f"line {prov.line}"
    step_text = f"`{' '.join(model.text(step.node).split())}` (line {step.node.lineno})" if step is not None else "`optimizer.step()`"
    if loop is not None:
        message = (f"`{use.name}` was composed from trainable {sources} once, at {where}, outside this training loop; "
                   f"after {step_text} updates them, `{use.name}` keeps its old values and its freed graph. "
                   f"Recompute `{use.name}` inside the loop")
    else:
        message = (f"`{use.name}` was composed from trainable {sources} at {where} and is used again after {step_text}; "
                   f"it still holds the values from before the step. Recompute `{use.name}` first")
    fixes = []
    if bind is not None and edits.own_line(model, bind.node) and (loop is None or bind.ctx.scope is loop.scope) \
            and not _reads_composed(model, bind):
        anchor = loop.node.body[0] if loop is not None else use.ctx.statement
        if anchor.lineno > bind.node.lineno:
            text = edits.statement_text(model, bind.node)
            title = f"Recompute `{use.name}` at the top of the loop body" if loop is not None else f"Recompute `{use.name}` before this use"
            fixes.append(Fix(title, Safety.UNSAFE, (edits.insert_before(model, anchor, text),)))
    related = []
    if bind is not None:
        related.append((bind.node, f"`{use.name}` composed here, once"))
    if step is not None:
        related.append((step.node, "the optimizer updates the sources here"))
    found = model.finding(RULE, use.node, message, fixes=fixes, related=related, composed=use.name, sources=sorted(prov.composed_from),
                          optimizer=model.text(step.receiver) if getattr(step, "receiver", None) is not None else None,
                          loop_line=loop.node.lineno if loop is not None else None)
    if bind is None:
        return [found]
    # (the composition too: that is the statement to move)
    if loop is not None:
        cause = (f"`{use.name}` is composed from trainable {sources} here, once, outside the training loop at line "
                 f"{loop.node.lineno} that uses it (line {use.node.lineno}) after {step_text}: from the second iteration on it "
                 f"keeps its old values and its freed graph. Compose it inside the loop")
    else:
        cause = (f"`{use.name}` is composed from trainable {sources} here and used again (line {use.node.lineno}) after "
                 f"{step_text} without being rebuilt: it still holds the values from before the step. Recompute it after the step")
    return model.with_cause(found, bind.node, cause, f"`{use.name}` is used here, stale")
