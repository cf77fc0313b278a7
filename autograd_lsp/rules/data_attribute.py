"""## What it does
Flags `.data` where it bypasses autograd in a way that matters, outside `torch.no_grad()`:

- **writes** through `.data` (`w.data.clamp_(...)`, `w.data -= lr * w.grad`, `w.data[i] = 0`, `w.data = t`) of a
  tensor that requires grad: a *warning* when a pending graph saved `w` for its backward (between the
  forward that saved it and its `backward()`, or between two backwards of a retained graph: the gradients
  will be computed with values the forward did not use). What a graph saves is torch's own
  `derivatives.yaml`: `w ** 2` and `w * h` (h requiring grad) keep `w`, `x @ w` with a constant `x` does not,
  `nn.Linear` keeps its weight when its input requires grad (also as `net[2].weight` of an `nn.Sequential`, and as `m.weight`
  of `for m in net: if isinstance(m, nn.Linear):` over a stack whose every layer with parameters is one); steps
  appended to a list and joined (`torch.cat(outputs)`, an unrolled RNN's forward) keep what they saved. A write through a
  name bound to `.data` (`c = out.data; c.zero_()`) is reported at the write and at the binding, where the fix goes. The loss
  is followed through the names it was computed from, and a helper that changes its parameter through `.data`
  (`def squash(t): t.data *= 0.5`) is reported where a call passes it a tensor the pending graph saved (also when
  the helper is given as an argument, `step(net, x, post=squash)`, and the body it is given to backpropagates). An *info* smell otherwise: a pending graph
  that did not save `w`, or a training loop with nothing pending (manual SGD steps, weight clipping after
  `step()`), where `.data` only hides the change from autograd's checks. Also a *warning*: a write through
  `.data` of gradients that `torch.autograd.grad(..., create_graph=True)` made (`p.data -= lr * g` in a MAML
  inner step): the graph asked for so that the update could be differentiated is thrown away;
- **reads** of `x.data` (for an `x` that requires grad) that feed a value which is then backpropagated (also inside
  the `forward()` of a module of the file that value went through: `x @ self.weight.data`, and through a name of unknown
  value its function binds once: `penalty = hp.weight * x.data.norm()`):
  a *warning* when nothing else in that value requires grad (`backward()` raises), or when the cut path
  was the only one to parameters an optimizer then steps (they silently get no gradient: an encoder read
  through `.data`); an *info* smell when `.data` is a stop-gradient towards what has its own loss or
  another path (a GAN's generator in the discriminator's loss, a DQN target): write `.detach()` to say so.

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

from ..analysis import callsite, syntax, torch_api as api, uses
from ..analysis.model import AttrStoreEvent, BindEvent, CallEvent, ClassInfo, FunctionInfo, InplaceEvent, ModuleModel, ThroughEvent
from ..analysis.provenance import Kind, Provenance
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
HELPER_DEPTH = 2  # helper bodies entered to find what the loss's graph saved


def check(model: ModuleModel):
    sites = [site for site in loss_sites(model) if site.is_tensor]
    binds = _binds_by_name(model) if sites else {}  # only a backward makes a write "pending" or a read matter
    discarded = set()
    for finding, statement in _graph_discards(model):
        discarded.add(statement)
        yield finding
    yield from (finding for finding in _writes(model, [site for site in sites if site.event is not None], binds)
                if finding.span.line not in discarded)
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
        if event.reshape:
            continue  # (`w.data.t_()` reshapes a tensor of its own: w and its graph are untouched)
        owner = _data_owner(event.target)
        if owner is None:
            owner = _data_alias_owner(event)
        if owner is not None:
            writes.append((event, owner, f"`{event.op}`"))
    for event in model.of_type(AttrStoreEvent):
        if event.target.attr == "data":
            writes.append((event, event.target.value, "an assignment to `.data`"))
    reported = set()
    for event, owner, op in writes:
        prov = model.prov(owner)
        if event.ctx.no_grad:
            continue
        if event.ctx.via is not None and _data_owner(event.target) is not None:
            found = _pending_through_calls(model, event, owner, op)
            if found is not None:
                if id(event.node) not in reported:
                    reported.add(id(event.node))
                    yield found
                continue
        if prov is None or not prov.is_tensor or prov.requires_grad is not True:
            yield from _helper_writes(model, event, owner, op, sites, binds)
            continue
        name = model.text(owner)
        pending = _pending_backward(model, event, owner, prov, sites, binds)
        if pending is None:
            through = list(_helper_writes(model, event, owner, op, sites, binds))
            if through:  # (a layer the helper is given is known there: the pending graph is its caller's)
                yield from through
                continue
        if pending is not None:
            site, bound, saver = pending
            if saver is not None:
                message = (f"`{name}.data` is changed ({op}) after the forward that saved `{name}` for its backward (`{saver}`, line "
                           f"{bound.lineno}) and before that `backward()` (line {site.node.lineno}): autograd cannot see changes through "
                           f"`.data`, so the gradients will be computed with values the forward did not use. Move the update after the "
                           f"backward/step, under `torch.no_grad()`")
                finding = model.finding(RULE, _write_node(event), message, fixes=_write_fixes(model, event, owner),
                                        related=[(site.node, "the pending backward"), (bound, "the forward that saved the old values")],
                                        target=name, kind="pending-graph").with_severity(Severity.WARNING)
                alias = event.prov.node if _data_owner(event.target) is None else None
                if alias is None:
                    yield finding
                    continue
                # written through a name bound to `.data`: the binding is where the fix goes
                cause = (f"`{model.text(event.target)}` is bound to `{name}.data`, which shares `{name}`'s storage without autograd's "
                         f"version counter: `{event.op}` at line {event.node.lineno} changes what the forward saved (`{saver}`, line "
                         f"{bound.lineno}) before that `backward()` (line {site.node.lineno}), silently. Use `{name}.detach()` (autograd "
                         f"then reports the change) or `{name}.detach().clone()` for a copy to change")
                yield from model.with_cause(finding, alias, cause, "the change through it is here")
                continue
            message = (f"`{name}.data` is changed ({op}) while a backward (line {site.node.lineno}) is pending; that graph did not save "
                       f"`{name}`, so its gradients stay right, but `.data` hides the change from autograd's checks. Prefer "
                       f"`with torch.no_grad():` and update `{name}` itself")
            yield model.finding(RULE, _write_node(event), message, fixes=_write_fixes(model, event, owner), target=name,
                                kind="pending-unsaved").with_severity(Severity.INFO)
        elif any(loop.is_training for loop in event.ctx.loops()):
            message = (f"`{name}.data` is changed ({op}) inside a training loop: `.data` hides the change from autograd's checks. "
                       f"Use `with torch.no_grad():` and update `{name}` itself")
            finding = model.finding(RULE, _write_node(event), message, fixes=_write_fixes(model, event, owner), target=name,
                                    kind="training-update")
            yield finding.with_severity(Severity.INFO)


def _helper_writes(model: ModuleModel, event, owner: ast.expr, op: str, sites, binds):
    """A helper changing its parameter through `.data` (`def rescale(t): t.data *= 0.5`), called between the forward
    that saved the tensor it is given and that graph's backward: reported in the helper, naming the call."""
    function = event.ctx.scope.function
    # the parameter itself (`t.data`), or a parameter of the layer passed (`layer.weight.data`)
    head, attribute = (owner, None) if type(owner) is ast.Name else (owner.value, owner.attr) if (
        type(owner) is ast.Attribute and type(owner.value) is ast.Name and owner.attr in api.PARAMETER_NAMES) else (None, None)
    if head is None or function is None or event.ctx.via is not None or not isinstance(
            function.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    args = function.node.args
    if head.id not in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
        return
    if syntax.stores(function.node, head.id):
        return  # (rebound somewhere in the helper: the value written may not be the one passed)
    for call in model.callers(function):
        if call.ctx.via is not None or call.ctx.no_grad or call.function is not function:
            continue
        argument = callsite.argument_for(call, {head.id})
        if argument is None:
            continue
        passed = model.prov(argument)
        if attribute is not None:
            # a layer of the caller's (`max_norm_(model[2])`): its parameter, a trainable leaf named after the argument
            if passed is None or passed.kind is not Kind.MODULE:
                continue
            label = f"{model.text(argument)}.{attribute}"
            pending = _pending_backward(model, call, argument, _TRAINABLE, sites, binds, label=label)
        elif passed is None or not passed.is_tensor or passed.requires_grad is not True:
            continue
        else:
            label = model.text(argument)
            pending = _pending_backward(model, call, argument, passed, sites, binds)
        if pending is None or pending[2] is None:
            continue
        site, bound, saver = pending
        name, given_text = model.text(owner), label
        message = (f"`{name}.data` is changed ({op}) in `{function.name}()`, called at line {call.node.lineno} with `{given_text}`, "
                   f"which the forward saved for its backward (`{saver}`, line {bound.lineno}) before that `backward()` (line "
                   f"{site.node.lineno}): autograd cannot see changes through `.data`, so the gradients will be computed with "
                   f"values the forward did not use. Change a copy (out of place) or move the update after the backward")
        yield model.finding(RULE, _write_node(event), message, fixes=[],
                            related=[(call.node, "the call"), (site.node, "the pending backward"), (bound, "the forward that saved the old values")],
                            target=name, kind="pending-graph").with_severity(Severity.WARNING)
        return


def _pending_through_calls(model: ModuleModel, event, owner: ast.expr, op: str):
    """A `.data` write in a body walked for a call (`scale(delta_im)` inside `train_step(..., normalize)`): the tensor the
    calls gave it was saved by the forward that made it, and the outermost call runs a backward through that graph after
    the write (ThroughEvent). Reported at the write, naming the calls."""
    prov = event.prov
    if prov is None or not prov.kept_for_backward:
        return None
    calls, ctx = [], event.ctx
    while ctx.via is not None:
        calls.append(ctx.via)
        ctx = ctx.via
    top = calls[-1]
    for through in model.calls(role="backward", through=True):
        if type(through) is not ThroughEvent or through.ctx.statement is not top.statement or through.direct.seq <= event.seq:
            continue
        loss = through.receiver_prov
        if loss is None or loss.kind is not Kind.TENSOR or id(prov.saved_node) not in loss.graph or not through.certain:
            continue
        name, backward = model.text(owner), through.direct.node
        function = event.ctx.scope.function
        where = f"in `{function.name}()`, " if function is not None else ""
        message = (f"`{name}.data` is changed ({op}) {where}run by the call at line {top.statement.lineno}, after the forward "
                   f"that saved the tensor it is given for its backward (`{prov.saved_by}`, line {prov.saved_node.lineno}) and "
                   f"before that `backward()` (line {backward.lineno}): autograd cannot see changes through `.data`, so the "
                   f"gradients will be computed with values the forward did not use. Change a copy (out of place) instead")
        return model.finding(RULE, _write_node(event), message, fixes=[],
                             related=[(top.statement, "the call"), (backward, "the pending backward"),
                                      (prov.saved_node, "the forward that saved the old values")],
                             target=name, kind="pending-graph").with_severity(Severity.WARNING)
    return None


def _graph_discards(model: ModuleModel):
    """`p.data -= lr * g` with `g` from `torch.autograd.grad(..., create_graph=True)`: the graph built so that the update
    could be differentiated (MAML's inner step, a learned optimiser) is thrown away by the `.data` write."""
    graphs = {id(call.node): call for call in model.calls() if call.qualname == "torch.autograd.grad" and call.result is not None}
    if not graphs:
        return
    writes = []
    for event in model.of_type(BindEvent):
        if isinstance(event.target, ast.Attribute) and event.target.attr == "data" and isinstance(event.ctx.statement, ast.AugAssign):
            writes.append((event, event.target.value, [event.value]))
    for event in model.of_type(InplaceEvent):
        owner = _data_owner(event.target)
        if owner is not None and event.form == "augassign":
            writes.append((event, owner, [event.ctx.statement.value]))
    for event in model.of_type(AttrStoreEvent):
        if event.target.attr == "data":
            writes.append((event, event.target.value, [event.value]))
    for event in model.calls():
        owner = _data_owner(event.receiver) if event.receiver is not None else None
        if owner is not None and api.is_inplace_method(event.method or ""):
            writes.append((event, owner, [*event.node.args, *(kw.value for kw in event.node.keywords)]))
    reported = set()
    for event, owner, values in writes:
        statement = event.ctx.statement
        if event.ctx.no_grad or statement.lineno in reported:
            continue
        made = next((found for found in (_graph_in(model, value, graphs) for value in values) if found is not None), None)
        if made is None:
            continue
        reported.add(statement.lineno)
        name = model.text(owner)
        message = (f"`{name}.data` is updated from gradients that `torch.autograd.grad(..., create_graph=True)` (line {made.node.lineno}) "
                   f"built a graph for, but a write through `.data` is invisible to autograd: that graph is discarded and nothing "
                   f"computed from the updated `{name}` reaches what the gradients came from (a meta-gradient stays `None`). "
                   f"Compute the updated weights out of place (`{name} - lr * g`) and run the model with them "
                   f"(`torch.func.functional_call`)")
        yield model.finding(RULE, statement, message, related=[(made.node, "the graph that is discarded")], target=name,
                            kind="discarded-graph").with_severity(Severity.WARNING), statement.lineno


def _graph_in(model: ModuleModel, value: ast.expr | None, graphs: dict):
    """The create_graph call whose graph `value` carries: its own provenance, or an arithmetic operand's (`w.data - lr * g`
    where `w.data` is unknown); never inside a call (`g.detach()`, `g.item()` keep no graph)."""
    stack = [value]
    while stack:
        node = stack.pop()
        prov = model.prov(node) if node is not None else None
        if prov is not None and prov.is_tensor:
            found = next((graphs[key] for key in prov.graph if key in graphs), None)
            if found is not None or prov.detached:
                return found
        elif isinstance(node, ast.BinOp):
            stack.extend((node.left, node.right))
        elif isinstance(node, ast.UnaryOp):
            stack.append(node.operand)
    return None


def _data_alias_owner(event) -> ast.expr | None:
    """`out` for `c = out.data; c.zero_()`: a name bound to `.data` shares the storage without the version counter."""
    prov = event.prov
    node = prov.node if prov is not None else None
    if isinstance(node, ast.Attribute) and node.attr == "data" and prov.data_of is not None and event.target is not node:
        return node.value
    return None


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


def _only_binding(binds, name: str, scope, before_seq: int) -> BindEvent | None:
    """A name whose value is unknown (`hp.weight * penalty`, a scale from a config): its binding, when it is the only
    statement in `scope` that binds it and it ran before `before_seq` (no branch or rebinding to choose between)."""
    if scope is None:
        return None
    found = [bind for bind in binds.get(name, ()) if bind.ctx.scope is scope]
    if not found or any(bind.target is not found[0].target for bind in found):
        return None
    earlier = [bind for bind in found if bind.seq < before_seq]
    return earlier[-1] if earlier and earlier[-1].prov is None else None


_TRAINABLE = Provenance(Kind.TENSOR, leaf=True, requires_grad=True)  # a layer's parameter, known by its name only


def _pending_backward(model, event, owner, prov, sites, binds, label: str | None = None):
    """(site, the statement that computed its loss, the op that saved `owner` or None) for a later backward whose loss was
    computed from `owner` before the write (a forward, or a backward that retained its graph, in between)."""
    label = label or _parameter_label(model, owner, prov)
    found = None
    if prov.kept_for_backward:
        # a non-leaf some op already kept (sigmoid's output, a product's factor): pending while a later backward's graph
        # contains that op
        for site in sites:
            if site.event.seq > event.seq and id(prov.saved_node) in site.prov.graph:
                return site, prov.saved_node, prov.saved_by
        # ... or, inside a function whose result holds that op (an RNN's forward clamping its state after using it), while
        # a later backward's graph holds a call of it: its body's nodes are its calls' nodes to the caller
        function = event.ctx.scope.function
        returned = function.returns if function is not None and event.ctx.via is None else None
        if returned is not None and returned.kind is Kind.TENSOR and id(prov.saved_node) in returned.graph:
            calls = [call for call in model.callers(function) if call.ctx.via is None]
            for site in sites:
                if any(id(call.node) in site.prov.graph and call.seq < site.event.seq for call in calls):
                    return site, prov.saved_node, prov.saved_by
    for site in sites:
        if site.event.seq <= event.seq or not isinstance(site.value, ast.Name):
            continue
        loss = site.prov
        depends = label in loss.composed_from or (prov.graph and prov.graph & loss.graph) or _forwards_owner(model, site, label)
        if not depends:
            continue
        for bound in _computed_before(model, binds, _binding(binds, site.value.id, loss, site.event.seq), event.seq):
            saver, where = _saver(model, owner, prov, bound, binds, label, event)
            if saver is not None:
                return site, where.node, saver
            found = found or (site, bound.node, None)
    return found


def _computed_before(model, binds, bound: BindEvent | None, before_seq: int, depth: int = 3):
    """The bindings the loss's graph was computed in before the write: the loss's own, or, for a loss combined after the
    write from values computed before it (`loss2 = loss * 2` after `loss.backward(retain_graph=True)`), theirs."""
    if bound is None:
        return
    if bound.seq < before_seq:
        yield bound
        return
    if depth == 0:
        return
    for earlier in _graph_inputs(model, binds, bound):
        yield from _computed_before(model, binds, earlier, before_seq, depth - 1)


def _graph_inputs(model, binds, bound: BindEvent):
    """The bindings, before `bound`, of the names its value reads that carry a graph (a leaf holds none)."""
    for node in ast.walk(bound.value) if bound.value is not None else ():
        if type(node) is ast.Name and type(node.ctx) is ast.Load:
            prov = model.prov(node)
            if prov is not None and prov.kind is Kind.TENSOR and prov.requires_grad and prov.graph:
                earlier = _binding(binds, node.id, prov, bound.seq)
                if earlier is not None:
                    yield earlier


def _forwards_owner(model, site, label: str) -> bool:
    """`model.fc.weight.data` and a loss computed through `model(...)`: the parameter took part in the forward."""
    return any(label.startswith((module + ".", module + "[")) for module in _forwarded_modules(model, site))


def _forwarded_modules(model, site) -> set[str]:
    modules = set()
    graph = site.prov.graph
    for call in model.calls():
        if call.role == "forward" and id(call.node) in graph:
            target = call.receiver if call.method == "forward" else call.node.func
            if isinstance(target, (ast.Name, ast.Attribute)):
                modules.add(model.text(target))
    return modules


def _parameter_label(model, owner: ast.expr, prov) -> str:
    """`p` of `for p in critic.parameters()` stands for every parameter of `critic` ("critic.*"); other owners, their text."""
    origin = prov.origin or ""
    if isinstance(owner, ast.Name) and origin.endswith(".parameters()") and prov.leaf and not prov.graph:
        return origin[: -len(".parameters()")] + ".*"
    return _layer_loop_label(model, owner) or model.text(owner)


def _layer_loop_label(model, owner: ast.expr) -> str | None:
    """`m.weight` of `for m in net: if isinstance(m, nn.Linear):` over an `nn.Sequential(...)` whose every layer with
    parameters is such a layer: the loop changes each of them, so it stands for every parameter of `net` ("net.*")."""
    if type(owner) is not ast.Attribute or type(owner.value) is not ast.Name or owner.attr not in api.PARAMETER_NAMES:
        return None
    layer = model.prov(owner.value)
    if layer is None or layer.kind is not Kind.MODULE or not isinstance(layer.module_class, str):
        return None  # (narrowed by `isinstance` to one torch.nn layer class)
    short = layer.module_class.rsplit(".", 1)[-1]
    # the innermost `for` of the walk's loops around it (a parent map of the whole module cost more than the rule)
    around = [loop.node for loop in model.loops if type(loop.node) is ast.For
              and loop.node.lineno <= owner.lineno <= (loop.node.end_lineno or loop.node.lineno)]
    loop = max(around, key=lambda node: (node.lineno, node.col_offset), default=None)
    if loop is None or type(loop.target) is not ast.Name or loop.target.id != owner.value.id or \
            not isinstance(loop.iter, (ast.Name, ast.Attribute)):
        return None
    container = model.prov(loop.iter)
    built = container.node if container is not None and container.kind is Kind.MODULE and isinstance(container.node, ast.Call) else None
    if built is None or not isinstance(container.module_class, str) or container.module_class.rsplit(".", 1)[-1] != "Sequential":
        return None
    names = _layer_names(built)
    weighted = [name for name in names if name is None or api.layer_parameters(name) is None or api.layer_parameters(name)]
    if len(names) != len(built.args) or not weighted or any(name != short for name in weighted):
        return None  # (a layer of another class, a container or an unknown one: not all of them are changed)
    return f"{model.text(loop.iter)}.*"


def _saver(model, owner: ast.expr, prov, bound: BindEvent, binds, label: str | None = None,
           write=None) -> tuple[str | None, BindEvent]:
    """The op of the pending forward that saved `owner` for its backward (torch's derivatives.yaml), and the binding
    it lies in; (None, bound) when none did."""
    if prov.kept_for_backward:
        return prov.saved_by, bound  # a non-leaf kept as some op's output or input
    label = label or model.text(owner)
    calls = {id(call.node): call for call in model.calls()}
    # the BindEvent's expression (what the loss was computed from), then the values its names were bound to before it
    # (`logits = net(x)` before `loss = F.cross_entropy(logits, y)`): all of them parts of the loss's graph
    pending, seen = [bound], {id(bound)}
    while pending and len(seen) <= SLICE_LIMIT:
        bind = pending.pop(0)
        if bind.value is None:
            continue
        found = None if _rebound(model, binds, label, bind, write) else _saver_in(model, bind.value, label, {}, calls, binds, 0, set())
        if found is not None:
            return found, bind
        for earlier in _graph_inputs(model, binds, bind):
            if id(earlier) not in seen:
                seen.add(id(earlier))
                pending.append(earlier)
    return None, bound


def _rebound(model, binds, label: str, bind: BindEvent, write) -> bool:
    """`probs = probs.gather(1, idx)` at or after `bind` and before the write: the `probs` an op of `bind` saved is the
    old tensor, not the one written. Only a rebinding that surely ran (in the saving statement itself, or in the write's
    own block) to a surely new tensor counts: `w = w.to(device)`, `w = w.t()` or `w = other` may hold the saved storage."""
    if write is None:
        return False
    for later in binds.get(label, ()):
        if bind.seq <= later.seq < write.seq and later.ctx.scope is bind.ctx.scope and later.value is not None \
                and (later.ctx.statement is bind.ctx.statement or syntax.always_after(
                    later.ctx.scope.function.node if later.ctx.scope.function is not None else model.tree,
                    later.ctx.statement, write.ctx.statement)) \
                and _fresh_tensor(model, later.value):
            return True
    return False


def _fresh_tensor(model, value: ast.expr) -> bool:
    """An op's new result (`x * y`, `x.pow(2)`, `x.gather(...)`), not a name, a view or a conversion that may hand back
    its input (`x.to(device)`, `x.float()`, `x.detach()`, `torch.squeeze(x)`); a view of a new result is new too."""
    value = uses.aliased_base(value)
    if isinstance(value, ast.BinOp):
        return True
    if not isinstance(value, ast.Call):
        return False
    qualname = model.imports.qualname(value.func)
    name = qualname.rsplit(".", 1)[-1] if qualname else value.func.attr if isinstance(value.func, ast.Attribute) else None
    if name is None:
        return False
    return not uses.may_share_input(name)


def _saver_in(model, expr: ast.expr, label: str, params: dict, calls, binds, depth: int, seen: set) -> str | None:
    """Search `expr` (and the helpers it calls, `params` mapping their parameter names to the caller's arguments)."""
    def resolve(node):
        name = model.text(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        return params.get(name, node) if name is not None and name in params else node

    def is_owner(node):
        node = resolve(node)
        return isinstance(node, (ast.Name, ast.Attribute)) and model.text(node) == label

    def requires_grad(node):
        node = resolve(node)
        if is_owner(node):
            return True
        found = model.prov(node)
        return bool(found is not None and found.kind is Kind.TENSOR and found.requires_grad is not False)

    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        op, operands = None, []
        if isinstance(node, ast.BinOp) and api.operator_op(node.op):
            op, operands = api.operator_op(node.op), [node.left, node.right]
        elif isinstance(node, ast.Call):
            event = calls.get(id(node))
            if event is not None and isinstance(event.function, FunctionInfo) and depth < HELPER_DEPTH and id(event.function) not in seen:
                found = _saver_in_helper(model, event, node, label, params, calls, binds, depth, seen | {id(event.function)})
                if found is not None:
                    return found
            if event is not None and event.role == "forward":
                found = _saver_in_forward(model, event, label, requires_grad, binds)
                if found is not None:
                    return found
            qualname = model.imports.qualname(node.func)
            if qualname is not None:
                op, operands = qualname.rsplit(".", 1)[-1], list(node.args)
            elif isinstance(node.func, ast.Attribute):
                op, operands = node.func.attr, [node.func.value, *node.args]
        if op is None:
            continue
        kept = api.saved_inputs(op, [requires_grad(operand) for operand in operands], api.gives_dim(op, node, operands[1:], model.prov))
        if any(index in kept and is_owner(operand) for index, operand in enumerate(operands)):
            return op
    return None


def _saver_in_helper(model, event, call: ast.Call, label, params, calls, binds, depth, seen) -> str | None:
    definition = event.function.node
    names = [a.arg for a in definition.args.args]
    if names and names[0] == "self" and isinstance(call.func, ast.Attribute):
        names = names[1:]
    inner = {name: params.get(model.text(arg), arg) if isinstance(arg, (ast.Name, ast.Attribute)) else arg
             for name, arg in zip(names, call.args)}
    inner.update({kw.arg: kw.value for kw in call.keywords if kw.arg in names})
    for node in ast.walk(definition):
        if isinstance(node, ast.Return) and node.value is not None:
            found = _saver_in(model, node.value, label, inner, calls, binds, depth + 1, seen)
            if found is not None:
                return found
    return None


def _saver_in_forward(model, event, label: str, requires_grad, binds) -> str | None:
    """A module whose parameter `label` is: a torch.nn layer saves it when its op's backward keeps it (nn.Linear keeps
    its weight for the input's gradient, so only when the input requires grad); a user module is assumed to (its inner
    layers' inputs require grad)."""
    target = event.receiver if event.method == "forward" else event.node.func
    module = model.text(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
    if module is None or not label.startswith((module + ".", module + "[")):
        return None
    cls = event.receiver_prov.module_class if event.receiver_prov is not None and event.method == "forward" else None
    prov = _module_prov(model, target, binds)
    cls = cls or (prov.module_class if prov is not None and prov.kind is Kind.MODULE else None)
    if isinstance(cls, ClassInfo):
        return f"{module}(...)"
    if isinstance(cls, str) and label.endswith(".*") and cls.rsplit(".", 1)[-1] == "Sequential":
        # every parameter of an nn.Sequential: a layer with parameters after another one gets an input that requires grad,
        # and keeps its weight for that input's gradient
        built = prov.node if prov is not None and isinstance(prov.node, ast.Call) else None
        names = _layer_names(built)
        weighted = [name for name in names if name and api.layer_parameters(name)]
        return f"{module}(...)" if len(weighted) >= 2 and len(names) == len(built.args) else None
    if isinstance(cls, str) and cls.rsplit(".", 1)[-1] == "Sequential":
        return _sequential_layer_saves(model, module, label, prov, event)
    if isinstance(cls, str):
        op = api.layer_op(cls.rsplit(".", 1)[-1])
        inputs = list(event.node.args)
        if op and api.saved_inputs(op, [requires_grad(i) for i in inputs] + [True]) & {len(inputs)}:
            return f"{module}(...)"  # the weight comes after the inputs in the op's arguments
    return None


def _module_prov(model, target: ast.expr, binds):
    """What a called module is: a called name has no recorded provenance, its last binding to a module has."""
    return model.prov(target) or next((bind.prov for bind in reversed(binds.get(model.text(target), ())) if bind.prov is not None
                                       and bind.prov.kind is Kind.MODULE), None)


def _sequential_layer_saves(model, module: str, label: str, prov, event) -> str | None:
    """`net[2].weight` of an `nn.Sequential(...)` of torch.nn layers: its layer keeps the weight when that layer's input
    requires grad (a layer with parameters before it, or a forward input that does) and its op's backward keeps the
    weight for the input's gradient (torch's derivatives.yaml; `nn.Linear` does, a bias never is)."""
    index_text = label[len(module):].split("]", 1)
    if not index_text[0].startswith("[") or index_text[1] != ".weight" or not index_text[0][1:].isdigit():
        return None
    built = prov.node if prov is not None and isinstance(prov.node, ast.Call) else None
    if built is None or built.keywords or not all(isinstance(arg, ast.Call) for arg in built.args):
        return None
    names = _layer_names(built)
    index = int(index_text[0][1:])
    if index >= len(names) or any(api.layer_parameters(name) is None for name in names[:index + 1]):
        return None  # (a container or an unknown layer: what it holds or passes on is not known)
    input_grad = any(api.layer_parameters(name) for name in names[:index]) or any(
        found is not None and found.kind is Kind.TENSOR and found.requires_grad is True for found in map(model.prov, event.node.args))
    if "weight" in (api.layer_parameters(names[index]) or ()) and api.layer_keeps_parameters(names[index], input_grad) is True:
        return f"{module}(...)"
    return None


def _layer_names(built: ast.Call | None) -> list:
    """`["Linear", "ReLU", "Linear"]` for `nn.Sequential(nn.Linear(...), nn.ReLU(), nn.Linear(...))`: the class named by
    each argument that is a call (None for a call of something else than a name)."""
    layers = [arg for arg in (built.args if built is not None else []) if isinstance(arg, ast.Call)]
    return [layer.func.attr if isinstance(layer.func, ast.Attribute) else getattr(layer.func, "id", None) for layer in layers]


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
    if isinstance(event, InplaceEvent) and _data_owner(event.target) is None:
        return []  # written through a name bound to `.data` elsewhere: the fix belongs where that name is made
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
            elif (stepped := _starved(model, site, owner_prov)) is not None:
                message = (f"`{name}.data` feeds `{loss}` ({where}) and cuts the only path from it to what `{name}` was computed "
                           f"from, yet `{model.text(stepped.node)}` (line {stepped.node.lineno}) steps those parameters: they get no "
                           f"gradient from this loss, silently. Use `{name}` itself (or `.detach()` if that is really meant)")
                keep = Fix(f"Use `{name}` (let the gradient flow)", Safety.UNSAFE, (Edit(model.span(node), name),))
                yield model.finding(RULE, node, message, fixes=[keep, fix], related=[(site.node, "backpropagated here"),
                                    (stepped.node, "the step that expects their gradient")], target=name,
                                    kind="read-starves-step").with_severity(Severity.WARNING)
            else:
                message = (f"`{name}.data` feeds `{loss}` ({where}): no gradient flows to `{name}` "
                           f"through this path and autograd's in-place checks are off for it. If the stop-gradient is intended, "
                           f"write `{name}.detach()`")
                finding = model.finding(RULE, node, message, fixes=[fix], related=[(site.node, "backpropagated here")], target=name,
                                        kind="read-cuts-path")
                yield finding.with_severity(Severity.INFO)


def _sources(model, prov) -> set[str]:
    """What a tensor was computed from: its trainable leaves and the modules whose forward it went through."""
    sources = set(prov.composed_from)
    for call in model.calls():
        if call.role == "forward" and id(call.node) in prov.graph:
            target = call.receiver if call.method == "forward" else call.node.func
            if isinstance(target, (ast.Name, ast.Attribute)):
                sources.add(model.text(target))
    return sources


def _covers(params, source: str) -> bool:
    for param in params:
        owner = param[:-2] if param.endswith(".*") else param
        if source == owner or source.startswith(owner + "."):
            return True
    return False


def _starved(model, site, owner_prov):
    """The optimizer step after this backward that updates what `.data` cut off, when nothing else in the backpropagated
    value reaches it (an encoder whose output is read through `.data`: its optimizer steps on no gradient). A stop-gradient
    towards parameters another optimizer owns (a GAN's generator in the discriminator's loss) or that the loss reaches
    another way (a DQN target computed by the same network) is not it."""
    if site.event is None:
        return None
    cut = _sources(model, owner_prov)
    if not cut or cut & _sources(model, site.prov):
        return None
    scope = site.event.ctx.scope
    for call in model.calls():
        if call.role == "step" and call.seq > site.event.seq and call.ctx.scope is scope:
            params = call.receiver_prov.params if call.receiver_prov is not None else frozenset()
            if params and all(_covers(params, source) for source in cut):
                # a backward in between that reaches them (the generator's own loss after the discriminator's
                # `netG(z).data`): they do get a gradient before that step
                if any(other.seq > site.event.seq and other.seq < call.seq and other.ctx.scope is scope
                       and (other.receiver_prov is None or _sources(model, other.receiver_prov) & cut)
                       for other in model.calls(role="backward") if other is not site.event):
                    return None
                return call
    return None


def _data_reads_in_slice(model: ModuleModel, site, binds):
    """`x.data` loads (x requires grad, outside no_grad) among the expressions the backpropagated value was computed from."""
    scope = site.event.ctx.scope if site.event is not None else None
    work = [(site.value, site.event.seq if site.event is not None else float("inf"), scope)]  # training_step: its return
    seen: set = set()
    steps = 0
    while work and steps < SLICE_LIMIT:
        expr, before, scope = work.pop()
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
                bind = _binding(binds, node.id, prov, before) if prov is not None else _only_binding(binds, node.id, scope, before)
                if bind is not None and bind.value is not None and id(bind) not in seen and not bind.ctx.no_grad:
                    seen.add(id(bind))
                    work.append((bind.value, bind.seq, bind.ctx.scope))
                continue
            if isinstance(node, ast.Call) and not _under_no_grad_call(model, node):
                # `model(x)` of a module of this file: what its forward returns is part of the value too
                for returned in _forward_returns(model, node, binds):
                    if id(returned) not in seen:
                        seen.add(id(returned))
                        work.append((returned, float("inf"), None))
            stack.extend(ast.iter_child_nodes(node))


def _forward_returns(model: ModuleModel, call: ast.Call, binds) -> list:
    """The returned expressions of the forward() a call of a module runs: a user module's own, or those of the user
    modules an `nn.Sequential` holds. Only forwards defined in this file (their nodes have this model's provenance)."""
    event = _call_events(model).get(id(call))
    if event is None or event.role != "forward":
        return []
    forwards = [event.runs] if isinstance(event.runs, FunctionInfo) else []
    module = _module_prov(model, call.func, binds) if not forwards and isinstance(call.func, (ast.Name, ast.Attribute)) else None
    if module is not None and module.kind is Kind.MODULE and isinstance(module.module_class, str) \
            and module.module_class.rsplit(".", 1)[-1] == "Sequential":
        forwards = [element.module_class.methods.get("forward") for element in module.elements
                    if element is not None and isinstance(element.module_class, ClassInfo)]
    own = _own_functions(model)
    return [node.value for forward in forwards if forward is not None and id(forward.node) in own
            for node in ast.walk(forward.node) if isinstance(node, ast.Return) and node.value is not None]


def _own_functions(model: ModuleModel) -> set:
    cache = model.__dict__.get("_ag008_own")
    if cache is None:
        cache = model.__dict__["_ag008_own"] = {id(info.node) for info in model.functions.values()}
    return cache


def _call_events(model: ModuleModel) -> dict:
    cache = model.__dict__.get("_ag008_calls")
    if cache is None:
        cache = model.__dict__["_ag008_calls"] = {id(event.node): event for event in model.calls() if event.ctx.via is None}
    return cache


def _under_no_grad_call(model: ModuleModel, node: ast.Call) -> bool:
    event = _call_events(model).get(id(node))
    return event is not None and bool(event.ctx.no_grad)


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
