"""## What it does
Flags `.data` where it bypasses autograd in a way that matters, outside `torch.no_grad()`:

- **writes** through `.data` (`w.data.clamp_(...)`, `w.data -= lr * w.grad`, `w.data[i] = 0`, `w.data = t`) of a
  tensor that requires grad: a *warning* when a loss computed from `w` is still waiting for its
  `backward()` (the gradient will be computed with values the forward did not use); an *info* smell
  inside a training loop otherwise (manual SGD steps, weight clipping after `step()`);
- **reads** of `x.data` (for an `x` that requires grad) that feed a value which is then backpropagated:
  a *warning* when nothing else in that value requires grad (`backward()` raises), an *info* smell when
  `.data` only cuts one path (write `.detach()` to say so).

Not flagged: `.data` inside `torch.no_grad()`, reads for logging or metrics (`p.data.norm()`, `print`),
initialisation code outside training loops (`m.weight.data.normal_(0, 0.02)` in `__init__` or
`_init_weights`), tensors that do not require grad.

## Why is this bad?
`x.data` is `x` with autograd switched off *and* without the version counter that protects the backward
pass. An in-place change through it is invisible to autograd: if a pending graph saved
`x`, its backward silently uses the new values and produces gradients of a loss that was never computed.
A read through it silently removes that path from the gradient, which `.detach()` does explicitly and
safely (a later in-place change then raises instead of corrupting gradients).

## Example
```python
loss = critic_loss(w, real, fake)
w.data.clamp_(-0.5, 0.5)      # between the forward and its backward
loss.backward()

pred = model(x)
loss = criterion(pred.data, y)   # the model gets no gradient
```

## Use instead
```python
loss = critic_loss(w, real, fake)
loss.backward()
optimizer.step()
with torch.no_grad():
    w.clamp_(-0.5, 0.5)       # after the step, visible to autograd's checks

loss = criterion(pred, y)      # or pred.detach() where a stop-gradient is really meant
```

## Fix safety
Unsafe: `with torch.no_grad():` + the in-place op makes autograd's version check see the change (code
that relied on `.data` hiding it will then raise), and `.detach()` for a read keeps the same values but
adds that check. Neither fix moves an update to after `backward()`; that is a decision for the author.

## Runtime signature
Silent: autograd cannot see the change; the gradients do not match the loss that was computed (or, for
a read that cuts every path, `RuntimeError: element 0 of tensors does not require grad`).
"""
from __future__ import annotations

import ast
import sys
import textwrap

from ..analysis.model import AttrStoreEvent, BindEvent, InplaceEvent, ModuleModel
from ..findings import Edit, Fix, Safety, Severity, Span
from . import edits
from .loss_sites import loss_sites

CODE = "AG008"
NAME = "data-attribute"
SEVERITY = Severity.WARNING
SUMMARY = "`.data` bypasses autograd: in-place updates during a pending backward, or reads that feed a backpropagated value"
RUNTIME_SIGNATURE = "silent: gradients do not match the computed loss (autograd cannot see changes through .data)"
RULE = sys.modules[__name__]

SLICE_LIMIT = 64  # expressions followed back from one backward


def check(model: ModuleModel):
    sites = [site for site in loss_sites(model) if site.is_tensor]
    binds = _binds_by_name(model) if sites else {}  # only a backward makes a write "pending" or a read matter
    yield from _writes(model, [site for site in sites if site.event is not None], binds)
    if sites:
        yield from _reads(model, sites, binds)


# -- writes -------------------------------------------------------------------------------------------

def _data_owner(node: ast.AST) -> ast.expr | None:
    """`w` for `w.data`, `w.data[...]`; None for anything else."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr == "data":
        return node.value
    return None


def _writes(model: ModuleModel, sites, binds):
    writes = []
    for event in model.of_type(InplaceEvent):
        owner = _data_owner(event.target)
        if owner is not None:
            writes.append((event, owner, f"`{event.op}`"))
    for event in model.of_type(AttrStoreEvent):
        if event.target.attr == "data":
            writes.append((event, event.target.value, "an assignment to `.data`"))
    for event, owner, op in writes:
        prov = model.prov(owner)
        if event.ctx.no_grad or prov is None or not prov.is_tensor or prov.requires_grad is not True:
            continue
        name = model.text(owner)
        pending = _pending_backward(model, event, owner, prov, sites, binds)
        if pending is not None:
            site, bound = pending
            message = (f"`{name}.data` is changed ({op}) after the forward that used `{name}` (line {bound.lineno}) and before its "
                       f"`backward()` (line {site.node.lineno}): autograd cannot see changes through `.data`, so the gradients will not "
                       f"match the loss that was computed. Move the update after the backward/step, under `torch.no_grad()`")
            yield model.finding(RULE, _write_node(event), message, fixes=_write_fixes(model, event, owner),
                                related=[(site.node, "the pending backward"), (bound, "the forward that used the old values")],
                                target=name, kind="pending-graph")
        elif any(loop.is_training for loop in event.ctx.loops()):
            message = (f"`{name}.data` is changed ({op}) inside a training loop: `.data` hides the change from autograd's checks. "
                       f"Use `with torch.no_grad():` and update `{name}` itself")
            finding = model.finding(RULE, _write_node(event), message, fixes=_write_fixes(model, event, owner), target=name,
                                    kind="training-update")
            yield finding.with_severity(Severity.INFO)


def _write_node(event) -> ast.AST:
    if isinstance(event, InplaceEvent) and event.form == "method":
        return event.node
    return event.ctx.statement


def _binds_by_name(model: ModuleModel) -> dict:
    out: dict = {}
    for bind in model.of_type(BindEvent):
        out.setdefault(bind.name, []).append(bind)
    return out


def _binding(binds, name: str, prov, before_seq: int) -> BindEvent | None:
    """The bind that gave `name` the provenance `prov`, last before `before_seq`."""
    found = None
    for bind in binds.get(name, ()):
        if bind.seq >= before_seq:
            break
        if bind.prov is prov:
            found = bind
    return found


def _pending_backward(model, event, owner, prov, sites, binds):
    """(site, the statement that computed its loss) for a later backward whose loss was computed from `owner` before the write."""
    label = model.text(owner)
    for site in sites:
        if site.event.seq <= event.seq or not isinstance(site.value, ast.Name):
            continue
        loss = site.prov
        depends = label in loss.composed_from or (prov.graph and prov.graph & loss.graph)
        if not depends:
            continue
        bound = _binding(binds, site.value.id, loss, site.event.seq)
        if bound is not None and bound.seq < event.seq:
            return site, bound.node
    return None


def _strip_data(model: ModuleModel, stmt: ast.stmt, data_node: ast.Attribute) -> str | None:
    """The statement's text with `x.data` replaced by `x` (single-line `.data` only)."""
    span = model.span(data_node)
    owner = model.span(data_node.value)
    if span.end_line != owner.end_line:
        return None
    lines = model.source.lines[stmt.lineno - 1 : (stmt.end_lineno or stmt.lineno)]
    index = span.end_line - stmt.lineno
    line = lines[index]
    lines = list(lines)
    lines[index] = line[: owner.end_col] + line[span.end_col:]
    return textwrap.dedent("\n".join(lines))


def _write_fixes(model: ModuleModel, event, owner: ast.expr) -> list[Fix]:
    stmt = event.ctx.statement
    torch = model.imports.torch_alias
    if torch is None or not edits.own_line(model, stmt):
        return []
    indent = model.line_indent(stmt.lineno)
    end_line = stmt.end_lineno or stmt.lineno
    span = Span(stmt.lineno, 0, end_line, len(model.source.line_text(end_line)))
    if isinstance(event, AttrStoreEvent):
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or stmt.targets[0] is not event.target:
            return []
        last = model.source.line_text(end_line)
        body = f"{model.text(owner)}.copy_({model.text(stmt.value)})" + last[model.span(stmt).end_col:]  # keeps a trailing comment
        title = f"Copy under `torch.no_grad()`: `{model.text(owner)}.copy_(...)` (same shape required)"
    else:
        data_node = event.target.value if isinstance(event.target, ast.Subscript) else event.target
        body = _strip_data(model, stmt, data_node)
        if body is None:
            return []
        title = "Update under `torch.no_grad()` instead of through `.data`"
    text = f"{indent}with {torch}.no_grad():\n" + edits.indent_block(body, indent + "    ")
    return [Fix(title, Safety.UNSAFE, (Edit(span, text),))]


# -- reads --------------------------------------------------------------------------------------------

def _reads(model: ModuleModel, sites, binds):
    reported = set()
    for site in sites:
        for node, owner_prov in _data_reads_in_slice(model, site, binds):
            if id(node) in reported:
                continue
            reported.add(id(node))
            name = model.text(node.value)
            loss = " ".join(model.text(site.value).split())[:40]
            fix = Fix(f"Use `{name}.detach()`", Safety.UNSAFE, (Edit(model.span(node), f"{name}.detach()"),))
            where = f"backpropagated at line {site.node.lineno}" if site.form != "training_step" else "the loss `training_step` returns"
            if site.prov.requires_grad is False:
                message = (f"`{name}.data` cuts `{name}` out of the graph, and `{loss}` ({where}) has no "
                           f"other path to anything that requires grad: `backward()` will raise. Use `{name}` itself")
                keep = Fix(f"Use `{name}` (let the gradient flow)", Safety.UNSAFE, (Edit(model.span(node), name),))
                yield model.finding(RULE, node, message, fixes=[keep, fix], related=[(site.node, "backpropagated here")], target=name,
                                    kind="read-cuts-all")
            else:
                message = (f"`{name}.data` feeds `{loss}` ({where}): no gradient flows to `{name}` "
                           f"through this path and autograd's in-place checks are off for it. If the stop-gradient is intended, "
                           f"write `{name}.detach()`")
                finding = model.finding(RULE, node, message, fixes=[fix], related=[(site.node, "backpropagated here")], target=name,
                                        kind="read-cuts-path")
                yield finding.with_severity(Severity.INFO)


def _data_reads_in_slice(model: ModuleModel, site, binds):
    """`x.data` loads (x requires grad, outside no_grad) among the expressions the backpropagated value was computed from."""
    work = [(site.value, site.event.seq if site.event is not None else float("inf"))]  # training_step: its return
    seen: set = set()
    steps = 0
    while work and steps < SLICE_LIMIT:
        expr, before = work.pop()
        steps += 1
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.ClassDef)):
                continue
            if isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.ctx, ast.Load):
                owner = model.prov(node.value)
                if owner is not None and owner.is_tensor and owner.requires_grad is True and not _under_no_grad(model, node):
                    yield node, owner
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                prov = model.prov(node)
                bind = _binding(binds, node.id, prov, before) if prov is not None else None
                if bind is not None and bind.value is not None and id(bind) not in seen and not bind.ctx.no_grad:
                    seen.add(id(bind))
                    work.append((bind.value, bind.seq))
                continue
            stack.extend(ast.iter_child_nodes(node))


def _under_no_grad(model: ModuleModel, node: ast.AST) -> bool:
    events = _load_events(model)
    event = events.get(id(node))
    return event is not None and event.ctx.no_grad


def _load_events(model: ModuleModel) -> dict:
    cache = model.__dict__.get("_ag008_loads")
    if cache is None:
        from ..analysis.model import AttrLoadEvent

        cache = {id(event.node): event for event in model.of_type(AttrLoadEvent) if event.attr == "data"}
        model.__dict__["_ag008_loads"] = cache
    return cache
