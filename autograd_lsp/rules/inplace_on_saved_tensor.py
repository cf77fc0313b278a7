"""## What it does
Flags an in-place change (`+=`, `x[i] = …`, `clamp_`, `mul_`, any `*_` method, a reshape in place such as `unsqueeze_`
or `t_` (no value changes, but the version counter moves), an in-place activation such as
`nn.ReLU(inplace=True)` or `F.dropout(x, 0.1, inplace=True)` — also as an `nn.Sequential`'s first layer, of
`nn.Sequential(*layers)` (or a class derived from nn.Sequential, `super().__init__(*layers)`) the first append every construction in the module runs (`if pre_act: layers.append(...)`
with `pre_act` left at True; such a layer is reported at its construction too, where `inplace=True` goes) — also
through a view or `.detach()`) of
a tensor that autograd saved for the backward pass, made before the `backward()` that needs it: the
output of `sigmoid`, `tanh`, `exp`, `softmax`, `log_softmax`, `relu`, `sqrt`, `nn.Sigmoid()`, an `nn.Sequential` ending in a block whose
forward returns such an output (while nothing changes the container where the analysis does not follow: by item,
`+=`, `setattr`, through another name, a loop over a display holding it or a nested container, in another method, in
a helper that adds to it or one not in this module, under the name a caller keeps a helper's returned container by; torch, `copy` and logging calls only read it), a layer built by name (`getattr(nn, act)()`,
`ACTIVATIONS[act]()` of a dict of torch.nn classes changed nowhere, with `act` a literal or a parameter every
construction leaves at its string default) or from a class a constructor is given (`act_layer=nn.Tanh`)… (of `pow` only
when its exponent requires grad: `d.pow(2)` keeps `d`, not its result), or an input of `pow`, `log`, `sin`,
`abs`, the activations that save their input (`gelu`, `silu`, `elu`…), and of a product (`*`, `@`, `matmul`,
`linear`, `conv2d`) when the other factor requires grad: what torch's `derivatives.yaml` says each op's backward
keeps, given which inputs require grad (a normalisation written in place, `x /= x.norm(dim=-1, keepdim=True)`,
edits what the norm kept; in a helper, or a plain class's method, the output of such an op computed from its
parameters (scaled by its sizes too, `q @ k.t() / q.shape[-1] ** 0.5`) is judged at each call with what the call passes: `t = v.norm(dim=-1); t += eps` given a tensor that requires grad; an input a child module's forward keeps is kept by
the call (an `nn.Sequential` whose first layer was built beforehand and handed over by name keeps what that layer keeps,
`conv = weight_norm(nn.Conv1d(...))` included: torch.nn.utils' wrappers return the module they are given), also from a loop over an `nn.ModuleList` that surely holds a layer, written out or built over `range(n)` with
n ≥ 1 at every construction: `for attn, ff in self.layers: x = attn(x) + x`; `self.heads[-1]` is the last layer appended
only while no method the walk did not follow appends to it; a layer registered by
`self.add_module(f"block{i}", ...)` is known where `getattr(self, f"block{i}")` reads it, and an optional one,
`self.fuse = Fusion(c) if n > 1 else None`, where it is called). A view kept for backward (`conv(x.transpose(1, 2))`, `x.t() @ w`; not one that may copy,
`.reshape()`, `.contiguous()`) shares its base's version counter: changing the base in place counts; a tensor an op saves again after an earlier edit (`x += f(norm1(x))`, then `x += g(norm2(x))`) is judged
against that new save, an accumulator a loop binds on one pass and edits on the later ones (`if i == 0: acc = y`,
`else: acc += y`; or from `acc = None`, `if acc is (not) None:`) holds what the first pass bound, an element of a forward's returned tuple (`return c2, c3`) that is an op's kept output
is kept at the call (where the loss is computed from the edited element), and an output stored into a slice (`out[:, a:b] = y`) joins `out`'s graph. The backward is a
later `.backward()` whose loss was computed through the saving operation (a second name bound to the tensor, `query = hidden`,
is the same tensor: what an op keeps of one, or an edit of one, is the other's; a child forward called with keywords,
`self.head(x, squeeze=True)`, keeps its input as a positional call does; `if self.flag:` on a `True`/`False` that __init__
alone assigns, or a comparison of strings it decides (`self.inplace = act not in KEEPS_OUTPUT`), runs or skips its body; `nn.Identity()(x)` is `x` itself), or the value a module's
`forward()` / a Lightning `training_step` returns (a loss over what a forward returns in a list it appended its
outputs to, `return tuple(outs)`, runs through them) — not from a branch that runs only in eval mode (`if not
self.training:`), through which nothing backpropagates.

## Why is this bad?
To compute gradients, autograd keeps references to some tensors of the forward pass. Each tensor has a
version counter that in-place operations bump; at backward, autograd checks that the saved tensors are
still at the version it saved, and refuses otherwise ("one of the variables needed for gradient computation has been modified by an
inplace operation"). `.detach()` shares the version
counter, so editing a detached view fails the same way. (Editing through `.data` is not detected by
PyTorch at all and silently corrupts the gradients: see AG008.)

## Example
```python
probs = torch.sigmoid(x @ w)
probs.clamp_(1e-6, 1 - 1e-6)     # sigmoid saved `probs` for its backward
loss = F.binary_cross_entropy(probs, targets)
loss.backward()
```

## Use instead
```python
probs = torch.sigmoid(x @ w)
probs = probs.clamp(1e-6, 1 - 1e-6)   # a new tensor; the saved one is untouched
```
or `probs = probs.clone()` before an in-place edit.

## Fix safety
Unsafe: the out-of-place rewrite (or the clone) rebinds the name to a new tensor, so other references to
the old tensor no longer see the change. Every in-place edit of one saved tensor is reported (zeroing each border of
a map: each line breaks the backward); the first carries the fix, and the later ones point back at it, since the
clone before the first fixes them all.

## Runtime signature
`RuntimeError: one of the variables needed for gradient computation has been modified by an inplace
operation: [torch.FloatTensor [N]], which is output 0 of SigmoidBackward0, is at version 1; expected
version 0 instead.`
"""
from __future__ import annotations

import ast
import sys
from dataclasses import replace

from ..analysis import syntax
from ..analysis.model import BindEvent, InplaceEvent, ModuleModel
from ..analysis.provenance import Kind
from ..analysis.torch_api import gives_dim, operator_op, out_of_place, saved_inputs, saves_output
from ..analysis.training import GRAPH_RETURNING
from ..analysis.uses import aliased_base
from ..findings import Edit, Fix, Safety, Severity
from . import edits
from .loss_sites import loss_sites

CODE = "AG006"
NAME = "inplace-on-saved-tensor"
SEVERITY = Severity.ERROR
SUMMARY = "In-place change of a tensor autograd saved for backward, before that backward"
RUNTIME_SIGNATURE = "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation"
RULE = sys.modules[__name__]


def check(model: ModuleModel):
    inplace = list(model.of_type(InplaceEvent))
    events = [(event, event.prov.saved_by, event.prov.saved_node, None) for event in inplace if _candidate(model, event)]
    events += list(_carried(model, inplace))
    if not events:
        return
    sites = [site for site in loss_sites(model) if site.event is not None and site.is_tensor and site.prov.graph]
    returns = _graph_returns(model)
    reported = set()
    first_edit: dict = {}  # a saved tensor -> its first edit reported (where the one fix goes)
    for event, op, saver, loop in events:
        key = id(saver)
        # every edit of a saved tensor is reported (zeroing each border of an attention map: each line breaks the
        # backward, and each is where an out-of-place form would go), once per line
        tensor = (key, model.text(_base(event.target)), id(event.ctx.scope), id(event.ctx.via))
        once = (*tensor, event.node.lineno)
        if once in reported or id(event.node) in reported:
            continue  # (one line walked for two call sites: one finding)
        # a tensor saved later in the loop is edited by the next iteration: only a backward after the loop needs it
        after = event.seq if loop is None else max((e.seq for e in model.events if loop.contains(e.ctx.loop)), default=event.seq)
        # one of the tensors a call returned (`rates, scores = head(x)`): the loss must be computed from the edited one
        element = id(event.node) if _returned_several(model, saver) else None
        backward = next((site for site in sites if site.event.seq > after and _computed_through(model, key, site.prov.graph)
                         and (element is None or _computed_through(model, element, site.prov.graph))), None)
        returned = None
        if backward is None:
            function = event.ctx.scope.node
            end = event.node.lineno if loop is None else (loop.node.end_lineno or loop.node.lineno)
            returned = next((ret for ret, ret_prov in returns.get(function, ()) if ret.lineno >= end
                             and key in ret_prov.graph and (element is None or element in ret_prov.graph)), None)
            caller = event.ctx.via
            while returned is None and caller is not None:
                # a child's forward walked for its caller's call (`self.body(x)`): the caller's forward returns the graph
                returned = next((ret for ret, ret_prov in returns.get(caller.scope.node, ()) if ret.lineno >= caller.statement.lineno
                                 and _computed_through(model, key, ret_prov.graph)
                                 and (element is None or _computed_through(model, element, ret_prov.graph))), None)
                caller = caller.via
            if returned is None or syntax.eval_only(syntax.parents(model, function), event.node):
                continue  # (an eval-mode-only branch: nothing backpropagates through what it returns)
        reported.update((once, id(event.node)))
        layer = event.layer
        if layer is not None and (id(layer) in reported or model.prov(layer) is None):
            layer = None  # (reported once; a layer built in another file is reported at the call alone)
        reported.add(id(layer))
        earlier = first_edit.setdefault(tensor, event.node)
        yield from _finding(model, event, backward, returned, op, saver, loop, layer, earlier if earlier is not event.node else None)


def _candidate(model: ModuleModel, event: InplaceEvent) -> bool:
    prov = event.prov
    if prov is None or not prov.kept_for_backward:
        return False
    # `.data` shares no version counter: autograd cannot see that edit (AG008's silent case), nothing raises.
    return not (isinstance(prov.node, ast.Attribute) and prov.node.attr == "data")


def is_output(prov) -> bool | None:
    """True: the tensor was computed through the op that saved it (its graph holds that op), so it is that op's result
    or made from it; False: an input the op kept, made before it; None: a detached copy, whose graph was dropped."""
    if prov.detached:
        return None
    return id(prov.saved_node) in prov.graph


def _carried(model: ModuleModel, inplace: list):
    """In-place edits of a tensor that an op later in the same loop body saves, the name never rebound in the loop:
    from the second iteration on, the edit changes what the previous iteration's op saved."""
    for event in inplace:
        prov = event.prov
        target = _base(event.target)
        if prov is None or not prov.is_tensor or not prov.has_graph or prov.saved_by is not None or not isinstance(target, ast.Name):
            continue
        loop = event.ctx.loop
        if loop is None or loop.scope is not event.ctx.scope:
            continue
        name = target.id
        if any(isinstance(bind, BindEvent) and bind.name == name and bind.ctx.scope is loop.scope and loop.contains(bind.ctx.loop)
               for bind in model.of_type(BindEvent)):
            continue  # a fresh tensor every iteration
        saving = _saved_later(model, loop, event, name)
        if saving is not None:
            yield event, saving[0], saving[1], loop


def _saved_later(model: ModuleModel, loop, event, name: str):
    """(op, node) of an op after `event` in the loop's body whose backward keeps the tensor `name` holds."""
    for node in ast.walk(loop.node):
        if getattr(node, "lineno", 0) < event.node.lineno or isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.BinOp) and operator_op(node.op):
            op, operands = operator_op(node.op), [node.left, node.right]
        elif isinstance(node, ast.Call):
            call = model.calls_by_node().get(id(node))
            if call is None or call.role is not None or not (call.qualname or call.method):
                continue
            op = (call.qualname or call.method).rsplit(".", 1)[-1]
            operands = ([call.receiver] if call.receiver is not None else []) + list(node.args)
        else:
            continue
        grads = [bool(p is not None and p.is_tensor and p.requires_grad) for p in map(model.prov, operands)]
        kept = saved_inputs(op, grads, isinstance(node, ast.Call) and gives_dim(op, node, operands[1:], model.prov))
        if any(index in kept and isinstance(operand, ast.Name) and operand.id == name for index, operand in enumerate(operands)):
            return op, node
    return None


def _returned_several(model: ModuleModel, saver) -> bool:
    """The saving node is a call that returned a tuple (a forward's `return c2, c3`): each element is kept apart."""
    found = model.prov(saver) if isinstance(saver, ast.Call) else None
    return found is not None and found.kind is Kind.SEQUENCE


def _computed_through(model: ModuleModel, key: int, graph: frozenset) -> bool:
    """Whether `key`'s op is in `graph`, or inside a user forward whose call is (model.forward_graphs, nested)."""
    if key in graph:
        return True
    if not model.forward_graphs:
        return False
    closures = model.__dict__.setdefault("_ag006_closures", {})
    found = closures.get(id(graph))
    if found is None or found[0] is not graph:
        seen, pending = set(graph), [graph]
        while pending:
            for inner in (model.forward_graphs.get(node) for node in pending.pop()):
                if inner is not None and not inner <= seen:
                    seen.update(inner)
                    pending.append(inner)
        found = closures[id(graph)] = (graph, seen)  # (the graph kept: its id is not reused while it is cached)
    return key in found[1]


def _graph_returns(model: ModuleModel) -> dict:
    """function node -> [(return statement, provenance of its value)] for module forwards and training steps."""
    out: dict = {}
    for info in model.functions.values():
        if info.name not in GRAPH_RETURNING or info.cls is None or not info.cls.is_module:
            continue
        stack, found = list(info.node.body), []
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Return) and node.value is not None:
                # `return logits, embeds`: each tensor the forward hands back carries its graph
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                for prov in map(model.prov, values):
                    if prov is not None and prov.is_tensor and prov.graph:
                        found.append((node, prov))
            stack.extend(ast.iter_child_nodes(node))
        if found:
            out[info.node] = found
    return out


def _base(target: ast.expr) -> ast.expr:
    return target.value if isinstance(target, ast.Subscript) else target


def _finding(model: ModuleModel, event: InplaceEvent, backward, returned, op: str, saver, loop, layer: ast.Call | None,
             earlier: ast.AST | None = None):
    """`earlier`: an edit of the same saved tensor reported before this one; the fix offered there (a
    clone before it, an out-of-place op) is this line's too, so this one offers none."""
    prov = event.prov
    target = _base(event.target)
    name = model.text(target)
    if target is not event.target and not (model.prov(target) is not None and model.prov(target).is_tensor):
        name = model.text(event.target)  # `outs[i]`: a tensor held in a list
    role = "the output" if saves_output(op) and loop is None and (is_output(prov) is not False or saver is not prov.saved_node) else "an input"
    saved_at = f" (line {saver.lineno})" if hasattr(saver, "lineno") else ""
    if loop is not None:
        saved_at += f" in the previous iteration of the loop at line {loop.node.lineno}"
    alias = " (a detached view shares its version counter)" if prov.detached else ""
    view = _kept_view(model, saver, name) if role == "an input" else None
    if view is not None:
        role = f"whose view `{model.text(view)}` is an input"  # `conv(x.transpose(1, 2))`: the view shares x's version counter
    if backward is not None:
        later = f"`{model.text(backward.node)}` (line {backward.node.lineno})" if backward.form != "training_step" else "the backward"
        consequence = f"{later} will raise a version-counter error"
    else:
        consequence = f"the graph this function returns (line {returned.lineno}) needs it, so a backward through it will raise"
        scope = event.ctx.scope.node
        if not (getattr(scope, "lineno", 0) <= returned.lineno <= (getattr(scope, "end_lineno", 0) or 0)):
            consequence = f"the graph its caller returns (line {returned.lineno}) needs it, so a backward through it will raise"
    if isinstance(target, ast.Call) and event.form == "call":  # a container's layer after a saving layer (nn.Sequential order)
        message = (f"in-place `{event.op}` right after `{name}` (line {target.lineno}) in the container run at line {saver.lineno}: "
                   f"it overwrites the output `{op}` saved for backward: {consequence}. Drop `inplace=True` or put the layer "
                   f"after one that does not keep its output")
    else:
        message = (f"in-place `{event.op}` on `{name}`{alias}, {role} of `{op}`{saved_at} that autograd saved for backward: "
                   f"{consequence}. Use an out-of-place op or `.clone()` first")
    node = event.node if event.form in ("method", "call") else event.ctx.statement
    related = [(saver, f"`{op}` saves this tensor for its backward")]
    if backward is not None:
        related.append((backward.node, "the backward that needs the saved tensor"))
    fixes = _fixes(model, event, target)
    if earlier is not None:
        message += f" (it was already edited in place at line {earlier.lineno}: the fix there, before this line, fixes this one too)"
        related.append((earlier, "the first in-place edit of the same saved tensor"))
        fixes = ()
    finding = model.finding(RULE, node, message, fixes=fixes, related=related, target=name, saved_by=op)
    if layer is None:
        return [finding]
    # the same bug at the construction of the in-place layer (a container's first layer, `self.act`): where the fix goes
    message = (f"`{model.text(layer.func)}(inplace=True)` changes its input in place, and at line {event.node.lineno} "
               f"(`{model.text(event.node)}`) that input is `{name}`, {role} of `{op}`{saved_at}, which autograd saved for "
               f"backward: {consequence}. Build the layer without `inplace=True`")
    first, *cause = model.with_cause(finding, layer, message, "the call that hands it a saved tensor")
    keyword = next((kw for kw in layer.keywords if kw.arg == "inplace" and isinstance(kw.value, ast.Constant) and kw.value.value is True), None)
    if keyword is not None:
        off = Fix("Build the layer with `inplace=False`", Safety.UNSAFE, (Edit(model.span(keyword.value), "False"),))
        cause = [replace(found, fixes=(off,) + found.fixes) for found in cause]
    return [first, *cause]


def _kept_view(model: ModuleModel, saver, name: str) -> ast.expr | None:
    """The operand of the saving op that is a view of `name` (`x.transpose(1, 2)`, `x.t()`), not `name` itself."""
    if isinstance(saver, ast.BinOp):
        operands = [saver.left, saver.right]
    elif isinstance(saver, ast.Call):
        operands = [*([saver.func.value] if isinstance(saver.func, ast.Attribute) else []), *saver.args]
    else:
        return None
    if any(model.text(operand) == name for operand in operands):
        return None
    return next((operand for operand in operands if aliased_base(operand) is not operand and model.text(aliased_base(operand)) == name), None)


def _fixes(model: ModuleModel, event: InplaceEvent, target: ast.expr) -> list[Fix]:
    fixes = []
    stmt = event.ctx.statement
    if not isinstance(target, (ast.Name, ast.Attribute)) or not edits.own_line(model, stmt):
        return fixes
    container = model.prov(target)
    if isinstance(event.target, ast.Subscript) and (container is None or not container.is_tensor):
        # `outs[i] += y` on a list's tensor: `outs[i] = outs[i] + y` stores a new tensor in the list; cloning the list is no fix
        if event.form == "augassign" and isinstance(stmt, ast.AugAssign) and stmt.target is event.target:
            name, value = model.text(stmt.target), model.text(stmt.value)
            if isinstance(stmt.value, (ast.BinOp, ast.BoolOp, ast.IfExp, ast.Compare, ast.Lambda)):
                value = f"({value})"
            fixes.append(Fix(f"Rewrite out of place: `{name} = {name} {event.op[:-1]} …`", Safety.UNSAFE,
                             (Edit(model.span(stmt), f"{name} = {name} {event.op[:-1]} {value}"),)))
        return fixes
    name = model.text(target)
    if event.form == "method" and isinstance(stmt, ast.Expr) and stmt.value is event.node:
        twin = out_of_place(event.op)
        if twin:
            call = event.node
            args = model.text(call)[len(model.text(call.func)):]
            fixes.append(Fix(f"Rewrite out of place: `{name} = {name}.{twin}(…)`", Safety.UNSAFE,
                             (Edit(model.span(stmt), f"{name} = {name}.{twin}{args}"),)))
    elif event.form == "augassign" and isinstance(stmt, ast.AugAssign) and stmt.target is target:
        value = model.text(stmt.value)
        if isinstance(stmt.value, (ast.BinOp, ast.BoolOp, ast.IfExp, ast.Compare, ast.Lambda)):
            value = f"({value})"
        fixes.append(Fix(f"Rewrite out of place: `{name} = {name} {event.op[:-1]} …`", Safety.UNSAFE,
                         (Edit(model.span(stmt), f"{name} = {name} {event.op[:-1]} {value}"),)))
    fixes.append(Fix(f"Clone `{name}` before changing it in place", Safety.UNSAFE,
                     (edits.insert_before(model, stmt, f"{name} = {name}.clone()"),)))
    return fixes
