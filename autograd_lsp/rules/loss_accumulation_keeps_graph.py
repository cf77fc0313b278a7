"""## What it does
Flags a tensor that carries an autograd graph (a loss, a model output) accumulated across the iterations of
a loop — `total += loss`, `total = total + loss` (also `loss if total is None else total + loss`), `losses.append(loss)`, `history["loss"].append(loss)`,
`stats["loss"] += loss`, `by_step[step] = loss` (a key the loop changes), `total.add_(loss)` (also into a getter's tensor, `stats.slot("loss").add_(loss)`), or `meter.update(loss, n)` of a method
that adds its argument to its object's state (also `logger.store(loss=loss)` of a `def store(self, **kw)` keeping each
keyword's value, `for k, v in kw.items()`; also through a function of the workspace that hands it on,
`self.sum += allreduce(val.cpu())`; then reported at the method's statement too) — where the accumulator is never
backpropagated: either the loop already calls `backward()` on that loss (itself, another name bound to it, through a
helper such as `accelerator.backward(loss)`, in the closure whose loss `optimizer.step(closure)` returns, or as
`losses[-1].backward()` of what it just appended), or every later use of the accumulator only logs it (`print`,
f-strings, `%` formatting of a tuple, `.item()`, `writer.add_scalar`…, `torch.is_tensor(total)`, `isinstance(total, torch.Tensor)`, `if losses:`; also returned to the callers of a function
the script itself runs, `main()` -> `train()` -> `validate()`; also after `total = total
/ n`), or the loop steps an optimizer over
weights the accumulated graph saved (however the accumulator is handed on, no backward can go through it). A reset under an `if` that the
accumulation does not share (every `log_every` steps) does not end it.
A Lightning-style `training_step` that appends its returned loss to `self.<list>` (never cleared) is the
same bug across calls, and so is a method that a loop calls once per iteration on one object (`for batch in data:
agent.learn(batch)`, where `learn` backpropagates and runs `self.stats.add(loss)`), and so is a function that backpropagates
and keeps its loss in an object every caller's loop passes, made before it (`for b in data: train_step(b, history)`). A dict kept whole (`logs.append(log)`) that a called function built and returned with one
entry holding the graph (a loss's `logging_output = {"loss": loss, ...}`) is reported at that entry too, where
`.detach()` goes. A loss a helper computes with a criterion its caller passes (`def score(self, x, y, criterion):
return criterion(self(x), y)`) is known at each call, from the criterion passed.

## Why is this bad?
The accumulator is a tensor too: `total + loss` records an addition node whose inputs are every
iteration's graph. Nothing is freed until `total` dies, so memory grows with each iteration — activations
included when the loop does not call `backward()` (an evaluation loop without `torch.no_grad()`).

## Example
```python
total_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss
print(total_loss / len(loader))
```

## Use instead
```python
    total_loss += loss.item()   # a Python float: no graph
```
or `loss.detach()` when the accumulator must stay a tensor (e.g. summed on the GPU, `.item()` once).

## Fix safety
Both fixes are safe here, because the rule only fires when nothing backpropagates through the
accumulator (detaching a returned dict's entry is unsafe: other code may read it from the dict). `.item()` is offered first when the loss is known to be a scalar and every use of the
accumulator also works on a float (printing, logging, arithmetic, comparisons); otherwise `.detach()`,
which keeps the accumulator a tensor, comes first.

## Runtime signature
silent: memory grows every iteration (the accumulator keeps one graph per iteration alive; the
accumulator has a `grad_fn`).
"""
from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass, replace

from ..analysis.model import BindEvent, CallEvent, Event, ItemStoreEvent, Loop, ModuleModel, ThroughEvent
from ..analysis import callsite, torch_api as api, uses
from ..analysis.provenance import Kind, Provenance, flatten
from ..analysis.syntax import none_default_parameters, nodes, parents, statements
from ..analysis.training import (BACKWARD, EPOCH_HOOKS, STEP_HOOKS, Part, TrainingUnit, backward_target, called_module, keeps_own_weights,
                                 step_closure, step_owners, training_units)
from ..findings import Edit, Fix, Safety, Severity
from ..analysis.walker import label as _label
from .tree_order import breadth_first

CODE = "AG015"
NAME = "loss-accumulation-keeps-graph"
SEVERITY = Severity.WARNING
SUMMARY = "Loss tensor accumulated across loop iterations without .item()/.detach(): every graph stays alive"
RUNTIME_SIGNATURE = "silent: memory grows every iteration; the accumulator has a grad_fn"
RULE = sys.modules[__name__]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
PASSIVE, FLOAT_OK, TENSOR, BACKWARDED, ESCAPE = "passive", "float", "tensor", "backward", "escape"


@dataclass
class Accumulation:
    event: Event
    statement: ast.stmt
    accumulator: str  # label or expression text (`total`, `self.losses`, `history["loss"]`)
    base: str  # the name the accumulator lives in (`history` for `history["loss"]`)
    value: ast.expr  # what is accumulated
    prov: Provenance | None  # None: unknown (e.g. `criterion(model(x), y)` with `model` a parameter)
    form: str  # "augassign" | "add" | "append" | "update" | "store"
    helper: CallEvent | None = None  # `train_step(batch)`: a helper that backpropagates the loss it returns
    keeper: ast.stmt | None = None  # "update": the statement of the method (of this module) that keeps the value


def check(model: ModuleModel):
    reported = set()
    for accumulation in _accumulations(model):
        key = (accumulation.accumulator, id(accumulation.statement))
        if key in reported:
            continue
        finding = _judge(model, accumulation)
        if finding is not None:
            reported.add(key)
            entry = finding.data.get("entry")
            if entry is not None:
                if id(entry) in reported:
                    yield finding
                    continue
                reported.add(id(entry))  # (a dict display of a helper kept by two loops: its entry once)
                cause = (f"`{model.text(entry)}` puts a tensor with its graph into the dict that `{' '.join(model.text(accumulation.statement).split())[:60]}`"
                         f" (line {finding.span.line}) keeps across iterations: keep `{_suffixed(model.text(entry), entry, 'detach')}` "
                         f"(or `.item()`) here")
                yield from model.with_cause(finding, entry, cause, "the dict holding it is kept here")
                continue
            if accumulation.keeper is None or id(accumulation.keeper) in reported:
                yield finding
                continue
            reported.add(id(accumulation.keeper))  # (once per method statement, whichever call reports first)
            cause = (f"`{' '.join(model.text(accumulation.keeper).split())[:60]}` keeps what `{model.text(accumulation.event.node)}` at "
                     f"line {finding.span.line} passes, a tensor with its graph, across iterations: "
                     f"keep a detached copy (`.detach()`, `.item()`) here")
            yield from model.with_cause(finding, accumulation.keeper, cause, "the tensor with its graph is passed here")


# -- what is accumulated ------------------------------------------------------------------------------
def _graph_value(prov: Provenance | None) -> Provenance | None:
    if prov is None:
        return None
    for item in flatten([prov]) if prov.kind is Kind.SEQUENCE else [prov]:
        if item is not None and item.kind is Kind.TENSOR and item.has_graph and not item.no_grad and not item.detached:
            return item
        if item is not None and item.kind is Kind.MAPPING:  # `{"loss": loss, "n": n}`: a value of it that keeps a graph
            found = next((value for value in map(_graph_value, item.elements) if value is not None), None)
            if found is not None:
                return found
    return None


UNKNOWN = object()


def _candidate(model: ModuleModel, value: ast.expr, scope=None):
    """The accumulated value's graph provenance; UNKNOWN when the walk could not tell (a name fed by unknown calls);
    the helper's CallEvent for `train_step(batch)` returning a loss it backpropagated."""
    helper = _helper_backpropagated(model, value)
    if helper is not None:
        return helper
    prov = model.prov(value)
    made = prov.node if prov is not None else _bound_call(model, value, scope)
    if isinstance(value, ast.Name) and isinstance(made, ast.Call):
        helper = _helper_backpropagated(model, made)  # `total` unpacked from what `train_step(...)` returned
        if helper is not None:
            return helper
    found = _graph_value(prov)
    if found is not None:
        return found
    if prov is None and _loss_name(value) is not None:
        return UNKNOWN
    return None


def _bound_call(model: ModuleModel, value: ast.expr, scope) -> ast.Call | None:
    """The call a name the walk could not follow was last bound from before it in its scope (`residual =
    opt.step(closure)`)."""
    if not isinstance(value, ast.Name) or scope is None:
        return None
    index = model.__dict__.get("_ag015_bound_calls")
    if index is None:  # (scope, name) -> the assignments of a call to that name, once per model
        index = model.__dict__["_ag015_bound_calls"] = {}
        for event in model.of_type(BindEvent):
            stmt = event.node
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is event.target and isinstance(stmt.value, ast.Call):
                index.setdefault((id(event.ctx.scope), event.name), []).append(stmt)
    before = [stmt for stmt in index.get((id(scope), value.id), ()) if stmt.lineno < value.lineno]
    return max(before, key=lambda stmt: stmt.lineno).value if before else None


def _helper_backpropagated(model: ModuleModel, value: ast.expr) -> CallEvent | None:
    """`train_step(batch)`, a same-workspace function that calls `loss.backward()` and returns that `loss` itself (also
    the closure an `optimizer.step(closure)` runs)."""
    if not isinstance(value, ast.Call):
        return None
    event = _call_events(model).get(id(value))
    function = event.function if event is not None else None
    if function is None and event is not None:
        function = step_closure(event)
    if function is None or function.scope is None or not function.calls_backward:
        return None
    names = {name for scope, name in _backpropagated_names(model) | _backpropagated_holders(model) if scope == id(function.scope)}
    for node in statements(function.node.body, (ast.Return, *_DEFS)):  # (its own returns: not a nested def's)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name) and node.value.id in names:
            return event
    return None


def _holder(target) -> str | None:
    """`losses` in `losses[-1].backward()` / `out["loss"].backward()` / `out.loss.backward()`: the container of the loss."""
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        return target.value.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id != "self":
        return target.value.id
    return None


def _loss_name(value: ast.expr) -> str | None:
    """`loss`, `loss * x.size(0)`, `loss.cpu()`: the one name whose tensor is accumulated."""
    if isinstance(value, ast.Name):
        return value.id
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mult, ast.Div)):
        left, right = _loss_name(value.left), _loss_name(value.right)
        return left if right is None else (right if left is None else None)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("cpu", "to", "cuda", "squeeze", "mean",
                                                                                                    "sum") and not value.args[1:]:
        return _loss_name(value.func.value)
    return None


def _accumulator(model: ModuleModel, node: ast.expr) -> tuple[str, str] | None:
    name = _label(node)
    if name is not None:
        return name, name
    if isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Constant, ast.Name)):
        base = _label(node.value)
        if base is not None:
            return model.text(node), base
    return None


def _accumulations(model: ModuleModel):
    # Binds, then calls (the events' index by kind): a bind's statement is an assignment, a call's an expression
    # statement, so the two never report the same statement, and findings are sorted by place afterwards.
    for event in model.of_type(BindEvent):
        stmt = event.node
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
            prov = _candidate(model, stmt.value, event.ctx.scope)
            if prov is not None and _sums_without_grad(model, event):
                continue  # (asked last: the grad mode of a body may ask its callers')
            if prov is not None and _label(stmt.target) == event.name and not _number(model, event):
                yield _accumulation(event, stmt, event.name, event.name, stmt.value, prov, "augassign")
            elif prov is not None and isinstance(stmt.target, ast.Subscript) and _label(stmt.target.value) == event.name:
                names = _accumulator(model, stmt.target)  # `stats["loss"] += loss`, `totals[name] += value`
                if names is not None:
                    yield _accumulation(event, stmt, names[0], names[1], stmt.value, prov, "augassign")
        elif isinstance(stmt, ast.Assign) and _sum_of(stmt.value) is not None:
            binop = _sum_of(stmt.value)
            for mine, other in ((binop.left, binop.right), (binop.right, binop.left)):
                if _label(mine) == event.name and _label(event.target) == event.name:
                    prov = _candidate(model, other, event.ctx.scope)
                    if prov is not None and not _sums_without_grad(model, event):
                        yield _accumulation(event, stmt, event.name, event.name, other, prov, "add")
                    break
    for event in model.of_type(ItemStoreEvent):
        # `step_losses[step] = loss`: each iteration stores under a new key (a name the loop rebinds, checked by _judge)
        stmt = event.node
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is event.target and event.value is not None:
            base = _label(event.target.value)
            prov = _candidate(model, event.value, event.ctx.scope) if base is not None and _key_names(event.target) else None
            if prov is not None:
                yield _accumulation(event, stmt, base, base, event.value, prov, "store")
    for event in model.of_type(CallEvent):
        if event.function is not None and event.receiver is not None and \
                isinstance(event.ctx.statement, ast.Expr) and _label(event.receiver) is not None:
            # `meter.update(loss, n)`: a method that adds what it is given to its own state (an average meter)
            for value, keeper in _kept_by_method(model, event):
                prov = _candidate(model, value, event.ctx.scope)
                if prov is not None:
                    name = _label(event.receiver)
                    accumulation = _accumulation(event, event.ctx.statement, name, name, value, prov, "update")
                    accumulation.keeper = keeper if _defined_here(model, event.function) else None
                    yield accumulation
                    break
        elif event.method == "add_" and event.function is None and len(event.node.args) == 1 and not event.node.keywords \
                and isinstance(event.ctx.statement, ast.Expr) and event.ctx.statement.value is event.node \
                and not _sums_without_grad(model, event):
            # `total.add_(loss)`, `stats.get("loss").add_(loss)`: an in-place sum into a tensor kept across calls
            # (a receiver of unknown kind may be any object with an `add_` method: no tensor sum is known)
            names = _accumulator(model, event.receiver)
            receiver = model.prov(event.receiver)
            tensor = receiver is not None and receiver.is_tensor
            if names is None:
                names = _getter(model, event.receiver)
                tensor = names is not None
            prov = _candidate(model, event.node.args[0], event.ctx.scope) if tensor else None
            if prov is not None and names is not None:
                yield _accumulation(event, event.ctx.statement, names[0], names[1], event.node.args[0], prov, "augassign")
        elif event.method in uses.APPENDERS and event.receiver is not None and uses.list_append(event.node):
            value = event.node.args[-1]
            prov = _candidate(model, value, event.ctx.scope)
            names = _accumulator(model, event.receiver)
            if prov is None and names is not None and (id(event.ctx.scope), names[1]) in _backpropagated_holders(model):
                prov = UNKNOWN  # `losses.append(total)` of a value the walk could not follow, then `losses[-1].backward()`
            if prov is not None and names is not None and isinstance(event.ctx.statement, ast.Expr):
                yield _accumulation(event, event.ctx.statement, names[0], names[1], value, prov, "append")


def _sums_without_grad(model: ModuleModel, event: Event) -> bool:
    """A sum taken where autograd records nothing (`with torch.no_grad(): total += loss`): the result has no graph,
    whatever its operands had (an appended tensor keeps its own graph: not for appends)."""
    return model.grad_enabled(event.ctx) is False


def _getter(model: ModuleModel, node: ast.expr) -> tuple[str, str] | None:
    """`stats.slot("loss")` of a method of this module whose body only returns its object's state (`return
    self.slots[name]`): that state, kept on `stats`."""
    event = _call_events(model).get(id(node)) if isinstance(node, ast.Call) else None
    function = event.function if event is not None else None
    if function is None or function.cls is None or not isinstance(node.func, ast.Attribute) or _label(node.func.value) is None:
        return None
    body = [stmt for stmt in function.node.body if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                                                        or isinstance(stmt, ast.Assert))]
    me = function.node.args.args[0].arg if function.node.args.args else None
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None or not _own_state(body[0].value, me):
        return None
    if not _state_holds_tensors(model, function, body[0].value):
        return None
    return model.text(node), _label(node.func.value)


def _state_holds_tensors(model: ModuleModel, function, state: ast.expr) -> bool:
    """Every assignment of the class's methods to that state (`self.slots[name] = torch.zeros(())`, `self.total =
    ...`) stores a known tensor, or a parameter every visible call passes one in (a `None` slot cannot take `add_`)."""
    item = isinstance(state, ast.Subscript)
    text = model.text(state.value if item else state)
    stored = [(method, stmt.value) for method in function.cls.methods.values() for stmt in nodes(method.node)
              if isinstance(stmt, ast.Assign) and not (isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
              and any(isinstance(t, ast.Subscript) == item and model.text(t.value if item else t) == text for t in stmt.targets)]
    return bool(stored) and all(_tensor_or_passed_tensors(model, method, value) for method, value in stored)


def _tensor_or_passed_tensors(model: ModuleModel, method, value: ast.expr) -> bool:
    prov = model.prov(value)
    if prov is not None:
        return prov.is_tensor
    calls = [call for call in model.callers(method) if call.function is method] if isinstance(value, ast.Name) else []
    passed = [callsite.argument_for(call, {value.id}) for call in calls]
    return bool(passed) and all(arg is not None and (p := model.prov(arg)) is not None and p.is_tensor for arg in passed)


def _sum_of(value: ast.expr) -> ast.BinOp | None:
    """`total + loss`, also as a branch of `loss if total is None else total + loss` (the first item starts the sum)."""
    if isinstance(value, ast.IfExp):
        sums = [branch for branch in (value.body, value.orelse) if isinstance(branch, ast.BinOp) and isinstance(branch.op, ast.Add)]
        return sums[0] if len(sums) == 1 else None
    return value if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) else None


def _key_names(target: ast.Subscript) -> set[str]:
    """The names a stored item's key is made of (`step`, `f"{epoch}/{i}"`)."""
    return {n.id for n in nodes(target.slice) if isinstance(n, ast.Name)}


def _new_key_each_iteration(acc: Accumulation, loop: Loop) -> bool:
    """`history[step] = loss` stores under a key the loop rebinds (its variable, a counter it increments): a new item
    each iteration, all kept; a constant key only replaces the last one."""
    return bool(_key_names(acc.statement.targets[0]) & loop.assigned)


def _kept_by_method(model: ModuleModel, call: CallEvent) -> list[tuple[ast.expr, ast.stmt]]:
    """The arguments of a method call that the method accumulates into an attribute of its object: `self.sum += val * n`,
    `self.total = self.total + val`, `self.history.append(val)` for its parameter `val` (not through `.item()` & co.),
    each with the method's statement that keeps it."""
    function = call.function
    node = function.node
    if function.cls is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    args = node.args
    positional = [*args.posonlyargs, *args.args][1:]
    passed = {param.arg: [arg] for param, arg in zip(positional, call.node.args) if not isinstance(arg, ast.Starred)}
    if args.vararg is not None:  # `def add(self, *values)`: what is passed past the named parameters
        passed[args.vararg.arg] = [arg for arg in call.node.args[len(positional):] if not isinstance(arg, ast.Starred)]
    named = {a.arg for a in [*positional, *args.kwonlyargs]}
    for keyword in call.node.keywords:
        if keyword.arg in named:
            passed[keyword.arg] = [keyword.value]
        elif keyword.arg is not None and args.kwarg is not None:  # `def record(self, **metrics)`
            passed.setdefault(args.kwarg.arg, []).append(keyword.value)
    if not passed:
        return []
    kept = []
    for name, stmt in _accumulated_params(model, node):
        for value in passed.get(name, ()):
            if all(value is not other for other, _ in kept):
                kept.append((value, stmt))
    return kept


def _accumulated_params(model: ModuleModel, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, ast.stmt]]:
    """The parameters whose values a method adds to its object's state, with the statement that adds each, in the order
    of its statements (once per method and model: a method is called from many places)."""
    cache = model.__dict__.setdefault("_accumulated_params", {})
    found = cache.get(node)
    if found is None:
        found = cache[node] = _find_accumulated_params(model, node)
    return found


def _find_accumulated_params(model: ModuleModel, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, ast.stmt]]:
    me = node.args.args[0].arg if node.args.args else "self"
    names = []
    items = _items_of_params(node)
    for stmt in breadth_first(node):  # (the order of the parameters decides the value reported)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and _own_state(stmt.target, me):
            added = stmt.value
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _own_state(stmt.targets[0], me) and \
                isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add):
            added = stmt.value.right if _label(stmt.value.left) == _label(stmt.targets[0]) else (
                stmt.value.left if _label(stmt.value.right) == _label(stmt.targets[0]) else None)
        elif isinstance(stmt, ast.Call) and uses.list_append(stmt) and _own_state(stmt.func.value, me):
            added = stmt.args[-1]
        else:
            continue
        names.extend((items.get(name, name), stmt) for name in sorted(_carried_params(added, model))
                     if not _not_a_tensor_here(model, node, stmt, name))
    if names:  # a parameter the method rebinds (`value = float(value)`) no longer holds what the caller passed
        rebound = {n.id for n in nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        names = [(name, stmt) for name, stmt in names if name not in rebound]
    return names


def _not_a_tensor_here(model: ModuleModel, function: ast.AST, stmt: ast.AST, name: str) -> bool:
    """`stmt` runs only where `name` failed a tensor test: the `else` of `if torch.is_tensor(v)`, the body of `if not
    isinstance(v, torch.Tensor)` (the tensor branch converts)."""
    parent_of = parents(model, function)
    child, parent = stmt, parent_of.get(id(stmt))
    while parent is not None and parent is not function:
        if isinstance(parent, ast.If):
            test, negated = parent.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, True
            tested = api.tensor_test(test, model.imports.qualname)
            if isinstance(tested, ast.Name) and tested.id == name and \
                    any(child is s for s in (parent.body if negated else parent.orelse)):
                return True
        child, parent = parent, parent_of.get(id(parent))
    return False


def _items_of_params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Loop variables that take the items of a parameter (`for v in values`, `for i, v in enumerate(values)`): what
    is added through them is what the caller passed in that parameter."""
    params = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]
              if a is not None}
    stores = Counter(n.id for n in nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    items = {}
    for loop in nodes(node):
        if not isinstance(loop, ast.For):
            continue
        source, target = loop.iter, loop.target
        method = source.func.attr if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and not source.args else None
        if isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and source.func.id == "enumerate" \
                and len(source.args) == 1 and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            source, target = source.args[0], target.elts[1]
        elif method == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            source, target = source.func.value, target.elts[1]  # `for name, value in metrics.items()`
        elif method == "values":
            source = source.func.value
        if isinstance(source, ast.Name) and source.id in params and isinstance(target, ast.Name) and stores[target.id] == 1:
            items[target.id] = source.id  # (a loop variable bound again, `value = float(value)`, holds something else)
    return items


def _own_state(target: ast.expr, me: str) -> bool:
    """`self.sum`, `self.sums[i]`: state of the method's own object."""
    while isinstance(target, ast.Subscript):
        target = target.value
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me


def _carried_params(value: ast.expr, model: ModuleModel | None = None, depth: int = 0) -> set[str]:
    """The names whose tensor `value` carries on (`val`, `val * n`, `val.mean()`, `reduce_mean(val.cpu())` of a function
    of the workspace that returns what it is given, scaled): the call site tells which holds a graph. None through a cut
    (`val.item()`, `float(val)`)."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mult, ast.Div)):
        return _carried_params(value.left, model, depth) | _carried_params(value.right, model, depth)
    name = _loss_name(value)
    if name is not None:
        return {name}
    if isinstance(value, ast.Call) and model is not None and depth < 2:
        return {carried for argument in _passed_on(model, value, depth) for carried in _carried_params(argument, model, depth + 1)}
    return set()


def _passed_on(model: ModuleModel, call: ast.Call, depth: int) -> list[ast.expr]:
    """The arguments of a call of a workspace function that every `return` of its body carries on (`return t * scale`)."""
    event = _call_events(model).get(id(call))
    function = event.function if event is not None else None
    if function is None or not isinstance(function.node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or any(isinstance(arg, ast.Starred) for arg in call.args):
        return []
    params = [a.arg for a in [*function.node.args.posonlyargs, *function.node.args.args]]
    if function.cls is not None and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.node.decorator_list):
        params = params[1:]  # (a method called on its object: the first parameter is the object)
    returns = [n.value for n in statements(function.node.body, (ast.Return, *_DEFS)) if isinstance(n, ast.Return)]
    if not returns or any(value is None for value in returns):
        return []
    carried = set.intersection(*(_carried_params(value, model, depth + 1) for value in returns))
    passed = dict(zip(params, call.args))
    passed.update({k.arg: k.value for k in call.keywords if k.arg in params})
    return [passed[name] for name in params if name in carried and name in passed]


def _call_events(model: ModuleModel) -> dict:
    calls = model.__dict__.get("_ag015_calls")
    if calls is None:
        calls = model.__dict__["_ag015_calls"] = {id(event.node): event for event in model.of_type(CallEvent)}
    return calls


def _defined_here(model: ModuleModel, function) -> bool:
    """A function of this module (not one of another module that the call resolved to)."""
    return any(info is function for info in model.functions.values())


def _accumulation(event, stmt, accumulator, base, value, found, form) -> Accumulation:
    if isinstance(found, CallEvent):
        return Accumulation(event, stmt, accumulator, base, value, None, form, helper=found)
    return Accumulation(event, stmt, accumulator, base, value, None if found is UNKNOWN else found, form)


def _number(model: ModuleModel, event: BindEvent) -> bool:
    """`total += loss` where the result is known to hold no graph (a float accumulator fed a float)."""
    prov = event.prov
    return prov is not None and prov.kind is Kind.NUMBER


# -- is it kept across iterations, and never backpropagated? -------------------------------------------
def _judge(model: ModuleModel, acc: Accumulation):
    event = acc.event
    key = (id(event.ctx.scope), _loss_name(acc.value))
    if acc.prov is None and acc.helper is None and key not in _backpropagated_names(model) and \
            not (isinstance(acc.value, ast.Name) and key in _backpropagated_holders(model)) and \
            not (acc.form == "append" and (key[0], acc.base) in _backpropagated_holders(model)):  # (`losses[-1].backward()`)
        return None  # unknown value, and no `name.backward()` that would tell us it has a graph
    loop = next((loop for loop in event.ctx.loops() if not _reset_each_iteration(loop.node.body, acc)), None)
    hook = None
    if loop is None:
        hook = _step_hook(model, event, acc) or _called_each_iteration(model, event, acc) or _passed_each_iteration(model, event, acc)
        if hook is None:
            return None
    elif not _defined_before(model, acc, loop) or acc.form == "store" and not _new_key_each_iteration(acc, loop):
        return None
    elif acc.form == "append" and _bounded_deque(model, acc):
        return None  # (`collections.deque(maxlen=n)` drops its oldest entry: it keeps the last n graphs, nothing grows)
    elif not loop.forwards and not loop.is_training and _reset_by_enclosing(loop, acc):
        # an inner loop summing pieces of one forward (per-class or per-head losses), the sum started again by the
        # loop around it: it lives one outer iteration and shares that iteration's graph; nothing grows
        return None
    elif _written_out(loop) and loop.parent is not None and _reset_each_iteration(loop.parent.node.body, acc) \
            and not _moved_on(loop.parent.node, acc):
        # an inner loop over a written-out tuple (`for model, opt in ((ref, ref_opt), (test, test_opt)):`, one step of
        # each model, their losses compared): as many graphs as the tuple has entries, the list made anew on every
        # pass of the loop around it (not only on some), and not handed on to a list that outlives it
        return None
    backward = Part(BACKWARD, acc.helper) if acc.helper is not None else _per_iteration_backward(model, acc, loop, hook)
    if acc.prov is None and backward is None:
        return None  # unknown value: only a backward of the very same tensor tells us it has a graph
    if backward is None and getattr(hook, "passed_in", False):
        return None  # (kept in the caller's object: the caller may backpropagate the sum; not followed)
    uses = _uses(model, acc, skip=_last_item_target(model, acc, backward))
    if BACKWARDED in uses:
        return None
    stepped = _stepped_over(model, acc, loop) if backward is None and hook is None and loop is not None and acc.prov is not None \
        and (ESCAPE in uses or not uses) else None  # (handed on, or never read again: yet unusable after the step)
    if backward is None and hook is None and stepped is None and (ESCAPE in uses or not uses):
        return None  # the accumulated graph may be wanted (summed losses backpropagated later, or by a caller)
    if backward is None and hook is None and loop is not None and not loop.is_training and acc.prov is not None:
        if not loop.forwards and not _from_forward(model, acc.prov):
            return None  # no forward anywhere in it, no backward, no step: a one-off computation over parameters (a
            # pruning score per neuron), not losses kept across the iterations of a training loop
        if acc.prov.scalar is not True:
            return None  # outputs collected step by step (an RNN unrolled over time: `outs.append(h)`, stacked
            # after the loop) are the forward itself; only a loss, one number per iteration, is kept for nothing
    return _finding(model, acc, loop, hook, backward, uses, stepped)


def _stepped_over(model: ModuleModel, acc: Accumulation, loop: Loop) -> CallEvent | None:
    """An optimizer step in the loop that changes weights a forward of the accumulated graph saved (fed a tensor that
    requires grad, or saving them whatever it is fed): after it no backward can go through the accumulator, whatever
    is done with it later, so it only holds memory."""
    forwards = [event for event in loop.forwards if id(event.node) in acc.prov.graph and event.ctx.via is None]
    for step in loop.steps:
        owners = step_owners(model, step) if step.ctx.via is None else []
        for forward in forwards:
            target = forward.receiver if forward.method == "forward" else forward.node.func
            name = model.text(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
            if name is None or not any(name == owner or name.startswith(owner + ".") for owner in owners):
                continue
            if keeps_own_weights(model, called_module(model, forward)) or any(
                    p is not None and p.is_tensor and p.requires_grad for p in map(model.prov, forward.node.args)):
                return step
    return None


def _backpropagated_names(model: ModuleModel) -> set:
    return _backpropagated(model)[0]


def _backpropagated_holders(model: ModuleModel) -> set:
    """(scope, name) of containers one of whose items is backpropagated (`out["loss"].backward()`)."""
    return _backpropagated(model)[1]


def _backpropagated(model: ModuleModel) -> tuple[set, set]:
    found = model.__dict__.get("_ag015_backpropagated")
    if found is None:
        found = (set(), set())
        helpers = _through_targets(model)
        for call in model.of_type(CallEvent):
            if call.role == "backward" or call.method == "manual_backward":
                target, _ = backward_target(model, call)
            elif id(call.node) in helpers:
                target = helpers[id(call.node)]  # `accelerator.backward(loss)` of a helper that backpropagates it
            else:
                continue
            if isinstance(target, ast.Name):
                found[0].add((id(call.ctx.scope), target.id))
                alias = _alias_before(model, call.ctx.scope, target.id, call.seq)
                if alias is not None:  # `loss = losses` then `loss.backward()`: the same tensor
                    found[0].add((id(call.ctx.scope), alias.alias_of))
            elif _holder(target) is not None:
                found[1].add((id(call.ctx.scope), _holder(target)))
        model.__dict__["_ag015_backpropagated"] = found
    return found


def _alias_before(model: ModuleModel, scope, name: str, seq: int) -> BindEvent | None:
    """The binding `name = other` (another name) that `name` holds at `seq`, when its last binding before it is one."""
    index = model.__dict__.get("_ag015_binds")
    if index is None:  # (scope, name) -> its bindings in order, once per model
        index = model.__dict__["_ag015_binds"] = {}
        for event in model.of_type(BindEvent):
            index.setdefault((id(event.ctx.scope), event.name), []).append(event)
    last = None
    for event in index.get((id(scope), name), ()):
        if event.seq < seq and (last is None or event.seq > last.seq):
            last = event
    return last if last is not None and last.alias_of is not None else None


def _through_target(event: ThroughEvent) -> ast.expr | None:
    """The caller's argument that a helper's body backpropagates (`accelerator.backward(loss)` of a class of the
    workspace whose method calls `loss.backward()`); None when it backpropagates something else."""
    receiver = event.receiver
    return receiver if receiver is not None and event.through is not None and any(arg is receiver for arg in event.through.args) else None


def _through_targets(model: ModuleModel) -> dict:
    """id of a helper call -> the caller's argument it backpropagates: from the walk's ThroughEvents, or, for a value the
    walk could not follow (`loss = outputs.loss` of an unknown model), a helper whose `<param>.backward()` is of the
    parameter the argument lands on."""
    found = model.__dict__.get("_ag015_through")
    if found is None:
        found = model.__dict__["_ag015_through"] = {}
        for event in model.calls("backward", through=True):
            if type(event) is ThroughEvent and _through_target(event) is not None:
                found.setdefault(id(event.through), _through_target(event))
        backpropagated: dict = {}  # id of a function -> the names its own `name.backward()` calls differentiate
        for event in model.calls("backward"):
            function = event.ctx.scope.function
            target, _ = backward_target(model, event)
            if function is not None and isinstance(target, ast.Name):
                backpropagated.setdefault(id(function), set()).add(target.id)
        for call in model.of_type(CallEvent):
            if call.function is not None and id(call.function) in backpropagated and id(call.node) not in found:
                argument = callsite.argument_for(call, backpropagated[id(call.function)])
                if argument is not None:
                    found[id(call.node)] = argument
    return found


def _written_out(loop: Loop) -> bool:
    """A `for` over a tuple or list written out in the code: as many iterations as it has entries, no more."""
    node = loop.node
    return isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, (ast.Tuple, ast.List)) \
        and not any(isinstance(element, ast.Starred) for element in node.iter.elts)


def _reset_by_enclosing(loop: Loop, acc: Accumulation) -> bool:
    outer = loop.parent
    while outer is not None:
        if _reset_in(outer.node.body, acc):
            return True
        if outer.forwards or outer.is_training:
            return False  # it outlives the iterations of a training loop in between (an epoch's per-key sums)
        outer = outer.parent
    return False


def _reset_each_iteration(body: list[ast.stmt], acc: Accumulation) -> bool:
    """The accumulator is re-created on every pass through `body`: a reset under an `if` that does not also hold the
    accumulation (`if update % report_every == 0: ...; loss_sum = 0`) lets it outlive the iterations in between."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            if _inside(acc.statement, stmt):
                branch = stmt.body if any(_inside(acc.statement, inner) for inner in stmt.body) else stmt.orelse
                if _reset_each_iteration(branch, acc):
                    return True
            continue
        if _reset_in([stmt], acc):
            return True
    return False


def _reset_in(body: list[ast.stmt], acc: Accumulation) -> bool:
    """The accumulator is re-created inside this body (so it does not outlive an iteration of it)."""
    for stmt in body:
        for node in ast.walk(stmt):
            if node is acc.statement:
                continue
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node is not acc.statement:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(_label(target) in (acc.accumulator, acc.base) for target in targets):
                    return True
                # (`self.values, self.masks = [], []`: each name of a written-out tuple is bound anew)
                if any(isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List))
                       and len(target.elts) == len(node.value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts)
                       and any(_label(element) in (acc.accumulator, acc.base) for element in target.elts) for target in targets):
                    return True
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "clear" and \
                    _label(node.func.value) == acc.base:
                return True
            elif isinstance(node, ast.Delete) and any(acc.base in ast.unparse(target) for target in node.targets):
                return True
    return False


def _bounded_deque(model: ModuleModel, acc: Accumulation) -> bool:
    """The accumulator was last bound, in this scope, to `collections.deque(..., maxlen=n)` with an `n` given (not None)."""
    calls = model.calls_by_node()
    bound = None
    for event in model.of_type(BindEvent):
        if event.seq >= acc.event.seq:
            break
        if event.name == acc.base and event.ctx.scope is acc.event.ctx.scope:
            bound = event
    stmt = bound.ctx.statement if bound is not None else None
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
    event = calls.get(id(value)) if isinstance(value, ast.Call) else None
    if event is None or event.qualname != "collections.deque":
        return False
    size = next((kw.value for kw in value.keywords if kw.arg == "maxlen"), value.args[1] if len(value.args) > 1 else None)
    if size is None or isinstance(size, ast.Constant) and size.value is None:
        return False
    # (a parameter defaulting to None, `def run(window=None): deque(maxlen=window)`, may leave it unbounded)
    function = bound.ctx.scope.function
    return not (isinstance(size, ast.Name) and function is not None and size.id in none_default_parameters(function.node))


def _moved_on(outer: ast.AST, acc: Accumulation) -> bool:
    """`everything.extend(pair)`, `history.append(pair)`, `kept += pair` in the loop around: its graphs outlive it."""
    for node in ast.walk(outer):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in uses.ADDS_ITEMS \
                and any(_label(arg) in (acc.accumulator, acc.base) for arg in node.args):
            return True
        if isinstance(node, ast.AugAssign) and _label(node.value) in (acc.accumulator, acc.base):
            return True
    return False


def _defined_before(model: ModuleModel, acc: Accumulation, loop: Loop) -> bool:
    if acc.base.startswith("self."):
        return True
    for event in model.events:
        if event.seq >= acc.event.seq:
            break
        if isinstance(event, BindEvent) and event.name == acc.base and event.ctx.scope is acc.event.ctx.scope and \
                not any(l is loop for l in event.ctx.loops()):
            return True
    return False


def _step_hook(model: ModuleModel, event: Event, acc: Accumulation):
    """A per-batch hook (`training_step`) accumulating into `self.x` that no other method resets."""
    function = event.ctx.scope.function
    if function is None or function.cls is None or not acc.base.startswith("self.") or event.ctx.loop is not None or acc.prov is None:
        return None
    unit = next((u for u in training_units(model) if u.function is function), None)
    if unit is None:
        return None
    for name, method in function.cls.methods.items():
        if name == "__init__" or method is function or name in EPOCH_HOOKS:
            continue  # (cleared once an epoch: it still grows through the epoch's batches)
        if _reset_in(method.node.body, acc):
            return None
    return unit if _returns_graph(model, function, acc.prov) or unit.of(BACKWARD) else None


def _called_each_iteration(model: ModuleModel, event: Event, acc: Accumulation):
    """A method keeping a value on its object (`self.stats.add(loss)` in `learn`) that every visible call runs once per
    iteration of a loop, on an object made before that loop (`for batch in data: agent.learn(batch)`): each call adds
    to the same accumulator. A unit of the method's own body: its own backward is the iteration's."""
    function = event.ctx.scope.function
    if function is None or function.cls is None or function.name == "__init__" or not acc.base.startswith("self.") \
            or event.ctx.loop is not None or acc.prov is None or function.name in STEP_HOOKS:
        return None
    calls = [call for call in model.callers(function) if call.function is function]
    if not calls or _reset_each_iteration(function.node.body, acc):
        return None  # (`self.losses = []` at the top of the method: each call starts it again)
    attr = acc.base[len("self."):]
    for call in calls:
        loop, receiver = call.ctx.loop, call.receiver
        if call.ctx.via is not None or loop is None or not isinstance(receiver, ast.Name):
            return None
        if receiver.id != "self" and (receiver.id in loop.assigned or _reset_in(
                loop.node.body, replace(acc, accumulator=f"{receiver.id}.{attr}", base=f"{receiver.id}.{attr}"))):
            return None  # (an object, or its accumulator, made again each iteration)
    for name, method in function.cls.methods.items():
        if name != "__init__" and method is not function and _reset_in(method.node.body, acc):
            return None
    parts = [Part(BACKWARD, e) for e in model.calls(role="backward") if e.ctx.scope.function is function and e.ctx.via is None]
    return TrainingUnit(function.node, function.scope, function=function, parts=parts)


def _passed_each_iteration(model: ModuleModel, event: Event, acc: Accumulation):
    """A plain function keeping a value in an object its caller passes (`history.append(loss)` of its parameter
    `history`), where every visible call runs once per iteration of a loop and passes an object made before that loop
    (`for batch in data: train_step(model, batch, history)`): each call adds to the same accumulator. A unit of the
    function's body, whose own backward is the iteration's (without one it is not judged: `passed_in`)."""
    function = event.ctx.scope.function
    if function is None or function.cls is not None or event.ctx.loop is not None or acc.prov is None or event.ctx.via is not None:
        return None
    root = acc.base.split(".", 1)[0]
    node = function.node
    if root not in {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]} or any(
            isinstance(n, ast.Name) and n.id == root and not isinstance(n.ctx, ast.Load) for n in nodes(node)):
        return None
    # (a call run without grad, `with torch.no_grad(): score(batch, kept)`, keeps losses that have no graph)
    calls = [call for call in model.callers(function) if call.function is function and model.grad_enabled(call.ctx) is not False]
    if not calls:
        return None
    for call in calls:
        loop, argument = call.ctx.loop, callsite.argument_for(call, {root}) if call.ctx.via is None else None
        if loop is None or not isinstance(argument, ast.Name) or argument.id in loop.assigned or _reset_in(
                loop.node.body, replace(acc, accumulator=argument.id, base=argument.id)):
            return None  # (an object made, or emptied, each iteration)
    parts = [Part(BACKWARD, e) for e in model.calls(role="backward") if e.ctx.scope.function is function and e.ctx.via is None]
    unit = TrainingUnit(node, function.scope, function=function, parts=parts)
    unit.passed_in = True  # type: ignore[attr-defined]
    return unit


def _returns_graph(model: ModuleModel, function, prov: Provenance) -> bool:
    for node in ast.walk(function.node):
        if isinstance(node, ast.Return) and node.value is not None:
            returned = model.prov(node.value)
            if returned is not None and returned.kind is Kind.TENSOR and returned.graph & prov.graph:
                return True
            held = _graph_value(returned) if returned is not None and returned.kind in (Kind.MAPPING, Kind.SEQUENCE) else None
            if held is not None and held.graph & prov.graph:
                return True  # `return log` of `log = {"loss": loss, ...}`
            if isinstance(node.value, ast.Dict):  # Lightning: return {"loss": loss, ...}
                for value in node.value.values:
                    returned = model.prov(value)
                    if returned is not None and returned.kind is Kind.TENSOR and returned.graph & prov.graph:
                        return True
    return False


def _per_iteration_backward(model: ModuleModel, acc: Accumulation, loop: Loop | None, hook):
    """A backward() in the same iteration through the accumulated value's graph: the accumulator can never be
    backpropagated itself (its graph was freed), so it is only kept for logging."""
    every = training_units(model)
    units = [u for u in every if (loop is not None and u.loop is loop) or (hook is not None and u is hook)]
    framework = hook is not None and bool(units)  # (a framework's hook, not a method called in a loop)
    if hook is not None and not units:
        units = [hook]
    fallback = None
    for unit in units:
        for part in unit.of(BACKWARD):
            if not isinstance(part.event, CallEvent) or not isinstance(part.inner or part.event, (CallEvent, ThroughEvent)):
                continue
            keyword = (part.inner or part.event).keyword("retain_graph")
            if keyword is not None and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False):
                continue
            if part.inner is not None:  # `accelerator.backward(loss)`: a helper that backpropagates what it is given
                target = _through_targets(model).get(id(part.event.node))
                if target is None:
                    continue
                prov = model.prov(target)
            else:
                target, prov = backward_target(model, part.event)
            if acc.prov is None:
                if _same_tensor(model, acc, target, part):
                    return part
                continue
            if prov is not None and prov.kind is Kind.TENSOR and prov.graph & acc.prov.graph and id(acc.statement) not in prov.graph:
                if acc.prov.node is not None and id(acc.prov.node) in prov.graph | {id(prov.node)}:
                    return part  # the accumulated value itself was backpropagated
                fallback = fallback or part
    if fallback is not None:
        return fallback
    if framework and _returns_graph(model, hook.function, acc.prov):
        return hook  # the framework backpropagates the returned loss
    return None


def _last_item(target, acc: Accumulation) -> bool:
    """`losses[-1]` of the list `losses` that the accumulation appends to."""
    return acc.form == "append" and isinstance(target, ast.Subscript) and _label(target.value) == acc.base \
        and isinstance(target.slice, ast.UnaryOp) and isinstance(target.slice.op, ast.USub) \
        and isinstance(target.slice.operand, ast.Constant) and target.slice.operand.value == 1


def _last_item_target(model: ModuleModel, acc: Accumulation, backward) -> ast.AST | None:
    """The load of the list in `losses[-1].backward()` when that is the iteration's backward of what it just appended."""
    if not isinstance(backward, Part) or backward.inner is not None or not isinstance(backward.event, CallEvent):
        return None
    target, _ = backward_target(model, backward.event)
    return target.value if _last_item(target, acc) and backward.seq > acc.event.seq else None


def _same_tensor(model: ModuleModel, acc: Accumulation, target, part) -> bool:
    """`loss.backward()` and `total += loss` with no rebinding of `loss` between them; `losses[-1].backward()` after
    `losses.append(...)`."""
    if _last_item(target, acc):
        return part.seq > acc.event.seq
    name = _loss_name(acc.value)
    if name is None:
        return False
    alias = _alias_before(model, acc.event.ctx.scope, target.id, part.seq) if isinstance(target, ast.Name) and target.id != name else None
    if alias is not None and alias.alias_of != name:
        alias = None
    if not (isinstance(target, ast.Name) and (target.id == name or alias is not None) or
            isinstance(acc.value, ast.Name) and _holder(target) == name):
        return False  # `loss.backward()` (or of a name bound to it: `loss = losses`), or `out["loss"].backward()` with `out` accumulated
    if isinstance(target, ast.Subscript) and _element_replaced(acc.event.ctx.scope.node, target, part.event.node, acc.statement):
        return False  # `out["loss"] = out["loss"].detach()` between the backward and `outputs.append(out)`
    seqs = (acc.event.seq, part.seq, alias.seq) if alias is not None else (acc.event.seq, part.seq)
    low, high = min(seqs), max(seqs)
    scope = acc.event.ctx.scope
    for event in model.events:
        if low < event.seq < high and isinstance(event, BindEvent) and event.name == name and event.ctx.scope is scope:
            return False
    return True


def _element_replaced(function: ast.AST, element: ast.Subscript, after: ast.AST, before: ast.stmt) -> bool:
    """An assignment to the same element (`out["loss"] = ...`) on a line between the backward and the accumulation:
    what the container keeps there is no longer the backpropagated tensor."""
    key = (ast.dump(element.value), ast.dump(element.slice))
    first, last = after.lineno, before.lineno
    return any(isinstance(stmt, ast.Assign) and first < stmt.lineno < last
               and any(isinstance(t, ast.Subscript) and (ast.dump(t.value), ast.dump(t.slice)) == key for t in stmt.targets)
               for stmt in ast.walk(function))


# -- how the accumulator is used afterwards -------------------------------------------------------------
def _uses(model: ModuleModel, acc: Accumulation, skip: ast.AST | None = None) -> set[str]:
    """How the accumulator is used after the accumulation (`skip`: the load that the iteration's own backward reads)."""
    scope = acc.event.ctx.scope
    root = scope.node if scope.function is not None else model.tree
    if acc.base.startswith("self.") and scope.function is not None and scope.function.cls is not None:
        roots = [method.node for method in scope.function.cls.methods.values()]
    else:
        roots = [root]
    kinds: set[str] = set()
    for root in roots:
        parent_of = parents(model, root)
        for node in _loads(model, root, acc.base):
            if node is skip or _inside(node, acc.statement):
                continue
            kinds.add(_use(model, node, parent_of, depth=0))
    if acc.base.startswith("self.") and BACKWARDED not in kinds:
        kinds |= _instance_uses(model, acc.base[len("self"):], roots)
    return kinds


def _instance_uses(model: ModuleModel, suffix: str, methods: list) -> set[str]:
    """How code outside the class reads the attribute through an instance (`torch.stack(policy.saved_log_probs)` in a
    function the episode loop calls): the list a method appends to is the object's, and its owner may use it."""
    kinds: set[str] = set()
    inside = {id(method) for method in methods}
    for root in [model.tree, *(info.node for info in model.functions.values() if id(info.node) not in inside
                               and isinstance(info.node, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        reads = [node for name, found in _load_index(model, root).items() if name.endswith(suffix) and name != "self" + suffix
                 for node in found]
        if reads:
            parent_of = parents(model, root)
            kinds.update(_use(model, node, parent_of, depth=0) for node in reads)
    return kinds


def _loads(model: ModuleModel, root: ast.AST, name: str) -> list:
    """The loads of `name` (`total`, `self.total`) under `root`, nested definitions left out: one walk per root
    indexes them all by name (every accumulation of a function asks, and a name bound from it asks again)."""
    return _load_index(model, root).get(name, ())


def _load_index(model: ModuleModel, root: ast.AST) -> dict:
    cache = model.__dict__.setdefault("_ag015_loads", {})
    index = cache.get(id(root))
    if index is None:
        index = cache[id(root)] = {}
        model.__dict__.setdefault("_ag015_roots", []).append(root)  # (keeps the ids valid)
        stack = list(ast.iter_child_nodes(root)) if isinstance(root, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) else [root]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                label = _label(node)
                if label is not None:
                    index.setdefault(label, []).append(node)
                    if isinstance(node, ast.Name):
                        continue  # (an attribute's value is a load of another name: `self` in `self.total`)
            stack.extend(ast.iter_child_nodes(node))
    return index


def _inside(node: ast.AST, stmt: ast.stmt) -> bool:
    return any(sub is node for sub in ast.walk(stmt))


def _use(model: ModuleModel, node: ast.AST, parent_of, depth: int) -> str:
    """PASSIVE (reported; fine as a float too), TENSOR (needs a tensor), BACKWARDED, or ESCAPE (unknown)."""
    kind = FLOAT_OK
    current = node
    while True:
        parent = parent_of.get(id(current))
        if parent is None:
            return ESCAPE
        if isinstance(parent, ast.Attribute) and parent.value is current:
            grand = parent_of.get(id(parent))
            attr = parent.attr
            if attr in uses.CONTAINER_VALUES and isinstance(grand, ast.Call) and grand.func is parent and depth < 2 \
                    and _use(model, grand, parent_of, depth + 1) == BACKWARDED:
                return BACKWARDED  # `sum(losses.values()).backward()`, `for v in losses.values(): v.backward()`
            if attr in uses.CONTAINER_METHODS:
                return kind
            if uses.is_metadata(attr):
                return TENSOR
            if uses.is_cut(attr):  # the result has no graph: nothing past it matters
                return TENSOR
            if isinstance(grand, ast.Call) and grand.func is parent:
                if attr == "backward":
                    return BACKWARDED
                kind = TENSOR
                current = grand  # total.mean(), total.cpu(): still the accumulated graph
                continue
            return ESCAPE
        if isinstance(parent, ast.Call) and parent.func is not current:
            func = parent.func
            name = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else "")
            qualname = model.imports.qualname(func) or name
            if qualname.endswith("autograd.backward") or qualname.endswith("autograd.grad") or name in ("backward", "manual_backward"):
                return BACKWARDED
            if (uses.is_reporter(name) or name in uses.NUMBER_CASTS) and isinstance(func, ast.Name) \
                    or isinstance(func, ast.Attribute) and name in uses.REPORTER_METHODS:
                return kind
            if uses.is_query(qualname) or qualname in ("isinstance", "type"):
                return TENSOR  # (`torch.is_tensor(total)`, `isinstance(total, torch.Tensor)`: its answer changes if `.item()` made it a float)
            if name in uses.AGGREGATES:
                current = parent
                continue
            if name in uses.STACKERS and qualname.startswith("torch"):
                kind = TENSOR
                current = parent
                continue
            return ESCAPE
        if isinstance(parent, ast.Return) and depth < 2:
            return _returned(model, parent, None, parent_of, depth, kind)
        if isinstance(parent, ast.Tuple) and isinstance(parent_of.get(id(parent)), ast.Return) and depth < 2:
            position = next(k for k, element in enumerate(parent.elts) if element is current)
            return _returned(model, parent_of[id(parent)], position, parent_of, depth, kind)
        if isinstance(parent, (ast.BinOp, ast.UnaryOp)) or isinstance(parent, ast.Subscript) and parent.value is current \
                or isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):
            current = parent  # (a display is judged by what takes it: `"%f" % (epoch, total)`, `print((epoch, total))`)
            continue
        if isinstance(parent, (ast.Compare, ast.FormattedValue, ast.JoinedStr)):
            return kind
        if isinstance(parent, ast.BoolOp):
            current = parent  # (`losses and step % k == 0`: judged by what takes it)
            continue
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is current:
            return kind  # `if losses:` asks whether it is empty (or a number's truth): a look, as a float allows too
        if isinstance(parent, ast.keyword):
            current = parent
            continue
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is current and depth < 2:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            names = [_label(target) for target in targets]
            if not all(names):
                return ESCAPE
            root = _enclosing_scope(parent_of, parent)
            loads = {name: _loads_after(model, root, name, parent) for name in names}
            if any(not isinstance(target, ast.Name) and not loads[name] for target, name in zip(targets, names)):
                return ESCAPE  # `batch.x = total`: stored into an object that outlives this code (returned, read elsewhere)
            results = {_use(model, load, parent_of, depth + 1) for name in names for load in loads[name]}
            for worst in (BACKWARDED, ESCAPE, TENSOR):
                if worst in results:
                    return worst
            return kind
        if isinstance(parent, ast.AugAssign) and parent.value is current:
            return ESCAPE
        if isinstance(parent, ast.Expr):
            return kind
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is current and depth < 2:
            # `for key, value in losses.items():`, `{k: float(v) for k, v in sums.items()}`: what is done with the names
            # the loop binds, in its body
            return _iterated(model, parent, parent_of, depth, kind)
        return ESCAPE


def _returned(model: ModuleModel, ret: ast.Return, position: int | None, parent_of, depth: int, kind: str) -> str:
    """`return total / n` (or the `position`-th item of a returned tuple): what every call of the function in this module
    does with it (`val = validate(...)` then only printed); ESCAPE when no call is seen, none reads it, or one hands it
    on unseen or backpropagates it (as before: a returned sum may be wanted)."""
    info = model.functions.get(_enclosing_scope(parent_of, ret))
    calls = [call for call in model.callers(info) if call.function is info and call.ctx.via is None] if info is not None else []
    if not calls or not (info.name.startswith("_") or _run_by_module(model, calls)):
        return ESCAPE  # (a public function of a module that never runs it itself may be another file's API)
    found = set()
    for call in calls:
        scope = call.ctx.scope
        root = scope.node if scope.function is not None else model.tree
        caller_parents = parents(model, root)
        if position is None:
            if not isinstance(caller_parents.get(id(call.node)), ast.Expr):  # (a call for its effects reads nothing)
                found.add(_use(model, call.node, caller_parents, depth + 1))
            continue
        stmt = caller_parents.get(id(call.node))
        targets = stmt.targets[0].elts if isinstance(stmt, ast.Assign) and stmt.value is call.node and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], (ast.Tuple, ast.List)) else ()
        if len(targets) != len(ret.value.elts) or not isinstance(targets[position], ast.Name):
            return ESCAPE  # (unpacked otherwise, or kept whole: not followed)
        found.update(_use(model, load, caller_parents, depth + 1) for load in _loads_after(model, root, targets[position].id, stmt))
    if not found or BACKWARDED in found or ESCAPE in found:
        return ESCAPE
    return TENSOR if TENSOR in found else kind


def _run_by_module(model: ModuleModel, calls: list, depth: int = 0) -> bool:
    """Some call is in the module's own code, or in a function that code runs (`main()` under `__main__` calling
    `train()` calling it): the script runs it itself."""
    seen = model.__dict__.setdefault("_ag015_run_by_module", {})  # id of a function -> whether the module runs it
    for call in calls:
        function = call.ctx.scope.function
        if function is None:
            return True
        if id(function) not in seen and depth < 3:
            seen[id(function)] = False  # (recursion, and a deeper look from elsewhere, answer no)
            seen[id(function)] = _run_by_module(model, [c for c in model.callers(function) if c.function is function and c.ctx.via is None], depth + 1)
        if seen.get(id(function)):
            return True
    return False


def _iterated(model: ModuleModel, loop: ast.AST, parent_of, depth: int, kind: str) -> str:
    target = loop.target
    method = loop.iter.func.attr if isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Attribute) else None
    if method == "items":  # (the keys are not the stored values)
        if not (isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2):
            return ESCAPE
        target = target.elts[1]
    names = [n.id for n in nodes(target) if isinstance(n, ast.Name)]
    if not names or not all(isinstance(n, (ast.Name, ast.Tuple, ast.List)) for n in nodes(target)):
        return ESCAPE
    if isinstance(loop, ast.comprehension):
        around = parent_of.get(id(loop))
        loads = [n for n in nodes(around) if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)] if around else []
    else:
        last = loop.end_lineno or loop.lineno
        root = _enclosing_scope(parent_of, loop)
        loads = [load for name in names for load in _loads_after(model, root, name, loop.target) if load.lineno <= last]
    results = {_use(model, load, parent_of, depth + 1) for load in loads}
    for worst in (BACKWARDED, ESCAPE, TENSOR):
        if worst in results:
            return worst
    return kind


def _enclosing_scope(parent_of, node):
    current = node
    while True:
        parent = parent_of.get(id(current))
        if parent is None or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            return parent if parent is not None else current
        current = parent


def _loads_after(model, root, name, stmt):
    """The loads past the end of `stmt` (not its own value's: `total = total / n` reads the old binding)."""
    end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset if stmt.end_col_offset is not None else stmt.col_offset)
    return [node for node in _loads(model, root, name) if (node.lineno, node.col_offset) >= end]


# -- the finding ----------------------------------------------------------------------------------------
def _finding(model: ModuleModel, acc: Accumulation, loop: Loop | None, hook, backward, uses: set[str], stepped=None):
    value_text = model.text(acc.value)
    statement = " ".join(model.text(acc.statement).split())
    if len(statement) > 50:
        statement = statement[:47] + "..."
    where = f"every iteration of the loop at line {loop.node.lineno}" if loop is not None else f"every call of `{hook.function.name}()`"
    origin = _graph_start(model, acc.prov)
    facts = []
    if origin is not None:
        facts.append(f"forward at line {origin.lineno}")
    if backward is hook and hook is not None:
        facts.append(f"backpropagated by the framework when `{hook.function.name}()` returns it")
    elif backward is not None:
        inside = "" if acc.helper is None else " (inside the closure it runs)" if acc.helper.role == "step" else " (inside the helper)"
        facts.append(f"already backpropagated by `{model.text(backward.node)}` at line {backward.line}{inside}")
    elif stepped is not None:
        facts.append(f"never backpropagated: `{' '.join(model.text(stepped.node).split())}` (line {stepped.node.lineno}) changes the "
                     f"weights its graph saved, so no backward can go through `{acc.base}` after it")
    else:
        facts.append(f"never backpropagated: `{acc.base}` is only logged")
    entry = _dict_entry(model, acc) if _backpropagated_element(model, acc, backward) is None else None
    if entry is not None:
        # a dict display (a loss's logging output) holding the tensor: the fix goes into that entry
        text = model.text(entry)
        message = (f"`{statement}` makes `{acc.accumulator}` reference the graph of `{text}` (the dict entry at line {entry.lineno}) "
                   f"from {where} ({'; '.join(facts)}): memory grows each iteration. Keep `{_suffixed(text, entry, 'detach')}` "
                   f"(or `.item()`) in the dict")
        fix = Fix(f"Keep `{_suffixed(text, entry, 'detach')}` in the dict", Safety.UNSAFE,
                  (Edit(model.span(entry), _suffixed(text, entry, "detach")),))
        related = [(origin, "the graph is built here")] if origin is not None else []
        return model.finding(RULE, acc.statement, message, fixes=[fix], related=related, accumulator=acc.accumulator,
                             loop_line=loop.node.lineno if loop is not None else None, entry=entry)
    element = _backpropagated_element(model, acc, backward)
    whole = model.prov(acc.value)  # (acc.prov is the tensor inside a container kept whole)
    if element is not None or any(p is not None and p.kind in (Kind.MAPPING, Kind.SEQUENCE) for p in (acc.prov, whole)) \
            and not isinstance(acc.value, (ast.List, ast.Tuple)):
        # a container (a dict of outputs) kept whole: `.item()`/`.detach()` of it mean nothing; its tensors need them
        advice = (f"Replace `{element}` by `{element}.detach()` (or `.item()`) before keeping `{value_text}`" if element else
                  f"Keep detached copies (`.detach()`, `.item()`) of the tensors `{value_text}` holds")
        message = (f"`{statement}` makes `{acc.accumulator}` reference the graph of `{value_text}` from {where} "
                   f"({'; '.join(facts)}): memory grows each iteration. {advice}")
        related = [(origin, "the graph is built here")] if origin is not None else []
        if backward is not None and backward is not hook:
            related.append((backward.node, "this backward frees the graph's buffers, but the accumulator still references it"))
        return model.finding(RULE, acc.statement, message, related=related, accumulator=acc.accumulator,
                             loop_line=loop.node.lineno if loop is not None else None)
    if _last_item_target(model, acc, backward) is not None:
        # the list's last item is what the iteration backpropagates: a detached copy there needs the value bound first
        message = (f"`{statement}` makes `{acc.accumulator}` reference the graph of `{value_text}` from {where} "
                   f"({'; '.join(facts)}): memory grows each iteration. Bind the value, backpropagate it, and append "
                   f"its `.detach()` (or `.item()`)")
        related = [(origin, "the graph is built here")] if origin is not None else []
        related.append((backward.node, "this backward frees the graph's buffers, but the list still references it"))
        return model.finding(RULE, acc.statement, message, related=related, accumulator=acc.accumulator, loop_line=loop.node.lineno if loop else None)
    related = [(origin, "the graph is built here")] if origin is not None else []
    if backward is not None and backward is not hook:
        related.append((backward.node, "this backward frees the graph's buffers, but the accumulator still references it"))
    held = [element for element in acc.value.elts if _graph_value(model.prov(element)) is not None] \
        if isinstance(acc.value, (ast.List, ast.Tuple)) else []
    if held:  # a list or tuple display (`meter.update([a, b])`, `log.append((loss, n))`): its tensors are what to detach
        detached = [_suffixed(model.text(element), element, "detach") for element in held]
        message = (f"`{statement}` makes `{acc.accumulator}` reference the graph of `{value_text}` from {where} "
                   f"({'; '.join(facts)}): memory grows each iteration. Keep {', '.join(f'`{text}`' for text in detached)} "
                   f"(or `.item()`) in it")
        fix = Fix(f"Keep {', '.join(f'`{text}`' for text in detached)}", Safety.SAFE,
                  tuple(Edit(model.span(element), text) for element, text in zip(held, detached)))
        return model.finding(RULE, acc.statement, message, fixes=[fix], related=related, accumulator=acc.accumulator,
                             loop_line=loop.node.lineno if loop is not None else None)
    message = (f"`{statement}` makes `{acc.accumulator}` reference the graph of `{value_text}` from {where} "
               f"({'; '.join(facts)}): memory grows each iteration. Accumulate `{_suffixed(value_text, acc.value, 'item')}` "
               f"or `{_suffixed(value_text, acc.value, 'detach')}`")
    fixes = []
    if acc.prov is not None:
        scalar = acc.prov.scalar
    else:  # `loss.backward()` without a gradient only works on a scalar
        scalar = backward is not None and backward is not hook and (acc.helper is not None or not backward.event.node.args and
                                                                     not backward.event.keyword("gradient") and
                                                                     isinstance(backward_target(model, backward.event)[0], ast.Name))
    item_ok = scalar is True and uses <= {FLOAT_OK}
    detach = Fix(f"Accumulate `{_suffixed(value_text, acc.value, 'detach')}`", Safety.SAFE,
                 (Edit(model.span(acc.value), _suffixed(value_text, acc.value, "detach")),))
    if scalar is True:
        item = Fix(f"Accumulate `{_suffixed(value_text, acc.value, 'item')}` (a Python float)", Safety.SAFE if item_ok else Safety.UNSAFE,
                   (Edit(model.span(acc.value), _suffixed(value_text, acc.value, "item")),))
        fixes = [item, detach] if item_ok else [detach, item]
    else:
        fixes = [detach]
    return model.finding(RULE, acc.statement, message, fixes=fixes, related=related, accumulator=acc.accumulator,
                         loop_line=loop.node.lineno if loop is not None else None)


def _dict_entry(model: ModuleModel, acc: Accumulation) -> ast.expr | None:
    """The value of the dict display, kept whole by the accumulation (`logs.append(log)`), that holds the accumulated
    graph, where a function called for it built and returned the dict (`{"loss": loss, "n": n}` of a loss's forward,
    whose loss the caller backpropagates on its own): the one entry of it that does."""
    prov = model.prov(acc.value)
    display = prov.node if prov is not None and prov.kind is Kind.MAPPING else None
    if acc.prov is None or not isinstance(display, ast.Dict) or len(prov.keys) != len(prov.elements):
        return None
    here = acc.event.ctx.scope.node
    inside = lambda node: node.lineno <= display.lineno <= (node.end_lineno or node.lineno)  # noqa: E731
    if inside(here) if not isinstance(here, ast.Module) else not any(inside(f.node) for f in model.functions.values()):
        return None  # (built here: the accumulation itself is where a copy is kept)
    held = [index for index, element in enumerate(prov.elements) if _graph_value(element) is not None]
    if len(held) != 1 or prov.elements[held[0]] is not acc.prov:
        return None
    key = prov.keys[held[0]]
    found = [value for name, value in zip(display.keys, display.values) if isinstance(name, ast.Constant) and name.value == key]
    return found[0] if len(found) == 1 and isinstance(found[0], (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else None


def _backpropagated_element(model: ModuleModel, acc: Accumulation, backward) -> str | None:
    """`out["loss"]` when the backward was of an element of the accumulated name (`out["loss"].backward()`, then
    `outputs.append(out)`): the text of that element; None otherwise."""
    if backward is None or not isinstance(backward, Part) or not isinstance(backward.event, CallEvent) \
            or not isinstance(acc.value, ast.Name):
        return None
    target, _ = backward_target(model, backward.event)
    if isinstance(target, ast.Subscript) and _holder(target) == acc.value.id:
        return " ".join(model.text(target).split())
    return None


def _from_forward(model: ModuleModel, prov: Provenance) -> bool:
    """Some module forward (or a workspace function) is in the value's graph."""
    return any(id(event.node) in prov.graph for event in model.of_type(CallEvent)
               if event.role == "forward" or event.function is not None)


def _graph_start(model: ModuleModel, prov: Provenance | None):
    """The earliest forward call in the value's graph (else the node that made it)."""
    if prov is None:
        return None
    for event in model.of_type(CallEvent):
        if event.role == "forward" and id(event.node) in prov.graph:
            return event.node
    node = prov.node
    return node if node is not None and hasattr(node, "lineno") else None


def _suffixed(text: str, node: ast.expr, method: str) -> str:
    atomic = isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    return f"{text}.{method}()" if atomic else f"({text}).{method}()"
