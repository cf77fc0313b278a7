"""## What it does
Flags a forward output consumed by two losses that are backpropagated by separate `backward()` calls with
an `optimizer.step()` between them, where the first loss reaches the shared output without `.detach()`:
the GAN pattern, where the discriminator loss uses the generator's `fake` and the generator loss uses it
again (the DCGAN training loop). Helpers of the same workspace count: `d_step(fake)` then `g_step(fake)`; a first loss
that a plain helper builds by handing the shared output straight to a model (`d_loss_fn(disc, real, fake)` running
`disc(fake)`) is reported at that argument, where `.detach()` goes.
The two backward calls may be one call in a loop: a loss rebuilt every iteration on a forward output computed
once before the loop (SinGAN's generator steps on the `fake` of the discriminator's loop), with a step in the loop;
or a helper run every iteration (`self.backward_D()`) on a forward another method keeps on `self` and runs only before
the loop (`self.forward()`).
And the same GAN ordering without a shared output: a loss built on a module's forward that saved its weights (fed a
tensor that requires grad: `g_loss = -D(fake).mean()`; or fed anything, a module whose own layers chain, or a
convolution; or a loss a method of that module returns, `D.adv_loss(fake)` running `self.forward`), then an optimizer
step of that module (`d_opt.step()`, on a path that always runs before it; its optimizer may be built by a constructor
parameter left at a torch class default, `opt_class=optim.Adam`; or a submodule the forward runs, `self.critic.q1`, stepped by
a plain helper given `self.q1_optim`), then that loss's `backward()`: the weights it needs were changed in place. A
loss built on every member of a module container (`[judge(x) for judge in self.judges]`) saved the container's weights;
one optimizer per member (`[Adam(d.parameters()) for d in self.discs]`) stepped in turn by a loop over them steps some.
A module derived from a workspace module whose forward runs the base's (`super().forward(v, q)`) keeps its weights as
that base does.

A helper may keep the shared forward on `self` itself (`self.pred_real = self.netD(real)` in `backward_D()`, read again by
`backward_G()`); a gradient penalty's `torch.autograd.grad(..., create_graph=True)` carries the graph of what it was given.

Reported at the `backward()` that fails (a helper's: at its call, and at its `backward()` naming that call when that
call is its only one), and at its cause: the first loss's use of the shared output (where
`.detach()` goes), the shared forward computed once, or the loss built before the step; a forward of data that the first
helper keeps on `self`: the second loss's read of it (`self.pred_real.detach()` there).

## Why is this bad?
The first `backward()` frees the saved tensors of every node it passes through, including the generator's
part of the graph that the second loss still needs: the second `backward()` raises "Trying to backward
through the graph a second time". Adding `retain_graph=True` only trades that error for gradients of the
discriminator loss leaking into the generator, or a version-counter error once the step has changed
weights the retained graph saved.

## Example
```python
fake = G(z)
d_loss = bce(D(real), ones) + bce(D(fake), zeros)
d_loss.backward()
d_opt.step()
g_loss = bce(D(fake), ones)
g_loss.backward()
```

## Use instead
```python
fake = G(z)
d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)  # D's update must not reach G
d_loss.backward()
d_opt.step()
g_loss = bce(D(fake), ones)
g_loss.backward()
```

## Fix safety
Unsafe: `.detach()` is inserted where the first loss reads the shared output, which stops that loss's
gradients from reaching the generator; that is the intent of a GAN discriminator update, but not of
every pair of losses. When the shared value also feeds the second loss through the same statement, the
finding comes without a fix.

## Runtime signature
`RuntimeError: Trying to backward through the graph a second time` (or, with `retain_graph=True`, a
version-counter error: `modified by an inplace operation`)
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field

from ..analysis.model import BindEvent, CallEvent, ModuleModel, ThroughEvent, UseEvent
from ..analysis import callsite
from ..analysis import torch_api as api
from ..analysis import uses
from ..analysis.provenance import Kind
from ..analysis.syntax import always_after, nodes, parents
from ..analysis.training import backward_target, called_module, forwards_of, keeps_own_weights, step_owners, is_backward, is_frozen, is_step, mine, never_together, optimizer_of, place, runs_after, shown, site as site_of
from ..findings import Edit, Fix, Safety, Severity

CODE = "AG017"
NAME = "missing-detach-shared-graph"
SEVERITY = Severity.ERROR
SUMMARY = "A forward output shared by two losses backpropagated separately, with an optimizer step between and no .detach()"
RUNTIME_SIGNATURE = "RuntimeError: Trying to backward through the graph a second time"
RULE = sys.modules[__name__]


@dataclass(eq=False)
class Site:
    """A place that backpropagates: `loss.backward()`, or a call of a helper that does, fed graph-carrying arguments."""

    event: CallEvent
    graph: frozenset
    retains: bool
    text: str
    arguments: list = field(default_factory=list)  # helper calls: the (argument node, graph) pairs that reach its backward
    # helper calls: forwards the helper itself keeps on `self` and backpropagates (`self.pred_real = self.netD(real)`):
    # freed by its backward, yet still there for a later call that reads them
    kept: frozenset = frozenset()

    @property
    def seq(self) -> int:
        return self.event.seq


def check(model: ModuleModel):
    found = model.__dict__.get("_ag017_findings")  # (AG003 asks for them too: computed once per model)
    if found is None:
        found = model.__dict__["_ag017_findings"] = list(_check(model))
    yield from found


def _check(model: ModuleModel):
    sites = _sites(model)
    if not sites:
        return
    # (a step that a called function runs, on an optimizer it is given or keeps: ThroughEvent, where its call stands)
    through = {id(event.through) for event in model.calls(role="step", through=True) if type(event) is ThroughEvent and event.certain}
    steps = [event for event in model.calls(through=True) if type(event) is ThroughEvent and id(event.through) in through
             or is_step(model, event) or (event.function is not None and event.function.calls_step and id(event.node) not in through)]
    reported = set()
    for index, first in enumerate(sites):
        for second in sites[index + 1:]:
            if second.event.ctx.scope is not first.event.ctx.scope or id(second) in reported:
                continue
            shared = _made_apart(model, first, second, model.shared_graph(first.graph | first.kept, second.graph))
            if not shared:
                continue
            between = [s for s in steps if s.ctx.scope is first.event.ctx.scope and first.seq <= s.seq < second.seq and
                       (s is not first.event or first.event.function is not None)
                       and not never_together(model, s, second.event) and not never_together(model, first.event, s)]
            stale = None
            if first.retains:  # the graph is kept: it only breaks where the step changed weights a shared forward saved
                stale = next(((s, module) for s in between if s is not first.event for module in _saved_modules(model, s, shared)), None)
                if stale is None:  # (a generator fed data saves its own weights: broken too when the second loss's own
                    # step leaves it alone, a discriminator's loss that should not reach it at all; else AG003's alone)
                    after = next((s for s in steps if s.ctx.scope is second.event.ctx.scope and s.ctx.loop is second.event.ctx.loop
                                  and s.seq > second.seq), None)
                    if after is not None and any(second.seq < other.seq < after.seq for other in sites):
                        after = None  # (the step after the second backward, before any other)
                    stale = next(((s, module) for s in between if s is not first.event and after is not None
                                  for module in _saved_modules(model, s, shared, own=True)
                                  if _steps_module(model, s, module) and not _steps_module(model, after, module)), None)
                between = [stale[0]] if stale is not None else []
            step = between[0] if between else None
            if step is None or never_together(model, first.event, second.event) or _recomputed_between(model, first, second, shared) \
                    or _unpacked_together(model, first, second):
                continue
            reported.add(id(second))
            yield from _raised_in_helper(model, first, second, _finding(model, first, second, step, shared,
                                                                        stale[1] if stale is not None else None))
            break
    for site in sites:
        if id(site) not in reported:
            found = _next_iteration(model, site, steps) if site.event.function is None else _state_next_iteration(model, site, steps)
            if found is not None:
                reported.add(id(site))
                yield from _iteration_finding(model, site, *found)
    for site in sites:
        if id(site) not in reported and site.event.function is None and site.event.ctx.via is None:
            found = _stepped_before_backward(model, site, steps, sites)
            if found is not None:
                yield from _stepped_finding(model, site, *found)


def _stepped_before_backward(model: ModuleModel, site: Site, steps: list, sites: list = ()):
    """An optimizer step between a loss's forward and its backward, that updates a module whose forward in that graph
    was fed a tensor that requires grad (so it saved its weights): the GAN whose generator loss `D(fake)` is built
    before `d_opt.step()` and backpropagated after it. Returns (step, module name, forward event) or None."""
    scope = site.event.ctx.scope
    latest: dict = {}  # id(node) -> the last event of that forward before the backward (a loop walked twice: the last)
    for event in model.calls(role="forward"):
        if id(event.node) in site.graph and event.seq < site.seq and _enclosing(event.ctx.scope) is scope:
            latest[id(event.node)] = event
    made = _made_by_calls(model, site, scope)  # forwards of the loss run by a call of this scope: id(node) -> (forward, call)
    for step in steps:
        if _enclosing(step.ctx.scope) is not scope or step.seq >= site.seq or step.ctx.via is not None or step.function is not None \
                or not (runs_after(step, site.event) or _steps_each_member(model, step, site.event)):
            continue
        stale = [event for event in latest.values() if event.seq < step.seq]
        stale += [forward for forward, call in made.values() if call.seq < step.seq and _same_self(model, forward, call, step)]
        names = _saved_modules(model, step, frozenset(id(event.node) for event in stale))
        if not names:  # a module that saves its weights whatever it is fed, unless a backward retained that graph (AG003's)
            retained = frozenset().union(*(other.graph for other in sites if other.retains and other.seq < step.seq
                                           and other.event.ctx.scope is scope))
            names = _saved_modules(model, step, frozenset(id(event.node) for event in stale) - retained, own=True)
        if not names:
            found = _stale_by_method(model, site, step, scope)
            if found is not None:
                return (step, *found)
        if names:
            forward = next(event for event in stale if _forward_name(model, event) == names[0])
            return step, names[0], forward
    return None


def _stale_by_method(model: ModuleModel, site: Site, step, scope):
    """`d_seq.adv_loss(fake)` in the loss, a method whose returned loss runs `self.forward(...)` (`self.net(...)`) of the
    instance it is called on: that forward, named through the receiver (`d_seq`, `d_seq.net`), saved weights the step
    changes. Returns (module name, the method call) or None."""
    owners = step_owners(model, step) if type(step) is not ThroughEvent else []
    if not owners:
        return None
    inner = forwards_of(model)
    for call in model.calls():
        function = call.function
        if function is None or function.cls is None or call.ctx.scope is not scope or call.ctx.via is not None or call.seq >= step.seq \
                or id(call.node) not in site.graph or not isinstance(call.node.func, ast.Attribute) or not runs_after(call, step):
            continue
        receiver, returned = call.node.func.value, function.returns
        instance = model.prov(receiver)
        if instance is None or instance.kind is not Kind.MODULE or instance.module_class is not function.cls \
                or returned is None or returned.kind is not Kind.TENSOR or model.text(receiver) == "self":
            continue
        for forward in inner.get(id(function), ()):
            target = model.text(forward.receiver if forward.method == "forward" else forward.node.func)
            if id(forward.node) not in returned.graph or not (target == "self" or target.startswith("self.")):
                continue
            name = model.text(receiver) + target[len("self"):]
            module = instance if target == "self" else called_module(model, forward)
            if any(name == owner or name.startswith(owner + ".") for owner in owners) and (keeps_own_weights(model, module) or any(
                    p is not None and p.is_tensor and p.requires_grad for p in map(model.prov, forward.node.args))):
                return name, call
    return None


def _made_by_calls(model: ModuleModel, site: Site, scope) -> dict:
    """The forwards of the loss's graph that a call of this scope ran in its body (`outputs, g_loss, d_loss = self.process(x)`):
    id(forward node) -> (forward event, the call), for a call the graph holds (its value reached the loss)."""
    calls = {}
    for event in model.calls():
        if event.function is not None and event.ctx.scope is scope and event.ctx.via is None and id(event.node) in site.graph \
                and event.seq < site.seq:
            calls.setdefault(event.function, event)
    found = {}
    if not calls:
        return found
    for event in model.calls(role="forward"):
        function = event.ctx.scope.function
        call = calls.get(function) if function is not None and event.ctx.via is None else None
        if call is not None and id(event.node) in site.graph:
            found[id(event.node)] = (event, call)
    return found


def _same_self(model: ModuleModel, forward: CallEvent, call: CallEvent, step) -> bool:
    """The forward (run by `call`'s body) names its module as the step's body names the optimizer's parameters: by
    `self.` of one instance (both calls made on one receiver, methods of its class), or by a name of the module."""
    target = forward.receiver if forward.method == "forward" else forward.node.func
    root = target
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    function = forward.ctx.scope.function
    member_of_self = type(target) is ast.Name and _forward_name(model, forward).startswith("self.")  # (`critic` of `self.critics`)
    if root.id != "self" and not member_of_self:
        return root.id not in forward.ctx.scope.bindings and function is not None and function.cls is None  # (a module-level name)
    if type(step) is not ThroughEvent or not isinstance(call.node.func, ast.Attribute):
        return False
    if not isinstance(step.through.func, ast.Attribute):
        # a plain helper given this instance's optimizer (`update(self.q_opt, loss)` in a method, with the forward's method
        # called on `self` too): the optimizer's parameters are named by this `self`
        helper = model.calls_by_node().get(id(step.through))
        receiver = step.direct.receiver
        given = callsite.argument_for(helper, {receiver.id}) if helper is not None and helper.function is not None \
            and isinstance(receiver, ast.Name) else None
        return model.text(call.node.func.value) == "self" and isinstance(given, ast.Attribute) and model.text(given.value) == "self"
    inner = step.direct.ctx.scope.function
    inner = inner.context_of or inner if inner is not None else None
    return inner is not None and function is not None and inner.cls is function.cls \
        and model.text(call.node.func.value) == model.text(step.through.func.value)


def _stepped_finding(model: ModuleModel, site: Site, step: CallEvent, module: str, forward: CallEvent):
    step, at = shown(model, step, site.event)
    step_node, at = site_of(step), site_of(at)
    step_text = " ".join(model.text(step_node).split())
    forward_text = " ".join(model.text(forward.node).split())
    message = (f"`{site.text}` was built on `{forward_text}` (line {forward.node.lineno}), which saved `{module}`'s weights for "
               f"its backward, but `{step_text}` (line {step_node.lineno}) changed them in place before this "
               f"backward: RuntimeError \"one of the variables needed for gradient computation has been modified by an "
               f"inplace operation\". Compute the loss after the step, or step after both backward calls")
    found = model.finding(RULE, at, message,
                          related=[(forward.node, f"`{module}`'s weights saved here"), (step_node, "and changed in place here")],
                          kind="stepped-before-backward", optimizer=optimizer_of(model, step))
    cause = (f"`{forward_text}` builds `{site.text}`'s loss here, saving `{module}`'s weights, before `{step_text}` (line "
             f"{step_node.lineno}) changes them in place; its backward (line {at.lineno}) then fails with "
             f"\"modified by an inplace operation\". Compute this loss after the step, or step after both backward calls")
    return model.with_cause(found, forward.node, cause, "the backward fails here")


def _unpacked_together(model: ModuleModel, first: Site, second: Site) -> bool:
    """Both losses unpacked from one helper's returned tuple (`policy_loss, q_loss = self.losses(batch)`): the walk
    knows the graph of the tuple, not which part each element holds, so a shared graph is not known. (Outputs of one
    module forward, `y1, y2 = model(x)`, do share that forward.)"""
    made = [_unpacking_statement(model, site) for site in (first, second)]
    if made[0] is None or made[0] is not made[1]:
        return False
    call = made[0].value
    return not any(event.node is call and event.role == "forward" for event in model.of_type(CallEvent))


def _unpacking_statement(model: ModuleModel, site: Site):
    """The `a, b = helper(...)` statement that last bound the name this site backpropagates, if it is one."""
    target, _ = backward_target(model, site.event)
    if not isinstance(target, ast.Name):
        return None
    bind = _last_bind(model, target.id, site.event.ctx.scope, site.seq)
    stmt = bind.node if bind is not None else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List)) \
            and isinstance(stmt.value, ast.Call):
        return stmt
    return None


def _next_iteration(model: ModuleModel, site: Site, steps: list):
    """(loop, forward, step): the loss is rebuilt every iteration of a training loop, but on a forward output computed once
    before the loop (`fake` of the discriminator's loop, reused by every generator step); the optimizer steps in the loop,
    so the next iteration backpropagates through that forward again: freed, or (retained) saved before the step."""
    calls = model.calls_by_node()
    _, loss = backward_target(model, site.event)
    for loop, start, end, stepping in _stepping_loops(site, steps):
        if loss is None or not loop.contains(loss.loop):
            break  # the whole loss comes from before the loop: a stale loss (AG002/AG003), not a shared forward
        if not stepping:
            continue
        before = sorted((event for ident in site.graph for event in [calls.get(ident)]
                         if event is not None and event.role == "forward" and event.ctx.scope is loop.scope and event.ctx.via is None
                         and event.node.lineno < start), key=lambda event: event.seq)
        for forward in before:
            if start <= forward.node.lineno <= end or not _trainable_forward(model, forward):
                continue
            if not site.retains:
                return loop, forward, stepping[0]
            step = next((s for s in stepping if _updates(model, s, forward)), None)
            if step is not None:
                return loop, forward, step
    return None


def _stepping_loops(site: Site, steps: list):
    """(loop, first line, last line, the optimizer steps in it) for each loop of the site's own body around it, innermost
    first."""
    for loop in site.event.ctx.loops():
        if loop.scope is not site.event.ctx.scope:
            break
        stepping = [s for s in steps if s.ctx.scope is loop.scope and loop.contains(s.ctx.loop)]
        yield loop, loop.node.lineno, loop.node.end_lineno or loop.node.lineno, stepping


def _state_next_iteration(model: ModuleModel, site: Site, steps: list):
    """(loop, forward, step): `self.backward_D()` in a training loop backpropagates through a forward that another method
    keeps on `self` (`self.fake_B = self.netG(self.real_A)` in `forward()`), and that method runs only before the loop
    (`self.forward()`): from the second iteration on the helper goes through that forward again, freed (or, retained,
    saved before a step that updated its module)."""
    function = site.event.function
    if site.event.ctx.via is not None or not _state_graph(model, site.event):
        return None
    calls = model.calls_by_node()
    makers = {}
    for ident in _state_graph(model, site.event):
        event = calls.get(ident)
        if event is not None and _trainable_forward(model, event):
            makers.setdefault(event.ctx.scope.function, []).append(event)
    for loop, start, end, stepping in _stepping_loops(site, steps):
        if not stepping:
            continue
        runs = [event for event in model.of_type(CallEvent) if event.function in makers and event.ctx.via is None
                and (event.ctx.scope is loop.scope or event.ctx.scope.function is function)]
        for maker, forwards in makers.items():
            ran = [event for event in runs if event.function is maker]
            # run in this scope before the loop, never in it, nor by the helper itself
            if not any(event.ctx.scope is loop.scope and event.node.lineno < start for event in ran) \
                    or any(event.ctx.scope.function is function or start <= event.node.lineno <= end for event in ran):
                continue
            forward = min(forwards, key=lambda event: event.seq)
            if not site.retains:
                return loop, forward, stepping[0]
            step = next((s for s in stepping if _updates(model, s, forward)), None)
            if step is not None:
                return loop, forward, step
    return None


def _trainable_forward(model: ModuleModel, event: CallEvent) -> bool:
    """A forward that saved something for its backward: a module with parameters (a torch layer only when its input
    requires grad: a first layer fed data keeps no weight), not a loss."""
    if is_frozen(model, _forward_name(model, event)):
        return False
    module = model.prov(event.node.func) if event.method != "forward" else model.prov(event.receiver)
    if _built_frozen(model, event):
        return False  # `GaussianFilter(sigma=gt, requires_grad=False)`: a fixed module, its output has no graph
    cls = module.module_class if module is not None and module.kind is Kind.MODULE else None
    if isinstance(cls, str):
        if module.elements and api.layer_parameters(cls.rsplit(".", 1)[-1]) is None:
            # a container of known layers (`nn.Sequential(conv, relu, conv)`): a second layer with parameters is fed the
            # first's output, which requires grad, so it saves its weight
            return sum(1 for layer in module.elements if isinstance(layer.module_class, str)
                       and api.layer_parameters(layer.module_class.rsplit(".", 1)[-1])) > 1
        if cls.endswith("Loss") or not api.layer_parameters(cls.rsplit(".", 1)[-1]):
            return False
        return any(p is not None and p.is_tensor and p.requires_grad for p in map(model.prov, event.node.args))
    return event.result is not None and event.result.requires_grad is True


def _last_bind(model: ModuleModel, name: str, scope, before: int) -> BindEvent | None:
    """The last binding of `name` in `scope` before the event numbered `before` (binds indexed by name once per model:
    this is asked for every forward and backward)."""
    index = model.__dict__.get("_ag017_binds")
    if index is None:
        index = model.__dict__["_ag017_binds"] = {}
        for bind in model.of_type(BindEvent):
            index.setdefault(bind.name, []).append(bind)
    found = None
    for bind in index.get(name, ()):
        if bind.seq >= before:
            break
        if bind.ctx.scope is scope:
            found = bind
    return found


def _built_frozen(model: ModuleModel, event: CallEvent) -> bool:
    """The called module was last bound, in this scope, to a constructor given `requires_grad=False`: whatever its
    parameters, it was asked not to train them (its class may live where the walk cannot see)."""
    func = event.node.func if event.method != "forward" else event.receiver
    if not isinstance(func, ast.Name):
        return False
    bind = _last_bind(model, func.id, event.ctx.scope, event.seq)
    value = bind.value if bind is not None else None
    return isinstance(value, ast.Call) and any(kw.arg == "requires_grad" and isinstance(kw.value, ast.Constant)
                                               and kw.value.value is False for kw in value.keywords)


def _updates(model: ModuleModel, step: CallEvent, forward: CallEvent) -> bool:
    """The stepped optimizer is known to update the module of `forward`."""
    prov = step.receiver_prov
    name = _forward_name(model, forward)
    if prov is None or prov.kind is not Kind.OPTIMIZER or not prov.params or name is None:
        return False
    owners = [param[:-2] if param.endswith(".*") else param for param in prov.params]
    owners = [owner[: -len(".parameters()")] if owner.endswith(".parameters()") else owner for owner in owners]
    return any(name == owner or name.startswith(owner + ".") for owner in owners)


def _iteration_finding(model: ModuleModel, site: Site, loop, forward: CallEvent, step: CallEvent):
    call = " ".join(model.text(site_of(site.event)).split())
    forward_text = " ".join(model.text(forward.node).split())
    step_text = " ".join(model.text(step.node).split())
    bind = next((event for event in model.of_type(BindEvent) if event.prov is not None and event.prov.node is forward.node), None)
    what = f"`{bind.name}` (`{forward_text}`, line {forward.node.lineno})" if bind is not None else f"`{forward_text}` (line {forward.node.lineno})"
    if site.retains:
        error = (f"retain_graph=True keeps it, but `{step_text}` (line {step.node.lineno}) changes the weights it saved: "
                 f"RuntimeError \"modified by an inplace operation\"")
    else:
        error = f"the first `backward()` freed it: RuntimeError \"Trying to backward through the graph a second time\""
    message = (f"`{call}` runs every iteration of the training loop at line {loop.node.lineno}, but its loss is built on {what}, "
               f"computed once before the loop: from the second iteration on it backpropagates through that forward again, and "
               f"{error}. Recompute it inside the loop (detached where another model's update must not reach it)")
    related = [(forward.node, "computed once, before the loop"), (step.node, "the optimizer steps inside the loop")]
    found = model.finding(RULE, site_of(site.event), message, related=related, shared=bind.name if bind is not None else forward_text,
                          first_backward_line=site_of(site.event).lineno, optimizer=optimizer_of(model, step), loop_line=loop.node.lineno)
    cause = (f"{_capitalised(what)} is computed here, once, before the training loop at line {loop.node.lineno}, whose "
             f"`{call}` (line {site_of(site.event).lineno}) backpropagates through it every iteration. Recompute it inside the loop")
    return model.with_cause(found, forward.node, cause, "the backward fails here from the second iteration on")


def _saved_modules(model: ModuleModel, step: CallEvent, shared: frozenset, own: bool = False) -> list[str]:
    """Modules whose forward is part of the shared graph, fed an input that requires grad (so their layers saved their
    weights for the input's gradient; `own`: or saving them whatever the input, training.keeps_own_weights), and whose
    parameters all belong to the optimizer that `step` updates."""
    owners = step_owners(model, step)
    if not owners:
        return []
    found = []
    for event in model.of_type(CallEvent):
        if event.role != "forward" or id(event.node) not in shared or event.seq > step.seq:
            continue
        target = event.receiver if event.method == "forward" else event.node.func
        if not isinstance(target, (ast.Name, ast.Attribute)):
            continue
        name = _forward_name(model, event)
        inputs = [model.prov(arg) for arg in event.node.args]
        if not any(arg is not None and arg.is_tensor and arg.requires_grad for arg in inputs) \
                and not (own and keeps_own_weights(model, called_module(model, event))):
            continue  # (fed data, a first linear layer keeps its input alone)
        if any(name == owner or name.startswith(owner + ".") or owner == name + "[*]" for owner in owners):
            found.append(name)  # (`X[*]`: each member's optimizer, stepped by _steps_each_member; the loss ran every member)
        elif any(owner.startswith(name + ".") and _runs_submodule(model, event, owner[len(name) + 1:]) for owner in owners):
            found.append(name)  # (the step's module is one the forward runs on what it is given: `self.q1` of the critic)
    return found


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _steps_each_member(model: ModuleModel, step, later) -> bool:
    """`for loss, opt in zip(losses, self.critic_opts): update(loss, opt)` (or a comprehension run as a statement), its
    optimizers each a member's of a module container (`[Adam(c.parameters()) for c in self.critics]`: `X[*]` owners),
    the step unconditional in that loop, the loop a statement of the block before `later`. A loss built on every member
    of that container needs it non-empty, so the loop steps some member."""
    if not any(owner.endswith("[*]") for owner in step_owners(model, step)):
        return False
    scope = _enclosing(step.ctx.scope)
    up = parents(model, scope.node)
    node = up.get(id(site_of(step)))
    while node is not None and node is not scope.node:
        if type(node) in (ast.ListComp, ast.GeneratorExp, ast.SetComp):
            if len(node.generators) != 1 or node.generators[0].ifs or not _plain_iterable(node.generators[0].iter):
                return False
            statement = up.get(id(node))
            return type(statement) is ast.Expr and always_after(scope.node, statement, site_of(later))
        if type(node) in (ast.For, ast.AsyncFor):
            stops = (ast.Break, ast.Continue, ast.Return, ast.Raise)
            return not node.orelse and _plain_iterable(node.iter) and always_after(scope.node, node, site_of(later)) \
                and not any(type(inner) in stops for stmt in node.body for inner in nodes(stmt))
        if type(node) in (ast.If, ast.While, ast.Try, ast.IfExp, ast.BoolOp, ast.Lambda, ast.DictComp, ast.With, ast.Match):
            return False  # (a branch, or a block that may stop early, between the loop and the step)
        node = up.get(id(node))
    return False


def _plain_iterable(node) -> bool:
    """A name, an attribute, a list a method of `self` returns, or `zip(...)` / `enumerate(...)` of them: no slice,
    filter or range."""
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in ("zip", "enumerate") and not node.keywords:
        return all(_plain_iterable(arg) for arg in node.args)
    if type(node) is ast.Call and type(node.func) is ast.Attribute and type(node.func.value) is ast.Name and node.func.value.id == "self":
        return True
    return type(node) in (ast.Name, ast.Attribute)


def _enclosing(scope):
    """The function (or module) scope holding a comprehension's own scope."""
    while scope is not None and type(scope.node) in _COMPREHENSIONS and scope.parent is not None:
        scope = scope.parent
    return scope


def _forward_name(model: ModuleModel, event: CallEvent) -> str:
    """The module a forward runs, as named in its scope; a member that a comprehension or loop takes from each element
    of a module container (`[judge(x) for judge in self.judges]`) is named by the container: the loss then saved the
    weights of every member, so a step over the container changes some of them (an index, `heads[0]`, is not: a
    step leaves the members its backward did not reach as they were)."""
    target = event.receiver if event.method == "forward" else event.node.func
    if type(target) is not ast.Name or event.ctx.scope is None or event.ctx.scope.node is None:
        return model.text(target)
    scope = _enclosing(event.ctx.scope)
    scope_node, up = scope.node, parents(model, scope.node)
    node = up.get(id(target))
    while node is not None and node is not scope_node:
        if type(node) in _COMPREHENSIONS:
            iters = [g.iter for g in node.generators if type(g.target) is ast.Name and g.target.id == target.id]
        elif type(node) in (ast.For, ast.AsyncFor):
            iters = [node.iter] if type(node.target) is ast.Name and node.target.id == target.id else []
        else:
            iters = []
        if iters:
            container = model.prov(iters[0]) if type(iters[0]) in (ast.Name, ast.Attribute) else None
            return model.text(iters[0]) if container is not None and container.kind is Kind.MODULE else model.text(target)
        node = up.get(id(node))
    return model.text(target)


def _steps_module(model: ModuleModel, step, module: str) -> bool:
    """The step updates all of `module` (its own parameters or an enclosing module's; unknown: assumed to)."""
    owners = step_owners(model, step) if type(step) is CallEvent else []
    return not owners or any(module == owner or module.startswith(owner + ".") for owner in owners)


def _runs_submodule(model: ModuleModel, event: CallEvent, attribute: str) -> bool:
    """The forward of a workspace module calls `self.<attribute>` on something computed from its inputs."""
    forward = event.runs
    if forward is None or "." in attribute:
        return False
    for inner in model.calls(role="forward"):
        if inner.ctx.scope.function is not forward or inner.ctx.via is not None:
            continue
        target = inner.receiver if inner.method == "forward" else inner.node.func
        if isinstance(target, ast.Attribute) and model.text(target) == f"self.{attribute}" and any(
                prov is not None and prov.is_tensor and prov.param_deps for prov in map(model.prov, inner.node.args)):
            return True
    return False


# -- where backward happens -----------------------------------------------------------------------------
def _sites(model: ModuleModel) -> list[Site]:
    sites = []
    # a backward a called function runs, whenever it runs, on what this call gives it (or gets back): where each is
    # known, they stand for the call
    # known, unless one of its backward calls is not (then the call stays one site, as a helper that backpropagates)
    known, unknown = set(), set()
    for event in model.calls(role="backward", through=True):
        if type(event) is ThroughEvent:
            (known if _known_backward(event) else unknown).add(id(event.through))
    calls = known - unknown
    for event in model.calls(through=True):
        if type(event) is ThroughEvent:
            if id(event.through) not in calls or event.role != "backward":
                continue
            prov = event.receiver_prov
            keyword = event.keyword("retain_graph")
            retains = keyword is not None and not (isinstance(keyword.value, ast.Constant) and not keyword.value.value)
            text = model.text(event.receiver if _argument(event) else event.through)
            # (the call's arguments whose graph reaches what its body backpropagates: where a `.detach()` goes)
            arguments = [(argument, given.graph) for argument in [*event.through.args, *(kw.value for kw in event.through.keywords)]
                         for given in [model.prov(argument)] if given is not None and given.kind is Kind.TENSOR and given.graph
                         and given.graph <= prov.graph]
            sites.append(Site(event, prov.graph | _calls_through(event), retains, text, arguments))
        elif is_backward(event):
            target, prov = backward_target(model, event)
            if prov is None or prov.kind is not Kind.TENSOR or not prov.graph:
                continue
            keyword = event.keyword("retain_graph")
            retains = keyword is not None and not (isinstance(keyword.value, ast.Constant) and not keyword.value.value)
            sites.append(Site(event, prov.graph, retains, model.text(target) if target is not None else "the loss"))
        elif event.function is not None and event.function.calls_backward and event.function.node is not None and id(event.node) not in calls:
            arguments = _graph_arguments(model, event)
            state = _state_graph(model, event)
            kept = _own_state_graph(model, event)
            if arguments or state or kept:
                graph = frozenset().union(*(graph for _, graph in arguments)) | state
                sites.append(Site(event, graph, _helper_retains(model, event.function), model.text(event.node), arguments, kept))
    sites.sort(key=lambda site: site.seq)
    return sites


def _made_apart(model: ModuleModel, first: Site, second: Site, shared: frozenset) -> frozenset:
    """Two backward calls that separate calls of helpers run (`update(critic, opt, replay)` twice): a node of a function
    that no call of their own scope runs (`critic.policy(obs)` in the helper, a method of the module it is given) is made
    inside those calls, each its own, unless something both hold put it there (kept on `self`: `first.kept`; a call in
    their scope before them that both graphs hold, or of a method that keeps it on `self`, `self.forward()`)."""
    if type(first.event) is not ThroughEvent or type(second.event) is not ThroughEvent or not shared:
        return shared
    if _calls_through(first.event) & _calls_through(second.event):
        return shared
    owners, calls = model._graph_owners()
    here = set()  # the function the two calls stand in, and the ones around it: what they make is made once for both
    function = first.event.ctx.scope.function
    node = function.node if function is not None else None
    while node is not None:
        here.add(node)
        node = owners.get(id(node))
    scope = first.event.ctx.scope
    keeps = {event.ctx.scope.function.node for event in model.of_type(BindEvent) if event.name.startswith("self.")
             and event.ctx.scope.function is not None}
    made_here = {event.function.node for event in model.calls() if event.function is not None and event.ctx.scope is scope
                 and event.seq < second.seq and (event.function.node in keeps or id(event.node) in first.graph and id(event.node) in second.graph)}
    return frozenset(ident for ident in shared if ident in first.kept or (function := owners.get(ident)) is None or function in here
                     or function in made_here)


def _calls_through(event: ThroughEvent) -> frozenset:
    """The calls that ran this backward (this scope's, and the ones in the bodies down to it): what their bodies made is
    made anew by each of them (a forward run inside `optim_step(model, opt, x, y)`, a loss of the argument expression it
    is given): a graph of its own per call, unless the same call holds both (`model.shared_graph`)."""
    found = set()
    while type(event) is ThroughEvent:
        found.add(id(event.through))
        event = event.inner
    return frozenset(found)


def _own_state_graph(model: ModuleModel, call: CallEvent) -> frozenset:
    """`self.backward_D()` whose body keeps a forward on `self` (`self.pred_real = self.netD(real_B)`) and backpropagates
    through it: that forward's node, for a later call of another method that reads `self.pred_real` again."""
    function = call.function
    if function.cls is None or not (isinstance(call.receiver, ast.Name) and call.receiver.id == "self"):
        return frozenset()
    cache = model.__dict__.setdefault("_ag017_own_state", {})
    if id(function) not in cache:
        calls = model.calls_by_node()
        kept = frozenset(event.prov.node and id(event.prov.node) for event in model.of_type(BindEvent) if event.name.startswith("self.")
                         and event.ctx.scope.function is function and event.ctx.via is None
                         and event.prov is not None and event.prov.kind is Kind.TENSOR)
        own = set()
        for event in model.of_type(CallEvent):
            if event.ctx.scope.function is not function or event.ctx.via is not None or not is_backward(event):
                continue
            _, prov = backward_target(model, event)
            for ident in prov.graph if prov is not None and prov.kind is Kind.TENSOR else ():
                made = calls.get(ident)
                if made is not None and made.role == "forward" and made.ctx.via is None and made.ctx.scope.function is function \
                        and ident in kept:
                    own.add(ident)
        cache[id(function)] = frozenset(own)
    return cache[id(function)]


def _known_backward(event: ThroughEvent) -> bool:
    """It runs whenever its call runs, on a tensor whose graph is known."""
    prov = event.receiver_prov
    return event.certain and prov is not None and prov.kind is Kind.TENSOR and bool(prov.graph)


def _argument(event: ThroughEvent) -> bool:
    """What a ThroughEvent backpropagates is an argument of its call (else a value its body made, or kept on `self`)."""
    return event.receiver is not None and any(argument is event.receiver for argument in
                                              [*event.through.args, *(kw.value for kw in event.through.keywords)])


def _state_graph(model: ModuleModel, call: CallEvent) -> frozenset:
    """`self.backward_D()`: the forwards of another method of the class (`self.fake_B = self.netG(self.real_A)` in
    `forward()`) that the helper's own backward goes through, reached by reading `self`: state shared by the calls."""
    function = call.function
    if function.cls is None or not (isinstance(call.receiver, ast.Name) and call.receiver.id == "self"):
        return frozenset()
    cache = model.__dict__.setdefault("_ag017_state", {})
    if id(function) not in cache:
        calls = model.calls_by_node()
        # what other methods of the class keep on `self` (a forward computed inside a helper it calls is fresh per call)
        kept = frozenset().union(*(event.prov.graph for event in model.of_type(BindEvent) if event.name.startswith("self.")
                                   and event.prov is not None and event.prov.kind is Kind.TENSOR and event.ctx.via is None
                                   and event.ctx.scope.function is not None and event.ctx.scope.function is not function
                                   and event.ctx.scope.function.cls is function.cls))
        shared = set()
        for event in model.of_type(CallEvent):
            if event.ctx.scope.function is not function or event.ctx.via is not None or not is_backward(event):
                continue
            _, prov = backward_target(model, event)
            if prov is None or prov.kind is not Kind.TENSOR:
                continue
            for ident in prov.graph:
                made = calls.get(ident)
                owner = made.ctx.scope.function if made is not None else None
                if made is not None and made.role == "forward" and made.ctx.via is None and owner is not None \
                        and owner is not function and owner.cls is function.cls and ident in kept:
                    shared.add(ident)
        cache[id(function)] = frozenset(shared)
    return cache[id(function)]


def _recomputed_between(model: ModuleModel, first: Site, second: Site, shared: frozenset) -> bool:
    """A call between the two backward sites runs again the method that made a shared forward (`self.forward()`)."""
    calls = model.calls_by_node()
    makers = {id(event.ctx.scope.function) for ident in shared for event in [calls.get(ident)]
              if event is not None and event.ctx.scope.function is not None and event.ctx.scope.function is not first.event.ctx.scope.function}
    if not makers:
        return False
    return any(event.function is not None and id(event.function) in makers and first.seq < event.seq < second.seq
               and event.ctx.scope is first.event.ctx.scope for event in model.of_type(CallEvent))


def _graph_arguments(model: ModuleModel, call: CallEvent) -> list:
    """Arguments with a graph that the helper uses without detaching them."""
    function = call.function
    args = function.node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args]]
    offset = 1 if function.cls is not None and names and names[0] == "self" else 0
    found = []
    for position, argument in enumerate(call.node.args):
        prov = model.prov(argument)
        if prov is None or prov.kind is not Kind.TENSOR or not prov.has_graph or not prov.graph:
            continue
        index = position + offset
        if index < len(names) and _used_undetached(model, function, names[index]):
            found.append((argument, prov.graph))
    return found


def _used_undetached(model: ModuleModel, function, name: str) -> bool:
    for event in model.of_type(UseEvent):
        if event.name != name or event.ctx.scope.function is not function:
            continue
        if (event.usage in ("arg", "operand", "element") or event.usage == "receiver" and not uses.passive_receiver(event.callee)) \
                and not _cut_around(model, function, event.node):
            return True
    return False


def _cut_around(model: ModuleModel, function, node: ast.AST) -> bool:
    """The use sits inside an expression whose value is cut before it goes anywhere: `(bonus + out["log_prob"]).detach()`."""
    parent_of = parents(model, function.node)
    child, parent = node, parent_of.get(id(node))
    while isinstance(parent, ast.expr):
        if isinstance(parent, ast.Attribute) and parent.value is child and uses.is_cut(parent.attr):
            return True
        child, parent = parent, parent_of.get(id(parent))
    return False


def _helper_retains(model: ModuleModel, function) -> bool:
    for event in model.of_type(CallEvent):
        if event.ctx.scope.function is function and is_backward(event) and event.keyword("retain_graph") is not None:
            return True
    return False


# -- the finding ----------------------------------------------------------------------------------------
def _finding(model: ModuleModel, first: Site, second: Site, step: CallEvent, shared: frozenset, stale: str | None = None):
    within = None
    if stale is not None:  # (the value named is one the stale module's forward went into: its weights are what broke)
        calls = model.calls_by_node()
        within = frozenset(ident for ident in shared if ident in calls and _forward_name(model, calls[ident]) == stale)
    shared_text, shared_bind, shared_name = _shared_value(model, first, second, shared, within)
    what = f"`{shared_text}`" if shared_text else "a forward output"
    made = f" (line {shared_bind.node.lineno})" if shared_bind is not None else ""
    first_event, second_event = shown(model, first.event, second.event)
    first_node, second_node, step_node = site_of(first_event), site_of(second_event), place(model, step)
    step_text = " ".join(model.text(step_node).split())
    if stale is not None:
        return _stale_finding(model, first_node, second_node, step_node, step, step_text, what, made, shared_bind, stale)
    stepped = (f"`{step_text}` (line {step_node.lineno}) ran in between" if step is not first.event else
               f"`{step_text}` also steps an optimizer")
    first_call = " ".join(model.text(first_node).split())
    second_call = " ".join(model.text(second_node).split())
    fix = _detach_fix(model, first, second, shared_name, shared_bind)
    advice = (f"Use `{shared_name}.detach()` where the first loss uses it" if fix is not None else
              "Recompute the shared forward for the second loss, or backpropagate the summed losses once")
    reads = _kept_reads(model, first, second, shared_bind) if fix is None else []
    if reads:  # (the first update's own forward of data, kept on `self`: the second loss's read is where `.detach()` goes)
        fix = Fix(f"Use `{shared_bind.name}.detach()` in the second loss", Safety.UNSAFE,
                  tuple(Edit(model.span(read), f"{shared_bind.name}.detach()") for read in reads))
        advice = f"Use `{shared_bind.name}.detach()` where the second loss reads it, or recompute it there"
    message = (f"`{second_call}` needs the graph of {what}{made}, but `{first_call}` (line {first_node.lineno}) already "
               f"backpropagated through it and freed it, and {stepped}: "
               f"RuntimeError \"Trying to backward through the graph a second time\". {advice}")
    fixes = [fix] if fix is not None else []
    related = [(first_node, "the first backward frees the shared graph here"), (step_node, "the optimizer steps in between")]
    if shared_bind is not None:
        related.insert(0, (shared_bind.node, "the shared forward output is computed here"))
    found = model.finding(RULE, second_node, message, fixes=fixes, related=related, shared=shared_text,
                          first_backward_line=first_node.lineno, optimizer=optimizer_of(model, step))
    if reads:
        cause = (f"`{shared_bind.name}` (line {shared_bind.node.lineno}) is read here by the second loss, but `{first_call}` "
                 f"(line {first_node.lineno}) already backpropagated through its graph and freed it, and {stepped}: "
                 f"`{second_call}` (line {second_node.lineno}) fails. It was computed from data by the first update: use "
                 f"`{shared_bind.name}.detach()` here, or recompute it")
        return model.with_cause(found, reads[0], cause, "the second backward fails here")
    if fix is not None:  # (the use to detach: where the fix goes)
        cause = (f"{_capitalised(what)} goes into the first loss here without `.detach()`: `{first_call}` (line "
                 f"{first_node.lineno}) then frees its graph, and `{second_call}` (line {second_node.lineno}) fails "
                 f"backpropagating through it again. Use `{shared_name}.detach()` here")
        return model.with_cause(found, fix.edits[0].span, cause, "the second backward fails here")
    if shared_bind is not None:
        cause = (f"{_capitalised(what)} is computed here once for both losses: `{first_call}` (line {first_node.lineno}) "
                 f"frees its graph and `{second_call}` (line {second_node.lineno}) backpropagates through it again. {advice}")
        return model.with_cause(found, shared_bind.node, cause, "the second backward fails here")
    return [found]


def _kept_reads(model: ModuleModel, first: Site, second: Site, bind: BindEvent | None) -> list:
    """`self.pred_real = self.netD(real)` kept by the first helper from a forward of data only (its graph is that forward
    alone), read by the second helper, which never sets it: those reads (the second loss's, where `.detach()` goes)."""
    first_function, second_function = first.event.function, second.event.function
    if bind is None or first_function is None or second_function is None or not bind.name.startswith("self.") \
            or bind.name.count(".") != 1 or bind.ctx.scope.node is not first_function.node or bind.prov is None \
            or bind.prov.node is None or not bind.prov.graph <= {id(bind.prov.node)}:
        return []
    attr = bind.name[len("self."):]
    found = [node for node in nodes(second_function.node) if type(node) is ast.Attribute and node.attr == attr
             and type(node.value) is ast.Name and node.value.id == "self"]
    if not found or any(type(node.ctx) is not ast.Load for node in found):
        return []
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def _raised_in_helper(model: ModuleModel, first: Site, second: Site, findings: list) -> list:
    """A second backward that a helper of this file runs (`update(codes)`): reported at that `backward()` too, where
    the traceback ends, naming the call that runs it, when that call is the helper's only one in the file (it is right
    for a caller that passes a fresh graph)."""
    raised = shown(model, first.event, second.event)[1]
    if not findings:
        return findings
    if type(raised) is ThroughEvent:
        inner, through = raised.direct, raised.through
    elif raised.function is not None and raised.ctx.via is None:  # a helper that backpropagates what it reads on `self`
        inner = _only_backward(model, raised.function)
        through = raised.node
    else:
        return findings
    if inner is None or not mine(model, inner) or inner.node.lineno == findings[0].span.line:
        return findings
    function = inner.ctx.scope.function
    function = function.context_of or function if function is not None else None
    if function is None or any(call.node is not through for call in model.callers(function) if call.ctx.via is None):
        return findings  # (another call of the helper may give it a graph of its own: the call alone is wrong)
    found = findings[0]
    call = " ".join(model.text(through).split())
    message = (f"This `backward()` fails when `{call}` (line {through.lineno}) runs it: {found.message[:1].lower()}"
               f"{found.message[1:]}")
    return [*findings, *model.with_cause(found, inner.node, message, "the call that runs it")[1:]]


def _only_backward(model: ModuleModel, function):
    """The one `backward()` a helper's body runs (None: none, or several)."""
    found = [event for event in model.of_type(CallEvent) if event.ctx.scope.function is function and event.ctx.via is None
             and is_backward(event)]
    return found[0] if len(found) == 1 else None


def _stale_finding(model, first_node, second_node, step_node, step, step_text: str, what: str, made: str, shared_bind, module: str):
    """The first backward retained the shared graph; the step then changed `module`'s weights that graph saved."""
    first_call = " ".join(model.text(first_node).split())
    second_call = " ".join(model.text(second_node).split())
    detached = f"`{what.strip('`')}.detach()`" if what.startswith("`") else "a detached copy"
    message = (f"`{second_call}` backpropagates through {what}{made}, whose graph `{first_call}` (line {first_node.lineno}) "
               f"retained, but `{step_text}` (line {step_node.lineno}) has since changed the weights of `{module}` that this graph "
               f"saved: RuntimeError \"modified by an inplace operation\". Recompute the shared forward after the step for the "
               f"second loss (with `.detach()` on what the first loss takes from it), or, if the second loss must not update "
               f"`{module}`, give it {detached}")
    related = [(first_node, "the first backward retains the shared graph here"), (step_node, "the optimizer steps in between")]
    if shared_bind is not None:
        related.insert(0, (shared_bind.node, "the shared forward output is computed here"))
    found = model.finding(RULE, second_node, message, related=related, shared=what.strip("`"),
                          first_backward_line=first_node.lineno, optimizer=optimizer_of(model, step), stale_module=module)
    if shared_bind is None:
        return [found]
    cause = (f"{_capitalised(what)} is computed here once for both losses; `{step_text}` (line {step_node.lineno}) changes "
             f"the weights of `{module}` its graph saved before `{second_call}` (line {second_node.lineno}) uses that graph. "
             f"Recompute it after the step for the second loss, or detach it there if that loss must not reach `{module}`")
    return model.with_cause(found, shared_bind.node, cause, "the second backward fails here")


def _shared_value(model: ModuleModel, first: Site, second: Site, shared: frozenset, within: frozenset | None = None):
    """The most downstream named forward output both losses reach, computed before the first backward (`within`: one
    whose graph holds one of these nodes).

    Returns (text for the message, its binding, the name a fix may detach: None when several names hold it,
    as with `y1, y2 = model(x)`)."""
    best, holders = None, {}
    marks = model.output_marks()  # (`y1, y2 = model(x)`: each output's graph holds its target too)
    for event in model.of_type(BindEvent):
        if event.seq >= first.seq:
            break
        prov = event.prov
        if event.ctx.scope is not first.event.ctx.scope or prov is None or prov.kind is not Kind.TENSOR or prov.node is None:
            continue
        if id(prov.node) in shared and prov.graph <= shared | {id(prov.node)} | marks.get(id(prov.node), frozenset()) and (within is None or (prov.graph | {id(prov.node)}) & within):
            holders.setdefault(id(prov.node), set()).add(event.name)
            if best is None or len(prov.graph) >= len(best.prov.graph):
                best = event
    if best is None:
        # state of the class (`self.fake_B`, set by `forward()` and read by both helpers): its binding in that method
        best = next((event for event in model.of_type(BindEvent) if event.name.startswith("self.") and event.prov is not None
                     and event.prov.node is not None and id(event.prov.node) in shared
                     and (within is None or (event.prov.graph | {id(event.prov.node)}) & within)), None)
        return (best.name, best, None) if best is not None else (None, None, None)
    if len(holders[id(best.prov.node)]) > 1:
        text = " ".join(model.text(best.prov.node).split()) if hasattr(best.prov.node, "lineno") else best.name
        return (text if len(text) <= 40 else text[:37] + "..."), best, None
    return best.name, best, best.name


def _detach_fix(model: ModuleModel, first: Site, second: Site, name: str | None, bind: BindEvent | None) -> Fix | None:
    if name is None or bind is None:
        return None
    if first.arguments:  # a helper call: detach the argument it is given
        edits = [Edit(model.span(argument), f"{model.text(argument)}.detach()") for argument, graph in first.arguments
                 if isinstance(argument, (ast.Name, ast.Attribute)) and model.text(argument) == name]
        return Fix(f"Pass `{name}.detach()` to the first update", Safety.UNSAFE, tuple(edits)) if edits else None
    statements = _first_loss_statements(model, first, second, bind)
    edits = []
    for use in model.of_type(UseEvent):
        if not bind.seq < use.seq < first.seq or use.name != name or use.prov is not bind.prov and use.prov != bind.prov:
            continue
        if use.usage not in ("arg", "operand", "element") or not any(use.ctx.statement is stmt for stmt in statements):
            continue
        if not _feeds_another_model(model, use, bind):
            continue
        edits.append(Edit(model.span(use.node), f"{name}.detach()"))
    if not edits:
        return None
    return Fix(f"Use `{name}.detach()` in the first loss", Safety.UNSAFE, tuple(edits))


def _feeds_another_model(model: ModuleModel, use: UseEvent, bind: BindEvent) -> bool:
    """`D(fake)`: the shared value goes straight into another model's forward (not a loss function), so the first loss
    keeps its own graph through that model once the value is detached."""
    calls = model.calls_by_node()
    parent = parents(model, use.ctx.statement).get(id(use.node))
    event = calls.get(id(parent)) if isinstance(parent, ast.Call) and use.node in parent.args else None
    producer = bind.prov.node
    if event is not None and event.role != "forward" and event.function is not None:
        inner = _helper_forward_of(model, event, use.node)
        return inner is not None and not (isinstance(producer, ast.Call) and model.text(producer.func) == inner)
    if event is None or event.role != "forward" or event.result is None or event.result.scalar is not None and event.runs is None \
            and event.result.shape is None:
        return False  # (a loss's result has a known size; a model's may too, from its layers' shapes: still a model)
    return not (isinstance(producer, ast.Call) and model.text(producer.func) == model.text(parent.func))


def _helper_forward_of(model: ModuleModel, call: CallEvent, argument: ast.expr) -> str | None:
    """`d_loss_fn(disc, real, fake, labels)`: a plain helper of the workspace whose body hands the parameter that
    `argument` lands on, unchanged, straight to a model's forward (`disc(fake, labels)`): that model as the caller names
    it (`disc`, or the helper's own text where no argument gives it). None: the parameter is not known to go into
    a model (a loss function, a rebinding, another use)."""
    node = call.function.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(isinstance(a, ast.Starred) for a in call.node.args) \
            or call.function.cls is not None:
        return None
    params = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    passed = {id(value): name for name, value in zip(params, call.node.args)}
    passed.update({id(kw.value): kw.arg for kw in call.node.keywords if kw.arg is not None})
    name = passed.get(id(argument))
    if name is None:
        return None
    calls, into, reads, given = model.calls_by_node(), None, 0, 0
    for inner in nodes(node):
        if type(inner) is ast.Name and inner.id == name:
            if type(inner.ctx) is not ast.Load:
                return None  # (rebound in the helper)
            reads += 1
        elif type(inner) is ast.Call and any(type(arg) is ast.Name and arg.id == name for arg in inner.args):
            event = calls.get(id(inner))
            if event is None or event.role != "forward" or not isinstance(inner.func, (ast.Name, ast.Attribute)):
                return None  # (the parameter goes somewhere else too: a loss, an unknown call)
            into = inner.func
            given += sum(type(arg) is ast.Name and arg.id == name for arg in inner.args)
    if into is None or reads != given:
        return None  # (read otherwise too: `tgt.detach()`, an input gradient's `inputs=points`, a keyword)
    given = callsite.argument_for(call, {into.id}) if type(into) is ast.Name else None
    return model.text(given) if given is not None else model.text(into)


def _first_loss_statements(model: ModuleModel, first: Site, second: Site, bind: BindEvent) -> list[ast.stmt]:
    """Statements between the shared value and the first backward that build only the first loss."""
    found = [first.event.ctx.statement]
    for event in model.of_type(BindEvent):
        if not bind.seq < event.seq < first.seq or event.ctx.scope is not first.event.ctx.scope:
            continue
        prov = event.prov
        stmt = event.ctx.statement
        single = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Name, ast.Attribute))
        if single and prov is not None and prov.kind is Kind.TENSOR and prov.node is not None and id(prov.node) in first.graph \
                and id(prov.node) not in second.graph:
            found.append(stmt)
    return found


def _capitalised(text: str) -> str:
    """A message's subject at the start of its sentence (`fake`, "a forward output")."""
    return text[:1].upper() + text[1:]
