"""## What it does
Flags `backward(retain_graph=True)` where the retained graph is reused after an `optimizer.step()` (an
error), and where nothing reuses the retained graph at all (a warning: pure memory cost).

## Why is this bad?
`retain_graph=True` is usually added to silence "Trying to backward through the graph a second time".
The graph it keeps alive saved the parameters' values at forward time; once `optimizer.step()` changes
them in place, a backward through that old graph fails the version check (seed 001). When nothing
backwards through the graph again, retaining it only holds its memory until the tensors die.

## Example
```python
y1, y2 = model(x)                # forward once, outside the loop
loss1, loss2 = mse(y1, t1), mse(y2, t2)
for step in range(10):
    opt.zero_grad()
    loss1.backward(retain_graph=True)
    opt.step()                   # modifies w1, saved by the graph
    opt.zero_grad()
    loss2.backward(retain_graph=True)   # reuses the old graph: version error
    opt.step()
```

## Use instead
```python
for step in range(10):
    y1, y2 = model(x)            # a fresh graph every step
    loss = mse(y1, t1) + mse(y2, t2)
    opt.zero_grad()
    loss.backward()              # one backward per graph
    opt.step()
```
Two losses that share a graph and are both backpropagated *before* one `step()` are fine.

## Fix safety
Removing `retain_graph=True` is offered as unsafe: it is exact only when nothing else backpropagates
through the graph.

## Runtime signature
`RuntimeError: one of the variables needed for gradient computation has been modified by an inplace
operation: [...] is at version N; expected version M instead`.
"""
from __future__ import annotations

import ast
import sys

from ..analysis.model import CallEvent, ModuleModel, UseEvent
from ..findings import Edit, Fix, Safety, Severity, Span

CODE = "AG003"
NAME = "retain-graph-misuse"
SEVERITY = Severity.ERROR
SUMMARY = "backward(retain_graph=True) whose graph is reused after optimizer.step(), or never reused"
RUNTIME_SIGNATURE = "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation"
RULE = sys.modules[__name__]

PASSIVE_METHODS = {"item", "detach", "cpu", "numpy", "tolist", "size", "dim", "numel", "print", "len", "format", "str"}


def _retains(event: CallEvent) -> bool:
    keyword = event.keyword("retain_graph")
    return keyword is not None and isinstance(keyword.value, ast.Constant) and keyword.value.value is True


def _receiver(event: CallEvent):
    if event.method == "backward":
        return event.receiver, event.receiver_prov
    return None, None


def check(model: ModuleModel):
    backwards = list(model.calls(role="backward"))
    steps = list(model.calls(role="step"))
    for event in backwards:
        if not _retains(event):
            continue
        receiver, prov = _receiver(event)
        if prov is None or not prov.has_graph or not prov.graph:
            continue
        scope = event.ctx.scope
        same_scope = [b for b in backwards if b.ctx.scope is scope]
        sharing = [b for b in same_scope if b is not event and b.receiver_prov is not None and b.receiver_prov.graph & prov.graph]
        # 1. a later backward through the same graph, with a step in between
        for later in sharing:
            if later.seq <= event.seq:
                continue
            between = [s for s in steps if s.ctx.scope is scope and event.seq < s.seq < later.seq]
            if between:
                yield _reused_after_step(model, event, later, between[0])
                break
        else:
            # 2. in a training loop, a graph built before the loop is backpropagated again next iteration
            loop = next((l for l in event.ctx.loops() if l.has_step and not l.contains(prov.loop)
                         and (receiver is None or model.text(receiver) not in l.assigned)), None)
            if loop is not None:
                step = loop.steps[0] if loop.steps else None
                yield _reused_next_iteration(model, event, loop, step)
                continue
            # 3. nothing reuses the graph: retain_graph only costs memory
            if _nothing_reuses(model, event, prov, same_scope, scope):
                yield _never_reused(model, event)


def _nothing_reuses(model, event, prov, same_scope, scope) -> bool:
    if event.ctx.scope.function is not None and _returned(event):
        return False
    for other in same_scope:
        if other is event or other.seq < event.seq and not event.ctx.loop:
            continue
        other_prov = other.receiver_prov
        if other_prov is None or other_prov.graph & prov.graph:
            return False  # an unknown or graph-sharing backward: it may need the retained graph
    for call in model.calls():
        if call.ctx.scope is scope and (call.qualname or "").endswith("autograd.grad"):
            return False
        if call.ctx.scope is scope and call.function is not None and call.seq > event.seq:
            return False  # a helper may backpropagate through it
    for use in model.of_type(UseEvent):
        if use.ctx.scope is scope and use.seq > event.seq and use.prov.graph & prov.graph:
            if use.usage == "receiver" and use.callee in PASSIVE_METHODS or use.usage == "other":
                continue
            if use.usage == "receiver" and use.callee == "backward":
                continue
            return False  # the graph is built upon further: a later backward may go through it
    return True


def _returned(event) -> bool:
    function = event.ctx.scope.node
    return any(isinstance(node, (ast.Return, ast.Yield)) and node.value is not None for node in ast.walk(function))


def _remove_retain_graph(model, event) -> Fix | None:
    call = event.node
    keyword = event.keyword("retain_graph")
    if len(call.keywords) != 1 or call.args:
        return None
    # backward(retain_graph=True) -> backward()
    start = model.span(call.func)
    end = model.span(call)
    return Fix("Remove `retain_graph=True`", Safety.UNSAFE,
               (Edit(Span(start.end_line, start.end_col, end.end_line, end.end_col), "()"),)) if keyword is not None else None


def _reused_after_step(model, event, later, step):
    message = (f"the graph retained here is backpropagated again by `{model.text(later.node)}` (line {later.node.lineno}) after "
               f"`{model.text(step.node)}` (line {step.node.lineno}) modified the parameters it saved: version-counter error. "
               f"Recompute the forward for each backward, or sum the losses and call backward once")
    return model.finding(RULE, event.node, message, related=[(step.node, "parameters modified in place here"),
                                                             (later.node, "the retained graph is reused here")],
                         kind="reused-after-step", optimizer=model.text(step.receiver) if step.receiver is not None else None)


def _reused_next_iteration(model, event, loop, step):
    receiver = model.text(event.receiver) if event.receiver is not None else "the loss"
    step_text = f"`{model.text(step.node)}` (line {step.node.lineno})" if step is not None else "the optimizer step"
    message = (f"`{receiver}` is computed once, before this training loop, so every iteration backpropagates through the same "
               f"retained graph after {step_text} modified the parameters it saved: version-counter error on the second "
               f"iteration. Recompute the forward inside the loop")
    related = [(step.node, "parameters modified in place here")] if step is not None else []
    return model.finding(RULE, event.node, message, related=related, kind="reused-next-iteration", loop_line=loop.node.lineno)


def _never_reused(model, event):
    fix = _remove_retain_graph(model, event)
    message = "`retain_graph=True` but nothing backpropagates through this graph again: it only keeps the graph's memory alive"
    finding = model.finding(RULE, event.node, message, fixes=[fix] if fix else [], kind="never-reused")
    return finding.with_severity(Severity.WARNING)
