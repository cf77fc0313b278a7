"""Training steps as the intent rules (AG014–AG017) see them.

A *unit* is one body that runs once per batch: a `for`/`while` body, or a per-batch hook such as
Lightning's `training_step`. Its *parts* are, in execution order, the forward computations, the
`backward()` calls, the optimizer steps and the gradient resets it performs — directly, or inside a
function of the same workspace that it calls (the part then sits at the call, and remembers the event
inside the helper). Everything here is a query over the walk's events; nothing re-walks the tree.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .model import AttrStoreEvent, CallEvent, ClassInfo, Event, FunctionInfo, Loop, ModuleModel, Scope, ThroughEvent
from .provenance import Kind, Provenance, flatten
from . import torch_api as api
from .torch_api import looks_like_optimizer_name
from .walker import label as _label

FORWARD, BACKWARD, STEP, ZERO_GRAD = "forward", "backward", "step", "zero_grad"
STEP_HOOKS = {"training_step"}  # called by a framework once per batch
# called by a framework once per epoch (Lightning): what they clear lived through every batch of the epoch
EPOCH_HOOKS = {"on_train_epoch_end", "on_train_epoch_start", "training_epoch_end", "on_epoch_end", "on_epoch_start",
               "on_validation_epoch_end", "validation_epoch_end", "on_fit_end", "on_train_end"}
GRAPH_RETURNING = {"forward", "training_step"}  # methods whose returned graph the caller backpropagates
BACKWARD_WRAPPERS = {"accelerator", "fabric", "engine", "model_engine", "strategy"}  # `accelerator.backward(loss)`
BACKWARD_METHODS = {"manual_backward"}  # Lightning's manual optimisation: `self.manual_backward(loss)`
GRADIENT_FUNCTIONS = {"torch.autograd.grad"}  # gradients returned instead of accumulated into `.grad`
ZEROING_METHODS = {"zero_", "fill_", "mul_", "detach_", "requires_grad_"}  # on `p.grad`: `p.grad.zero_()`
# Names of helpers we cannot see into that reset gradients: `zero_grads()`, `clear_grad()`, `reset_grads()`, and
# setting "grad(s)/gradients (to) none" (`set_grads_none()`, `set_gradients_to_none()`, `setGradsToNone()`,
# `grads_to_none()`; not `check_grads_none()`). Names are matched lowercased.
ZEROING_WORDS = ("zero", "clear_grad", "reset_grad", r"set_?grad(?:ient)?s?_?(?:to_?)?none", r"grad(?:ient)?s?_?to_?none")
_ZEROING_WORD = re.compile("|".join(ZEROING_WORDS))  # (any of them in a name: one search per call)


@dataclass(eq=False)
class Part:
    kind: str
    event: Event  # where it happens in the unit's own body (the call into a helper, for indirect parts)
    inner: Event | None = None  # the event inside the helper, for indirect parts

    @property
    def seq(self) -> int:
        return self.event.seq

    @property
    def node(self) -> ast.AST:
        return self.event.node

    @property
    def line(self) -> int:
        return self.event.node.lineno


@dataclass(eq=False)
class TrainingUnit:
    node: ast.AST  # the For/While, or the hook's FunctionDef
    scope: Scope
    loop: Loop | None = None
    function: FunctionInfo | None = None
    parts: list = field(default_factory=list)

    @property
    def body(self) -> list[ast.stmt]:
        return self.node.body

    @property
    def kind(self) -> str:
        return "loop" if self.loop is not None else "hook"

    @property
    def line(self) -> int:
        return self.node.lineno

    def of(self, kind: str) -> list[Part]:
        return [part for part in self.parts if part.kind == kind]

    def contains(self, event: Event) -> bool:
        if self.loop is not None:
            return any(loop is self.loop for loop in event.ctx.loops())
        return event.ctx.scope.function is self.function

    def describe(self) -> str:
        if self.loop is not None:
            keyword = "while" if isinstance(self.node, ast.While) else "for"
            return f"the `{keyword}` loop at line {self.line}"
        return f"`{self.function.name}()` (called once per batch)"


# -- recognising the parts ----------------------------------------------------------------------------
def is_backward(event: Event) -> bool:
    return isinstance(event, CallEvent) and (event.role == "backward" or event.method in BACKWARD_METHODS)


def computes_gradients(event: Event) -> bool:
    """A `backward()` or a `torch.autograd.grad(...)`: code that runs it expects grad mode on (under no_grad it raises)."""
    return is_backward(event) or (isinstance(event, CallEvent) and event.qualname in GRADIENT_FUNCTIONS)


def is_step(model: ModuleModel, event: Event) -> bool:
    if not isinstance(event, CallEvent):
        return False
    if event.role == "step":
        return True
    # AMP: `scaler.step(optimizer)`
    return event.method == "step" and bool(event.node.args) and _scaler(event.receiver) and optimizer_like(model, event.node.args[0])


def is_zeroing(event: Event) -> bool:
    if isinstance(event, AttrStoreEvent):
        return event.target.attr == "grad"  # `p.grad = None` / `p.grad = torch.zeros_like(p)`
    if not isinstance(event, CallEvent):
        return False
    if event.role == "zero_grad":
        return True
    func = event.node.func
    if type(func) is ast.Attribute:
        if func.attr in ZEROING_METHODS and _grad_expression(func.value):
            return True
        name = func.attr
    else:
        name = func.id if type(func) is ast.Name else ""
    lowered = name.lower()
    if _ZEROING_WORD.search(lowered) is None:
        return False  # (most calls: tested first)
    # tensor factories and in-place fills: not a gradient reset
    return not ((event.qualname or "").startswith("torch") or lowered.startswith(("zeros", "new_zeros")) or lowered == "zero_")


def _grad_expression(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr == "grad"


def _scaler(node: ast.expr | None) -> bool:
    text = node.attr if isinstance(node, ast.Attribute) else (node.id if isinstance(node, ast.Name) else "")
    return "scaler" in text.lower()


def optimizer_like(model: ModuleModel, node: ast.expr) -> bool:
    prov = model.prov(node)
    if prov is not None and prov.origin != "param":
        return prov.kind is Kind.OPTIMIZER
    text = node.attr if isinstance(node, ast.Attribute) else (node.id if isinstance(node, ast.Name) else "")
    return bool(text) and looks_like_optimizer_name(text) and not model.imports.other_framework


def optimizer_of(model: ModuleModel, event: CallEvent) -> str | None:
    """The optimizer expression a step or zero_grad acts on, as written (`opt_g`, `self.optimizer`)."""
    if type(event) is ThroughEvent:  # (as the body that runs it writes it, when that body is this module's)
        return optimizer_of(model, event.direct) if mine(model, event.direct) else None
    if event.method == "step" and event.node.args and _scaler(event.receiver):
        return model.text(event.node.args[0])
    return model.text(event.receiver) if event.receiver is not None else None


def optimizer_params(model: ModuleModel, node: ast.expr | None) -> frozenset:
    """Labels of the parameters the optimizer `node` names updates (`{"G.*", "D.*"}`), as the walk found them; empty when
    unknown."""
    prov = model.prov(node) if node is not None else None
    if prov is None or prov.kind is not Kind.OPTIMIZER:
        return frozenset()
    return prov.params


def covers(labels: frozenset, label: str) -> bool:
    """`label` (a parameter, or `m.*`: all of module m's) is among `labels`, or inside a module they name whole."""
    return label in labels or any(other.endswith(".*") and label.startswith(other[:-1]) for other in labels)


def site(event: Event) -> ast.AST:
    """Where an event happens in its own scope: a ThroughEvent at the call that runs it."""
    return event.through if type(event) is ThroughEvent else event.node


def parted(a: Event, b: Event) -> tuple[Event, Event]:
    """Two events of one scope where they part: while both come through the same call, the events of that call's
    body they stand for (`self.update(d_loss, g_loss)`: its backward and its step, in its body)."""
    while type(a) is ThroughEvent and type(b) is ThroughEvent and a.through is b.through:
        a, b = a.inner, b.inner
    return a, b


def shown(model: ModuleModel, first: Event, later: Event) -> tuple[Event, Event]:
    """Two events of one scope as a finding shows them: where they part (parted) when that body is this module's, else
    as the events of this scope."""
    a, b = parted(first, later)
    if a is not first and not mine(model, a):
        return first, later
    return a, b


def mine(model: ModuleModel, event: Event) -> bool:
    """The event lies in this module's code (a body walked for a call may be another module's)."""
    node = event.ctx.scope.node
    return node is model.tree or node in model.functions


def place(model: ModuleModel, event: Event) -> ast.AST:
    """The node a message names for an event: where its body runs it when that body is this module's, else its call."""
    if type(event) is ThroughEvent and not mine(model, event.inner):
        return event.through
    return event.node


def runs_after(first: Event, later: Event) -> bool:
    """`later` runs whenever `first` has run: in a later statement of the block that holds `first` (where they
    part, see parted), and a ThroughEvent runs whenever its call does."""
    if type(first) is ThroughEvent and not first.certain or type(later) is ThroughEvent and not later.certain:
        return False
    a, b = parted(first, later)
    if a is b or a.ctx.scope is not b.ctx.scope:
        return False
    from .syntax import always_after

    return always_after(a.ctx.scope.node, a.ctx.statement, site(b))


def never_together(model: ModuleModel, first: Event, later: Event) -> bool:
    """`first` and `later` never both run in one pass of their body, where they part (see parted): different branches of
    one `if`/`try`, or two `if`s whose tests contradict on a flag nothing rebinds between them (syntax.exclusive)."""
    a, b = parted(first, later)
    if a is b or a.ctx.scope is not b.ctx.scope:
        return False
    from .syntax import exclusive, parents

    return exclusive(parents(model, a.ctx.scope.node), site(a), site(b))


def backward_target(model: ModuleModel, event: CallEvent) -> tuple[ast.expr | None, Provenance | None]:
    """The tensor a backward call differentiates: `loss` in `loss.backward()`, `self.manual_backward(loss)`,
    `accelerator.backward(loss)`, `scaler.scale(loss).backward()`, `torch.autograd.backward(loss)`."""
    receiver = event.receiver
    if event.method == "backward" and receiver is not None:
        prov = event.receiver_prov
        if prov is not None and prov.kind is Kind.TENSOR:
            return receiver, prov
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "scale" and receiver.args:
            return receiver.args[0], model.prov(receiver.args[0])
        if prov is None and not event.node.args:
            return receiver, None
    if event.node.args:
        return event.node.args[0], model.prov(event.node.args[0])
    return None, None


# -- units ------------------------------------------------------------------------------------------
def training_units(model: ModuleModel) -> list[TrainingUnit]:
    """Every loop and per-batch hook with its parts (cached on the model)."""
    cached = model.__dict__.get("_training_units")
    if cached is not None:
        return cached
    kinds = {}  # id(event) -> its direct kinds, for the few events that have any (from the events' index by kind)
    for kind_of_event in (CallEvent, AttrStoreEvent):
        for event in model.of_type(kind_of_event):
            found = _direct_kinds(model, event)
            if found:
                kinds[id(event)] = found
    summaries = _function_summaries(model, kinds)
    units: list[TrainingUnit] = [TrainingUnit(loop.node, loop.scope, loop=loop) for loop in model.loops]
    by_loop = {id(unit.loop): unit for unit in units}
    hooks = {}
    for info in model.functions.values():
        if info.name in STEP_HOOKS and info.cls is not None and info.scope is not None:
            hooks[id(info)] = TrainingUnit(info.node, info.scope, function=info)
    units.extend(hooks.values())
    for event in model.events:
        direct = kinds.get(id(event), ())
        through = summaries.get(id(event.function)) if isinstance(event, CallEvent) and event.function is not None else None
        if STEP in direct and through is None:
            closure = step_closure(event)  # `opt.step(closure)` runs the closure: its backward and resets are the step's
            through = summaries.get(id(closure)) if closure is not None else None
        if not direct and not through:
            continue  # (most events: no part, no list made)
        found = [Part(kind, event) for kind in direct]
        if through:
            for kind, inner in through.items():
                if kind not in direct and not _switched_off(model, event, kind, kinds):
                    found.append(Part(kind, event, inner))
        if not found:
            continue
        for loop in event.ctx.loops():
            unit = by_loop.get(id(loop))
            if unit is not None:  # (a loop of a body walked for one call site is no unit of its own)
                unit.parts.extend(found)
        hook = hooks.get(id(event.ctx.scope.function)) if hooks and event.ctx.scope.function is not None else None
        if hook is not None:
            hook.parts.extend(found)
    model.__dict__["_training_units"] = units
    return units


def step_closure(event: CallEvent) -> FunctionInfo | None:
    """`optimizer.step(closure)`: the function of the workspace it runs (and whose returned value step() returns)."""
    if event.role != "step":
        return None
    argument = event.node.args[0] if event.node.args else getattr(event.keyword("closure"), "value", None)
    if not isinstance(argument, ast.Name):
        return None
    scope = event.ctx.scope
    while scope is not None and argument.id not in scope.defs:
        scope = scope.parent
    return scope.defs[argument.id] if scope is not None else None


def _switched_off(model: ModuleModel, call: CallEvent, kind: str, kinds: dict) -> bool:
    """Every `kind` part the helper performs itself sits under `if <flag>:` for a parameter defaulting to a false
    constant that this call does not pass (`def optimizer_step(self, zero_grad=False)` called as `optimizer_step()`)."""
    function = call.function
    node = function.node if function is not None else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(k.arg is None for k in call.node.keywords) \
            or any(isinstance(a, ast.Starred) for a in call.node.args):
        return False
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    bound_first = 1 if function.cls is not None and call.receiver is not None and positional else 0
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    passed = {a.arg for a in positional[bound_first:bound_first + len(call.node.args)]} | {k.arg for k in call.node.keywords}
    flags = {name for name, default in defaults.items() if isinstance(default, ast.Constant) and not default.value and name not in passed}
    if not flags:
        return False
    memo = model.__dict__.setdefault("_switched_off", {})  # (one answer per helper, kind and set of flags left out)
    key = (id(function), kind, frozenset(flags))
    if key not in memo:
        memo[key] = _guarded_by(model, function, node, kind, flags, kinds)
    return memo[key]


def _guarded_by(model: ModuleModel, function, node, kind: str, flags: set, kinds: dict) -> bool:
    guarded = []  # line ranges of `if flag:` bodies
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Name) and stmt.test.id in flags and stmt.body:
            guarded.append((stmt.body[0].lineno, stmt.body[-1].end_lineno or stmt.body[-1].lineno))
    if not guarded:
        return False
    own = [e for e in model.events if e.ctx.scope.function is function and kind in kinds.get(id(e), ())]
    return bool(own) and all(any(start <= e.node.lineno <= end for start, end in guarded) for e in own)


def _direct_kinds(model: ModuleModel, event: Event) -> list[str]:
    if isinstance(event, AttrStoreEvent):
        return [ZERO_GRAD] if is_zeroing(event) else []
    if not isinstance(event, CallEvent):
        return []
    if event.role == "forward":
        return [FORWARD]
    if is_backward(event):
        return [BACKWARD]
    if is_step(model, event):
        return [STEP]
    if is_zeroing(event):
        return [ZERO_GRAD]
    return []


def _function_summaries(model: ModuleModel, kinds: dict) -> dict[int, dict[str, Event]]:
    """For each same-workspace function: the kinds of part it performs (itself or through its calls), with an example event."""
    direct: dict[int, dict[str, Event]] = {}
    calls: dict[int, list[FunctionInfo]] = {}
    for event in model.events:
        function = event.ctx.scope.function
        if function is None:
            continue
        for kind in kinds.get(id(event), ()):
            if kind != FORWARD:
                direct.setdefault(id(function), {}).setdefault(kind, event)
        if isinstance(event, CallEvent) and event.function is not None and event.function is not function:
            calls.setdefault(id(function), []).append(event.function)
    for event in model.of_type(CallEvent):
        info = event.function
        if info is not None and id(info) not in direct and info.scope is None:
            # resolved in another module (jedi): only its own flags are known
            direct[id(info)] = {kind: event for kind, flag in ((BACKWARD, info.calls_backward), (STEP, info.calls_step),
                                                               (ZERO_GRAD, info.calls_zero_grad)) if flag}
    summaries = {key: dict(value) for key, value in direct.items()}
    changed = True
    while changed:
        changed = False
        for caller, callees in calls.items():
            mine = summaries.setdefault(caller, {})
            for callee in callees:
                for kind, inner in summaries.get(id(callee), {}).items():
                    if kind not in mine:
                        mine[kind] = inner
                        changed = True
    return summaries


def innermost_unit(model: ModuleModel, event: Event, needs: str | None = None) -> TrainingUnit | None:
    """The innermost unit containing `event` (that has a part of kind `needs`, if given)."""
    units = training_units(model)
    by_loop = {id(unit.loop): unit for unit in units if unit.loop is not None}
    for loop in event.ctx.loops():
        unit = by_loop.get(id(loop))
        if unit is not None and (needs is None or unit.of(needs)):
            return unit
    function = event.ctx.scope.function
    for unit in units:
        if unit.function is not None and unit.function is function and (needs is None or unit.of(needs)):
            return unit
    return None


def first_forward(unit: TrainingUnit, model: ModuleModel, before: int | None = None):
    """The first event of the unit that builds a graph (a module call, or a binding of a graph-carrying value)."""
    from .model import BindEvent

    for event in model.events:
        if before is not None and event.seq >= before:
            break
        if not unit.contains(event):
            continue
        if isinstance(event, CallEvent) and event.role == "forward":
            return event
        if isinstance(event, BindEvent) and event.prov is not None and event.prov.has_graph and not event.prov.no_grad:
            return event
    return None


def forward_statement(model: ModuleModel, unit: TrainingUnit, backward: Part) -> ast.stmt | None:
    """The statement of the unit's body where the computation reaching `backward` starts.

    Followed by names, backwards from the backward's statement: `loss = crit(out, y)` needs `out`, which
    `out = model(x)` binds, and so on; the earliest such statement is where the forward begins.
    """
    from .syntax import body_statement

    body = unit.body
    last = body_statement(body, backward.line)
    if last is None:
        return None
    target = backward.event.node if backward.inner is not None else (backward_target(model, backward.event)[0] or backward.event.node)
    needed = _loaded(target)
    earliest = last
    for stmt in reversed(body[: body.index(last)]):
        if _stored(stmt) & needed:
            earliest = stmt
            needed |= _loaded(stmt)
    # Another loss's backward/step in between (a GAN's discriminator update): start after it.
    start, end = body.index(earliest), body.index(last)
    for part in unit.parts:
        if part.kind in (BACKWARD, STEP) and part is not backward:
            stmt = body_statement(body, part.line)
            if stmt is not None and start <= body.index(stmt) < end:
                start = body.index(stmt) + 1
    return body[start]


def _names(node: ast.AST, context: type) -> set[str]:
    """Labels of the names and `x.attr`s in `node` used in `context` (ast.Load or ast.Store)."""
    return {name for sub in ast.walk(node)
            if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, context) and (name := _label(sub))}


def _loaded(node: ast.AST) -> set[str]:
    return _names(node, ast.Load)


def _stored(node: ast.AST) -> set[str]:
    return _names(node, ast.Store)


# -- frozen modules -------------------------------------------------------------------------------------
def frozen_modules(model: ModuleModel) -> set[str]:
    """Modules (as written: `backbone`, `self.encoder`) whose parameters the file sets to `requires_grad=False` anywhere:
    `backbone.requires_grad_(False)`, or `p.requires_grad = False` in a loop over `backbone.parameters()`. Their forward
    may record nothing to backpropagate (a frozen feature extractor), so a graph through them proves no error."""
    cached = model.__dict__.get("_frozen_modules")
    if cached is not None:
        return cached
    from . import torch_api as api
    from .syntax import dotted

    found: set[str] = set()
    for event in model.events:
        if isinstance(event, CallEvent) and event.role == "requires_grad_" and event.receiver is not None:
            value = event.node.args[0] if event.node.args else next((kw.value for kw in event.node.keywords if kw.arg == "requires_grad"), None)
            if isinstance(value, ast.Constant) and value.value is False:
                receiver = event.receiver
                name = dotted(receiver)
                if isinstance(receiver, ast.Name):
                    name = _iterated_module(event, receiver.id, api.MODULE_ITERATORS, dotted) or name
                if name:
                    found.add(name)
        elif isinstance(event, AttrStoreEvent) and event.target.attr == "requires_grad":
            value = event.value
            if isinstance(value, ast.Constant) and value.value is False and isinstance(event.target.value, ast.Name):
                name = _iterated_module(event, event.target.value.id, api.MODULE_ITERATORS, dotted)
                if name:
                    found.add(name)
    model.__dict__["_frozen_modules"] = found
    return found


def _iterated_module(event: Event, variable: str, iterators, dotted) -> str | None:
    """The module whose parameters a loop variable runs over (`for p in backbone.parameters()` -> "backbone")."""
    for loop in event.ctx.loops():
        node = loop.node
        if not isinstance(node, (ast.For, ast.AsyncFor)):
            continue
        names = [node.target] if isinstance(node.target, ast.Name) else list(getattr(node.target, "elts", []))
        if not any(isinstance(n, ast.Name) and n.id == variable for n in names):
            continue
        for sub in ast.walk(node.iter):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in iterators:
                return dotted(sub.func.value)
    return None


def is_frozen(model: ModuleModel, name: str | None) -> bool:
    return name is not None and any(name == frozen or name.startswith(frozen + ".") for frozen in frozen_modules(model))


# -- weights a forward saves -------------------------------------------------------------------------------
def called_module(model: ModuleModel, event: CallEvent) -> Provenance | None:
    """The module a forward call runs (`critic(x)`, `self.critic(x)`, `net.forward(x)`), as the walk knows it."""
    target = event.receiver if event.method == "forward" else event.node.func
    prov = model.prov(target)
    scope = event.ctx.scope
    while prov is None and isinstance(target, ast.Name) and scope is not None:  # (a module-level `critic`)
        if target.id in scope.bindings:
            prov = scope.bindings[target.id]
            break
        scope = scope.parent
    if prov is None and isinstance(target, ast.Attribute):
        owner = model.prov(target.value)
        cls = owner.module_class if owner is not None and owner.kind is Kind.MODULE else None
        if cls is not None and not isinstance(cls, str):
            prov = cls.attribute(target.attr, owner)
    return prov if prov is not None and prov.kind is Kind.MODULE else None


def keeps_own_weights(model: ModuleModel, module: Provenance | None, depth: int = 0) -> bool:
    """The module's forward saves some of its own weights for its backward whatever its input: a convolution, a
    container whose second layer with parameters is fed the first's output, a workspace module whose forward feeds
    one of its layers a value made from another (the input that requires grad is its own). An optimizer step over
    them then breaks every graph built before it. False where unknown."""
    cls = module.module_class if module is not None else None
    if cls is None or depth > 2:
        return False
    if isinstance(cls, str):
        short = cls.rsplit(".", 1)[-1]
        if module.elements and api.layer_parameters(short) is None:
            weighted = [name for name in _element_layers(module) if api.layer_parameters(name)]
            # (a workspace block that keeps its own weights whatever its input: so does the container running it; the
            # container is a level of the module it is called from already, so its blocks take no extra depth)
            return len(weighted) > 1 or any(api.layer_keeps_parameters(name, False) for name in weighted[:1]) or any(
                layer is not None and isinstance(layer.module_class, ClassInfo) and keeps_own_weights(model, layer, depth)
                for layer in module.elements)
        return api.layer_parameters(short) is not None and api.layer_keeps_parameters(short, False) is True
    cache = model.__dict__.setdefault("_keeps_own_weights", {})
    if id(cls) not in cache:
        cache[id(cls)] = False  # (a recursive module: no claim)
        forward = cls.methods.get("forward")
        inner = forwards_of(model).get(id(forward), ()) if forward is not None else ()
        saving = {id(event.node) for event in inner if keeps_own_weights(model, called_module(model, event), depth + 1)
                  or _fed_own_graph(model, event) and _keeps_when_fed(model, called_module(model, event))}
        if not saving and forward is not None:
            saving = _base_forward_saving(model, cls, forward, depth)
        # every output goes through such a layer (`return enc, self.dec(enc)`: the first output saved no weight)
        outputs = flatten([forward.returns]) if saving and forward.returned_any else []
        cache[id(cls)] = bool(outputs) and all(out is not None and out.kind is Kind.TENSOR and out.graph & saving for out in outputs)
    return cache[id(cls)]


def _base_forward_saving(model: ModuleModel, cls, forward, depth: int) -> set:
    """`logits = super().forward(v, q)` in the forward of a module derived from a workspace module (`class GenB(BaseModel)`)
    whose own forward keeps its weights whatever its input: the graph nodes of that forward's result (all of them went
    through a layer that saved its weights). Empty where the forward calls no such base forward."""
    if not cls.bases or not model.mentions("super"):
        return set()
    from .syntax import nodes, super_call
    found = set()
    for node in nodes(forward.node):
        if not super_call(node, "forward"):
            continue
        result = model.prov(node)
        if result is None or result.kind is not Kind.TENSOR or not result.graph:
            continue
        base = next((c for c in cls.bases if "forward" in c.methods), None)
        if base is not None and keeps_own_weights(model, Provenance(Kind.MODULE, 0, module_class=base), depth + 1):
            found |= result.graph | {id(node)}
    return found


def forwards_of(model: ModuleModel) -> dict:
    """id of a function -> the forward calls of its symbolic walk (indexed once per model)."""
    found = model.__dict__.get("_forwards_of")
    if found is None:
        found = model.__dict__["_forwards_of"] = {}
        for event in model.calls(role="forward"):
            function = event.ctx.scope.function
            if function is not None and event.ctx.via is None:
                found.setdefault(id(function), []).append(event)
    return found


def _fed_own_graph(model: ModuleModel, event: CallEvent) -> bool:
    """A layer inside a forward fed a value that requires grad through the module's own parameters (not its input)."""
    return any(p is not None and p.kind is Kind.TENSOR and p.requires_grad is True and p.composed_from
               and all(label.startswith("self.") for label in p.composed_from) for p in map(model.prov, event.node.args))


def _keeps_when_fed(model: ModuleModel, module: Provenance | None) -> bool:
    """A module with parameters that, fed an input requiring grad, keeps its weights for that input's gradient."""
    cls = module.module_class if module is not None else None
    if isinstance(cls, str):
        short = cls.rsplit(".", 1)[-1]
        if module.elements and api.layer_parameters(short) is None:
            return any(api.layer_parameters(name) for name in _element_layers(module))
        return bool(api.layer_parameters(short)) and api.layer_keeps_parameters(short, True) is True
    return False


def _element_layers(container: Provenance) -> list[str]:
    """The torch.nn class names of a container's known layers, in order (`["Linear", "ReLU", "Linear"]`)."""
    return [layer.module_class.rsplit(".", 1)[-1] for layer in container.elements
            if layer is not None and isinstance(layer.module_class, str)]


def step_owners(model: ModuleModel, step: CallEvent) -> list[str]:
    """What the stepped optimizer updates, as names of this scope (`critic`, `self.qf1`): its parameter labels, less
    those written relative to another object's `self` (`self.disc.optimizer`, built as `Adam(self.parameters())` in
    that object's class, names its own `self`, not this scope's)."""
    prov = step.receiver_prov
    if prov is None or prov.kind is not Kind.OPTIMIZER or not prov.params:
        return []
    receiver = step.node.args[0] if step.method == "step" and step.node.args and _scaler(step.receiver) else step.receiver
    if type(step) is ThroughEvent and not any(receiver is arg for arg in (*step.through.args, *(kw.value for kw in step.through.keywords))):
        receiver = None  # the body's own expression, maybe in another module's text: no name of this scope
    text = model.text(receiver) if isinstance(receiver, (ast.Name, ast.Attribute)) else ""
    own = text.count(".") <= 1  # (`opt`, `self.opt`: built in this scope or by this class)
    owners = [param[:-2] if param.endswith(".*") else param for param in prov.params]
    owners = [owner[: -len(".parameters()")] if owner.endswith(".parameters()") else owner for owner in owners]
    return [owner for owner in owners if own or not (owner == "self" or owner.startswith("self."))]
