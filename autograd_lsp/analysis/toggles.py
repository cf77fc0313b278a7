"""What a module does to `requires_grad` (AG014's toggles; AG001 asks whether a freeze switched a parameter off): each
change, direct (`p.requires_grad = False`, `p.requires_grad_(flag)`) or through a helper it calls
(`set_requires_grad(D, False)`), with what it changes, named as the calling scope names it."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from . import torch_api as api
from .model import AttrStoreEvent, CallEvent, Event, ModuleModel
from .provenance import Kind
from .syntax import dotted, parents


@dataclass
class Toggle:
    event: Event  # the AttrStoreEvent / requires_grad_ call / call of a helper that toggles
    value: bool | None  # True: unfreeze, False: freeze, None: computed
    targets: set  # texts of what it changes: `backbone`, `model.head`, `w`
    text: str  # the toggling code, for messages
    inner: ast.AST | None = None  # a helper's call: the statement of its body (in this module) that toggles


def requires_grad_changes(model: ModuleModel) -> list[Toggle]:
    """Every change of `requires_grad` the module makes (directly, or through a helper it calls), once per model: AG001
    asks too (a parameter a freeze may have switched off is no known leaf that requires grad)."""
    found = model.__dict__.get("_requires_grad_changes")
    if found is None:
        found = model.__dict__["_requires_grad_changes"] = list(all_changes(model))
    return found


def switched_off(model: ModuleModel, names: set, event: Event) -> bool:
    """A change that may set `requires_grad` off for the parameters known by `names` (a freeze, or a computed flag)
    surely runs before `event`: earlier in its scope, under no `if` or loop that `event` does not share (but a loop
    over the parameters themselves). A freeze under `if freeze:` leaves the other path's leaf requiring grad."""
    return any(toggle.value is not True and matches(toggle.targets, names) and _surely_before(model, toggle.event, event)
               for toggle in requires_grad_changes(model))


def switched_on(model: ModuleModel, toggle: Toggle, event: Event) -> bool:
    """Another change that turns `requires_grad` on for the toggle's targets surely runs before `event` (in its scope),
    and no change that may turn it off follows it there: `self.unfreeze()` before the loop's forward."""
    changes = [t for t in requires_grad_changes(model) if t is not toggle and t.event.ctx.scope is event.ctx.scope
               and t.event.seq < event.seq and matches(t.targets, toggle.targets)]
    return any(on.value is True and _surely_before(model, on.event, event)
               and not any(off.value is not True and off.event.seq > on.event.seq for off in changes) for on in changes)


def _surely_before(model: ModuleModel, first: Event, later: Event) -> bool:
    if first.seq >= later.seq or first.ctx.scope is not later.ctx.scope or first.ctx.via is not None or later.ctx.via is not None:
        return False
    scope = first.ctx.scope
    parent_of = parents(model, scope.node if scope.function is not None else model.tree)
    around_later = set()
    node = later.node
    while node is not None:
        around_later.add(id(node))
        node = parent_of.get(id(node))
    return _unconditional(parent_of, first.ctx.statement, around_later)


def surely_runs(model: ModuleModel, event: Event) -> bool:
    """`event` runs whenever its function does: under no `if` or loop there (but a loop over module parameters)."""
    scope = event.ctx.scope
    if scope.function is None:
        return False
    return _unconditional(parents(model, scope.node), event.ctx.statement, {id(scope.node)})


def _unconditional(parent_of: dict, node, stop: set) -> bool:
    while node is not None and id(node) not in stop:
        if isinstance(node, (ast.If, ast.While, ast.Try, ast.Match, ast.IfExp)) or isinstance(node, (ast.For, ast.AsyncFor)) \
                and not (isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Attribute)
                         and node.iter.func.attr in api.MODULE_ITERATORS):
            return False
        node = parent_of.get(id(node))
    return node is not None


def all_changes(model: ModuleModel):
    direct: dict[int, list[Toggle]] = {}
    for event in model.events:
        toggle = None
        if isinstance(event, AttrStoreEvent) and event.target.attr == "requires_grad":
            toggle = Toggle(event, literal_bool(event.value), targets_of(model, event.target.value, event), model.text(event.node))
        elif isinstance(event, CallEvent) and event.role == "requires_grad_" and event.receiver is not None:
            call = event.node
            value = call.args[0] if call.args else (event.keyword("requires_grad").value if event.keyword("requires_grad") else None)
            toggle = Toggle(event, True if value is None else literal_bool(value), targets_of(model, event.receiver, event), model.text(call))
        if toggle is not None and toggle.targets:
            yield toggle
            function = event.ctx.scope.function
            if function is not None:
                direct.setdefault(id(function), []).append(toggle)
    # helpers that toggle: `set_requires_grad(backbone, True)`, `self.unfreeze()`; one of another module by its body
    walker = model.__dict__.get("_walker")
    for event in model.of_type(CallEvent):
        if event.function is None:
            continue
        inner = direct.get(id(event.function))
        statement = None
        if inner:
            statement = inner[0].event.ctx.statement if inner[0].event.ctx.via is None else None
            inner = [(toggle.targets, toggle.value) for toggle in inner]
        elif event.function.owner is not walker or walker is None:
            inner = _body_toggles(event.function)  # (a function of this module that toggles has its events in `direct`)
        if not inner:
            continue
        targets = set()
        for toggled, _ in inner:
            targets |= _at_call_site(model, event, toggled)
        values = {value for _, value in inner}
        value = values.pop() if len(values) == 1 else None
        if value is None and event.node.args:
            literal = [literal_bool(arg) for arg in [*event.node.args, *(kw.value for kw in event.node.keywords)] if literal_bool(arg) is not None]
            value = literal[0] if len(literal) == 1 else None
        if targets:
            yield Toggle(event, value, targets, model.text(event.node), statement)


def _body_toggles(function) -> list:
    """(targets, value) of each `requires_grad` change written in a function's own body, in its own names (`module` for
    `for p in module.parameters(): p.requires_grad = flag`): the summary of a helper defined in another module, whose
    events this module's walk does not hold. Memoised on the function."""
    cached = function.__dict__.get("_body_toggles")
    if cached is not None:
        return cached
    found = []
    owner = getattr(function.owner, "model", None)
    if owner is not None and "requires_grad" not in owner.source.text:
        # (both forms below spell `requires_grad`: a module that never does changes no flag; most helpers called
        # from a large package's files are in such modules, and visiting their bodies was most of this rule's time)
        function.__dict__["_body_toggles"] = found
        return found

    _visit_toggles(function.node, [], found)
    function.__dict__["_body_toggles"] = found
    return found


def _visit_toggles(node, loops: list, found: list) -> None:
    """_body_toggles' visit (a module function: a nested one calling itself is a reference cycle that outlives the call)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue  # a nested definition runs only if called
        receiver = value = None
        if isinstance(child, ast.Assign) and len(child.targets) == 1 and isinstance(child.targets[0], ast.Attribute) \
                and child.targets[0].attr == "requires_grad":
            receiver, value = child.targets[0].value, literal_bool(child.value)
        elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "requires_grad_":
            receiver = child.func.value
            argument = child.args[0] if child.args else next((kw.value for kw in child.keywords if kw.arg == "requires_grad"), None)
            value = True if argument is None else literal_bool(argument)
        if receiver is not None:
            targets = _loop_owners(receiver, loops)
            if targets:
                found.append((targets, value))
        _visit_toggles(child, loops + [child] if isinstance(child, (ast.For, ast.AsyncFor)) else loops, found)


def _loop_owners(receiver: ast.expr, loops: list) -> set:
    """The modules whose parameters a loop variable runs over, or the receiver itself (as targets_of, over the AST)."""
    if isinstance(receiver, ast.Name):
        for node in reversed(loops):
            if _binds(node.target, receiver.id):
                return _iterated_owners(node)
    name = dotted(receiver)
    return {name} if name else set()


def _iterated_owners(loop: ast.For | ast.AsyncFor) -> set:
    """The modules whose parameters (`m.parameters()`, `m.named_parameters()`...) a for loop runs over."""
    owners = {dotted(sub.func.value) for sub in ast.walk(loop.iter) if isinstance(sub, ast.Call) and
              isinstance(sub.func, ast.Attribute) and sub.func.attr in api.MODULE_ITERATORS}
    owners.discard(None)
    return owners


def literal_bool(node) -> bool | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None


def targets_of(model: ModuleModel, receiver: ast.expr, event: Event) -> set:
    """What a toggle changes: the module whose parameters a loop variable runs over, or the expression itself."""
    if isinstance(receiver, ast.Name):
        for loop in event.ctx.loops():
            node = loop.node
            if isinstance(node, (ast.For, ast.AsyncFor)) and _binds(node.target, receiver.id):
                owners = _iterated_owners(node)
                if owners or not _plain_element(event):
                    return owners
                break  # a row or chunk of a plain tensor (`for xb in data.split(64)`): the name itself
    name = dotted(receiver)
    return {name} if name else set()


def _plain_element(event: Event) -> bool:
    prov = event.prov if isinstance(event, AttrStoreEvent) else getattr(event, "receiver_prov", None)
    return prov is not None and prov.kind is Kind.TENSOR and prov.origin == "element" and prov.requires_grad is False


def _binds(target: ast.expr, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    return isinstance(target, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == name for e in target.elts)


def _at_call_site(model: ModuleModel, call: CallEvent, targets: set) -> set:
    """A helper's targets in the caller's terms: its parameters become the arguments passed, `self.x` stays."""
    function = call.function
    args = function.node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args]]
    offset = 1 if function.cls is not None and names and names[0] == "self" else 0
    found = set()
    for target in targets:
        head, _, rest = target.partition(".")
        if head == "self" and offset:  # a method's own module: the caller's receiver (`self`, or `model` of that class)
            if isinstance(call.receiver, ast.Name) and call.receiver.id == "self":
                found.add(target)
            elif _instance_of(call, function.cls):
                found.add(dotted(call.receiver) + target[len("self"):])
        elif head in names:
            index = names.index(head) - offset
            keyword = next((kw for kw in call.node.keywords if kw.arg == head), None)
            argument = keyword.value if keyword is not None else (call.node.args[index] if 0 <= index < len(call.node.args) else None)
            text = dotted(argument) if argument is not None else None
            if text:
                found.add(f"{text}.{rest}" if rest else text)
        elif head == "self" and isinstance(call.receiver, ast.Name) and call.receiver.id == "self":
            found.add(target)
    return found


def _instance_of(call: CallEvent, cls) -> bool:
    """`model.unfreeze()` where `model` is known to hold an instance of the method's class."""
    prov = call.receiver_prov
    return dotted(call.receiver) is not None and prov is not None and prov.kind is Kind.MODULE and prov.module_class is cls


def in_class_terms(toggle: Toggle) -> set:
    """A toggle's targets on an instance (`model.backbone`, via `model.unfreeze()`) in its class's terms
    (`self.backbone`), to match what that class's own methods freeze."""
    event = toggle.event
    if not isinstance(event, CallEvent) or event.function is None or event.function.cls is None or not _instance_of(event, event.function.cls):
        return set()
    receiver = dotted(event.receiver)
    return {"self" + t[len(receiver):] for t in toggle.targets if t == receiver or t.startswith(receiver + ".")}


def matches(targets: set, others: set) -> bool:
    return any(a == b or b.startswith(a + ".") or a.startswith(b + ".") for a in targets for b in others)
