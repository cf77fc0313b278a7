"""## What it does
Flags a plain alias `b = a` (also `b, c = a, x` and `self.ref = self.w`) made inside `torch.no_grad()` /
`torch.inference_mode()` (`a` may be a parameter of a container's layer: `b = model[-1].weight`) when `a` requires grad and `b` is then used as if it were an untracked copy:
in a computation or a `backward()` outside `no_grad`, or after an optimizer step (or another in-place
update) has changed `a`. A view made there (`b = a[1]`, `a[:, 0]`, `a.expand(n)`, `a.t()`) is the same
mistake: it shares `a`'s storage and torch keeps it tracked (advanced indexing `a[idx]` copies: not flagged).
A "best so far" reference kept under an `if` inside the training loop (`best_w = w`) is flagged where it is read after
that loop (its values, `.data` or `.requires_grad`): the loop's later optimizer steps changed `a`, and `b` with it.

## Why is this bad?
`no_grad()` only affects tensors *computed* inside it. An assignment computes nothing: `b` is `a`, the
same tensor object, so `b.requires_grad` is still `True`, gradients still flow through `b` into `a`, and
every in-place update of `a` (an optimizer step) shows up in `b`
(`with torch.no_grad(): b = a`, then `b.backward()` still fills `a.grad`). A "frozen reference" built
this way is never frozen: a proximal term `(w - w_ref)` stays zero, a target network stays identical to
the online one.

## Example
```python
w = torch.zeros(3, requires_grad=True)
with torch.no_grad():
    w_ref = w              # not a copy: the same tensor
for step in range(100):
    loss = f(w) + ((w - w_ref) ** 2).sum()
    ...
```

## Use instead
```python
w_ref = w.detach().clone()   # an untracked snapshot (clone: a copy the optimizer will not touch)
```
`w.detach()` alone stops gradients but still shares `w`'s storage; add `.clone()` when `b` must keep the
old values. Something computed inside `no_grad()` (`b = a + 0`, `b = model(x)`) is already untracked.

## Fix safety
Unsafe: `.detach()` / `.detach().clone()` change what `b` is (no gradient, and with `clone()` no longer
following `a`), which is the intent of the code but a change of behaviour.

## Runtime signature
Silent: `b.requires_grad` is `True` (and `b is a`); gradients reach `a` through `b`, and `b` changes when
`a` is updated in place.
"""
from __future__ import annotations

import ast
import sys

from ..analysis.model import AttrLoadEvent, BindEvent, ModuleModel, UseEvent
from ..analysis import syntax, training, uses as value_uses
from ..analysis.torch_api import NO_GRAD_CONTEXTS, TRACKING_ATTRIBUTES
from ..analysis.walker import label
from ..findings import Edit, Fix, Safety, Severity

CODE = "AG007"
NAME = "no-grad-alias"
SEVERITY = Severity.WARNING
SUMMARY = "b = a inside torch.no_grad() is an alias, not an untracked copy"
RUNTIME_SIGNATURE = "silent: the alias still requires grad and follows in-place updates of the original"
RULE = sys.modules[__name__]


def check(model: ModuleModel):
    uses = list(model.of_type(UseEvent))
    receivers = {id(use.node): use for use in uses if use.usage == "receiver"}
    for bind in model.of_type(BindEvent):
        if not bind.ctx.no_grad or bind.value is None:
            continue
        origin = _aliased(bind.value)
        if origin is None:
            continue
        source = label(origin)
        if source is None and isinstance(origin, ast.Attribute):
            if not (_layer_path(origin.value) and bind.prov is not None and bind.prov.is_trainable_leaf):
                continue
            source = model.text(origin)  # `model[-1].weight`: a parameter of a container's layer
        if origin is bind.value:
            prov = bind.prov
        else:  # a view: what the receiver held (the view itself is reported untracked by the walker, torch keeps it tracked)
            use = receivers.get(id(origin))
            prov = use.prov if use is not None and use.name == source else None
            if prov is None and bind.prov is not None and bind.prov.base is not None and bind.prov.base.is_trainable_leaf:
                prov = bind.prov.base  # `self.w[0]`: attribute receivers have no use event; the walker kept the view's base
        if source is None or source == bind.name or prov is None or not prov.is_tensor or prov.requires_grad is not True:
            continue
        evidence = _tracked_use(model, bind, uses, source, prov)
        if evidence is None:
            continue
        use_node, snapshot, reason = evidence
        yield _finding(model, bind, source, use_node, snapshot, reason)


def _aliased(value: ast.expr) -> ast.expr | None:
    """The tensor `value` shares storage with and keeps tracked under no_grad: `a` for `a`, `a[1]`, `a.expand(n)`, `a.T`.

    torch makes a view inside no_grad a view of its base: it still requires grad when the base does, and it follows
    every in-place change of the base. Advanced indexing (`a[idx]` with a tensor or list) copies, so only basic indices
    (numbers, slices, None, ...) count."""
    if isinstance(value, (ast.Name, ast.Attribute)) and (isinstance(value, ast.Name) or value_uses.attribute(value.attr) != value_uses.VIEW):
        return value
    if isinstance(value, ast.Attribute):  # a.T, a.mT, a.real
        return value.value if isinstance(value.value, (ast.Name, ast.Attribute)) else None
    if isinstance(value, ast.Subscript) and _basic_index(value.slice):
        return value.value if isinstance(value.value, (ast.Name, ast.Attribute)) else None
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value_uses.is_view(value.func.attr)
            and isinstance(value.func.value, (ast.Name, ast.Attribute))):
        return value.func.value
    return None


def _layer_path(node: ast.expr) -> bool:
    """`model[-1]`, `self.blocks[0].attn`: a layer reached by attributes and constant indexes from a name."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not _basic_index(node.slice):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _basic_index(index: ast.expr) -> bool:
    if isinstance(index, ast.Tuple):
        return bool(index.elts) and all(_basic_index(e) for e in index.elts)
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    if isinstance(index, ast.Slice):
        return True
    return isinstance(index, ast.Constant) and (index.value is None or index.value is Ellipsis
                                                or (isinstance(index.value, int) and not isinstance(index.value, bool)))


def _passive(callee: str) -> bool:
    """Reading the alias this way does not depend on whether it is tracked: shape queries, copies, Python values."""
    short = callee.rsplit(".", 1)[-1]
    return value_uses.passive_receiver(callee) or value_uses.is_reporter(short) or value_uses.method(short) == value_uses.ALIAS


def _tracked_use(model: ModuleModel, bind: BindEvent, uses: list[UseEvent], source: str, source_prov):
    """The first later use that treats the alias as untracked: (node, needs a snapshot, description)."""
    written = None  # a later in-place change of the original, seen through the alias
    stepped = _stepped_after(model, bind, source)
    for use in _with_attribute_reads(model, bind, uses) if stepped is not None else uses:
        if use.seq <= bind.seq:
            continue
        if type(use) is AttrLoadEvent or (use.name == bind.name and use.prov in (bind.prov, None)):
            if (stepped is not None and use.ctx.scope is bind.ctx.scope and not any(loop is stepped[0] for loop in use.ctx.loops())
                    and (use.prov is not None or _only_binding(model, bind, stepped[0], use))):
                loop, step = stepped
                return use.node, True, (f"after the loop at line {loop.node.lineno}, whose optimizer step (line {step.node.lineno}) "
                                        f"changed `{source}` in place on the iterations after this one")
            if type(use) is AttrLoadEvent or use.prov is None:
                continue
        if (written is None and use.name == source and use.prov == source_prov and use.usage == "receiver"
                and use.ctx.scope is bind.ctx.scope and value_uses.receiver(use.callee) == value_uses.WRITE):
            written = use
            continue
        if use.name != bind.name or use.prov != bind.prov:
            continue
        if use.ctx.scope is bind.ctx.scope and use.ctx.epoch > bind.ctx.epoch:
            return use.node, True, f"after an optimizer step changed `{source}` in place"
        if any(loop.has_step and not loop.contains(bind.ctx.loop) for loop in use.ctx.loops()):
            return use.node, True, "in a training loop whose optimizer step changes the original in place"
        statement = use.ctx.statement
        if isinstance(statement, ast.Return) and statement.value is use.node:
            return use.node, True, "as the function's result, which callers take for a copy"
        if (written is not None and use.ctx.scope is bind.ctx.scope
                and not (use.usage == "receiver" and value_uses.receiver(use.callee) == value_uses.METADATA)):
            return use.node, True, f"after `{source}.{written.callee}()` (line {written.node.lineno}) changed `{source}` in place"
        if use.ctx.no_grad or use.usage not in ("operand", "arg", "receiver", "element"):
            continue
        callee = use.callee or ""
        if _passive(callee):
            continue
        what = "`backward()`" if callee == "backward" else "a computation"
        return use.node, False, f"in {what} outside `no_grad()`"
    if bind.name.startswith("self."):
        return _attribute_use(model, bind, source_prov)
    return None


def _stepped_after(model: ModuleModel, bind: BindEvent, source: str):
    """(loop, step): a training loop around the alias whose optimizer (known to update `source`) runs again after it on
    the next iteration, where the alias was meant to keep the values of this one: it is made under an `if` of the loop
    (a "best so far" reference) and nothing after it leaves the loop. An alias made every iteration after the step holds
    the final values anyway; one made before the step in the iteration is seen by the epoch check."""
    loops = [loop for loop in bind.ctx.loops() if loop.scope is bind.ctx.scope and loop.has_step]
    if not loops:
        return None
    loop = loops[-1]
    step = next((step for step in loop.steps if step.receiver is not None
                 and training.covers(training.optimizer_params(model, step.receiver), source)), None)
    if step is None:
        return None
    parent_of = syntax.parents(model, bind.ctx.scope.node)
    node, conditional, flags = bind.ctx.statement, False, set()
    while node is not None and node is not loop.node:
        owner = parent_of.get(id(node))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(owner, field, None)
            if type(block) is list and any(item is node for item in block):
                later = block[[id(item) for item in block].index(id(node)) + 1:]
                if any(isinstance(item, (ast.Break, ast.Return, ast.Raise)) for item in later):
                    return None
                if owner is not loop.node:
                    flags |= _assigned_names(block)
        if isinstance(owner, ast.If):
            if _counter_test(owner.test, loop.node):
                return None  # (`if epoch == epochs - 1:` may pick the last iteration: no step after it)
            conditional = True
        node = owner
    if isinstance(loop.node, ast.While) and any(isinstance(n, ast.Name) and n.id in flags for n in ast.walk(loop.node.test)):
        return None  # (`if gap < tol: final = w; done = True` under `while not done`: the loop ends on this iteration)
    return (loop, step) if node is loop.node and conditional else None


def _assigned_names(block: list) -> set:
    """The plain names the statements of a block bind themselves (not in nested blocks)."""
    names = set()
    for item in block:
        targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, (ast.AugAssign, ast.AnnAssign)) else []
        names |= {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _counter_test(test: ast.expr, loop: ast.AST) -> bool:
    """The test reads the loop's counter: its `for` target, or a name the body increments (`step += 1`)."""
    counters = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)} if isinstance(loop, (ast.For, ast.AsyncFor)) else set()
    counters |= {n.target.id for n in ast.walk(loop) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
    # a name bound in the loop from the counter is the counter too (`last = epoch == epochs - 1`)
    derived = [(n.targets[0].id, n.value) for n in ast.walk(loop) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name)]
    grown = True
    while grown:
        grown = False
        for name, value in derived:
            if name not in counters and any(isinstance(n, ast.Name) and n.id in counters for n in ast.walk(value)):
                counters.add(name)
                grown = True
    return any(isinstance(n, ast.Name) and n.id in counters for n in ast.walk(test))


def _with_attribute_reads(model: ModuleModel, bind: BindEvent, uses: list[UseEvent]) -> list:
    """The uses, and reads of the alias's `.requires_grad` / `.data` / `.grad` (what tells it from a snapshot) in
    execution order: what a snapshot's reader looks at."""
    reads = [event for event in model.of_type(AttrLoadEvent) if event.seq > bind.seq
             and event.attr in TRACKING_ATTRIBUTES and label(event.receiver) == bind.name
             and event.prov in (bind.prov, None)]
    return sorted(uses + reads, key=lambda event: event.seq) if reads else uses


def _only_binding(model: ModuleModel, bind: BindEvent, loop, use) -> bool:
    """After the loop the walk merged the alias with what the name held before it (`best = None`): it is still this
    tensor when nothing else binds the name in the loop, or between the loop and `use`."""
    return not any(other is not bind and other.name == bind.name and other.ctx.scope is bind.ctx.scope
                   and (loop.contains(other.ctx.loop) or bind.seq < other.seq < use.seq) for other in model.of_type(BindEvent))


def _attribute_use(model: ModuleModel, bind: BindEvent, source_prov):
    """`self.ref = self.w` under no_grad: a load of `self.ref` outside no_grad in any method of the class."""
    info = bind.ctx.scope.function
    cls = info.cls if info is not None else None
    if cls is None:
        return None
    attr = bind.name.split(".", 1)[1]
    for method in cls.methods.values():
        for node, no_grad in _loads(model, method.node, attr):
            if method is info and node.lineno <= bind.node.lineno or no_grad:
                continue
            # a module's parameter is updated by its optimizer: a reference to it wants the old values
            return node, source_prov.is_trainable_leaf, f"in `{method.name}()` outside `no_grad()`"
    return None


def _loads(model: ModuleModel, function: ast.AST, attr: str):
    """(`self.<attr>` load, lexically under no_grad) pairs in a method body."""
    decorated = any(model.imports.qualname(d.func if isinstance(d, ast.Call) else d) in NO_GRAD_CONTEXTS
                    for d in getattr(function, "decorator_list", ()))
    stack = [(stmt, decorated) for stmt in getattr(function, "body", ())]
    while stack:
        node, no_grad = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inner = no_grad or any(model.imports.qualname(item.context_expr.func if isinstance(item.context_expr, ast.Call)
                                                          else item.context_expr) in NO_GRAD_CONTEXTS for item in node.items)
            stack.extend((stmt, inner) for stmt in node.body)
            continue
        if (isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name) and node.value.id == "self"):
            yield node, no_grad
        stack.extend((child, no_grad) for child in ast.iter_child_nodes(node))


def _finding(model: ModuleModel, bind: BindEvent, source: str, use_node: ast.AST, snapshot: bool, reason: str):
    alias = bind.name
    text = model.text(bind.value)
    if text == source:
        what = f"`{alias} = {source}` inside `no_grad()` makes no copy: `{alias}` is `{source}` itself"
    else:
        what = f"`{alias} = {text}` inside `no_grad()` is a view of `{source}`, not a copy: it shares `{source}`'s storage"
    message = (f"{what}, still requires grad and follows its in-place updates; it is used {reason} (line {use_node.lineno}). "
               f"Use `{text}.detach()`" + (" (`.detach().clone()` for a snapshot)" if snapshot else ""))
    value = model.span(bind.value)
    clone = Fix(f"Take an untracked snapshot: `{text}.detach().clone()`", Safety.UNSAFE, (Edit(value, f"{text}.detach().clone()"),))
    detach = Fix(f"Stop tracking: `{text}.detach()`", Safety.UNSAFE, (Edit(value, f"{text}.detach()"),))
    fixes = [clone, detach] if snapshot else [detach, clone]
    statement = bind.node
    info = bind.ctx.scope.function
    if (alias.startswith("self.") and info is not None and info.cls is not None and info.cls.is_module and isinstance(statement, ast.Assign)
            and len(statement.targets) == 1 and statement.targets[0] is bind.target):
        # on a module, a snapshot belongs in a buffer: it then follows .to(device) and is saved with the state dict
        attr = alias.split(".", 1)[1]
        fixes.insert(0, Fix(f"Register an untracked snapshot as a buffer: `self.register_buffer(\"{attr}\", ...)`", Safety.UNSAFE,
                            (Edit(model.span(statement), f'self.register_buffer("{attr}", {text}.detach().clone())'),)))
    return model.finding(RULE, bind.target, message, fixes=fixes, related=[(use_node, f"`{alias}` used as if untracked")],
                         alias=alias, original=source)
