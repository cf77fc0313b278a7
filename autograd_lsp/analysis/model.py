"""The analysis result rules query: events in execution order, each with its context and provenance.

One walk (walker.py) fills a ModuleModel; rules never re-walk the tree, they filter events and ask
`model.prov(node)` for the provenance of any expression the walk evaluated.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator, TypeVar

from ..findings import Finding, Fix, Related, Span
from ..source import Source
from . import syntax
from .imports import ImportTable
from .provenance import Provenance


class _Open:
    """A base without slots: instances of a slotted dataclass derived from it keep a __dict__ too, for the facts that
    walks and rules add to them (`info.walk_from`, `cls._body_names`)."""


# The walk reads scopes, loops, functions and classes millions of times per run: their fields are slots (an instance
# dict past CPython's shared-key limit, as a FunctionInfo's is with the facts added to it, is read by the slower lookup).
@dataclass(eq=False, slots=True)
class Scope(_Open):
    node: ast.AST  # Module, FunctionDef, Lambda
    name: str
    parent: "Scope | None"
    bindings: dict = field(default_factory=dict)  # name -> Provenance (None: bound but unknown)
    defs: dict = field(default_factory=dict)  # name -> FunctionInfo | ClassInfo defined in this scope
    function: "FunctionInfo | None" = None
    branch: object | None = None  # a token of the undecided branch being walked (None: none)
    stored: dict | None = None  # `self.<attr>` -> the branch token of its last store in this walk (__init__)


@dataclass(eq=False, slots=True)
class Loop(_Open):
    node: ast.For | ast.While | ast.AsyncFor
    scope: Scope
    parent: "Loop | None"
    assigned: set = field(default_factory=set)  # names (and `self.x` labels) rebound anywhere in the body
    backwards: list = field(default_factory=list)  # CallEvents, nested loops and called functions included
    steps: list = field(default_factory=list)
    zero_grads: list = field(default_factory=list)
    forwards: list = field(default_factory=list)  # module calls (model(x))
    calls_backward_indirectly: bool = False
    calls_step_indirectly: bool = False
    zero_grad_indirectly: bool = False

    @property
    def is_training(self) -> bool:
        return bool(self.backwards or self.steps or self.calls_backward_indirectly or self.calls_step_indirectly)

    @property
    def has_step(self) -> bool:
        return bool(self.steps or self.calls_step_indirectly)

    def contains(self, other: "Loop | None") -> bool:
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False


@dataclass(eq=False, slots=True)
class Context:
    scope: Scope
    loop: Loop | None  # innermost enclosing loop in this scope
    no_grad: bool | None  # None: a function body whose grad mode is its callers' (see ModuleModel.grad_enabled)
    epoch: int  # optimizer steps seen before this point in the scope
    statement: ast.stmt
    via: "Context | None" = None  # in a body walked for one call site (walker.call_in_context): that call's context

    def loops(self) -> Iterator[Loop]:
        loop = self.loop
        while loop is not None:
            yield loop
            loop = loop.parent


@dataclass(eq=False, slots=True)
class Event:
    node: ast.AST
    ctx: Context
    seq: int = 0  # order of execution within the walk


@dataclass(eq=False, slots=True)
class CallEvent(Event):
    qualname: str | None = None  # torch.nn.functional.conv2d, or None for methods/unknown
    method: str | None = None  # for x.m(...): "m"
    receiver: ast.expr | None = None
    receiver_prov: Provenance | None = None
    role: str | None = None  # "backward" | "step" | "zero_grad" | "forward" | "requires_grad_" | None
    result: Provenance | None = None
    function: "FunctionInfo | None" = None  # a same-workspace function that was called
    runs: "FunctionInfo | None" = None  # `model(x)` of a user nn.Module: the forward() it runs (not a direct call)
    certain: bool = True  # (in a body walked for one call site) it runs whenever that body runs
    value: Provenance | None = None  # a `backward` of another object (`accelerator.backward(loss)`): what it backpropagates

    def keyword(self, name: str) -> ast.keyword | None:
        return next((kw for kw in self.node.keywords if kw.arg == name), None)


@dataclass(eq=False, slots=True)
class ThroughEvent(Event):
    """A `backward()` or optimizer step that a function of the workspace runs when this call runs it, on what the call
    gives it or gets back (`self.backward(gen_loss, dis_loss)` whose body backpropagates both and steps between;
    `criterion.update(batch, optimizer)` that backpropagates the loss it makes): that call's own backward or step, in
    the order the body runs them. `node` is where the body does it (its `.backward()`, or the call there that does);
    `ctx` is this call's. Not a CallEvent: only rules that ask for them (`model.calls(..., through=True)`) see them."""

    role: str = ""  # "backward" | "step"
    method: str | None = None
    receiver: ast.expr | None = None  # the caller's argument that is backpropagated, else the body's expression
    receiver_prov: Provenance | None = None  # the value as this call sees it
    through: ast.Call = None  # the call, in this scope, that runs it
    inner: Event = None  # what the walk of the body saw: a CallEvent, or a ThroughEvent of a call in that body
    certain: bool = True  # it runs whenever the call runs (no branch of the body that may be skipped leads to it)
    qualname = None
    function = None
    runs = None
    result = None

    @property
    def direct(self) -> CallEvent:
        """The `.backward()` / `.step()` call it comes down to."""
        event = self.inner
        while type(event) is ThroughEvent:
            event = event.inner
        return event

    def keyword(self, name: str) -> ast.keyword | None:
        return self.direct.keyword(name)


@dataclass(eq=False, slots=True)
class InplaceEvent(Event):
    target: ast.expr = None  # the tensor expression modified (x in `x += 1`, `x[0] = 1`, `x.add_(1)`)
    prov: Provenance | None = None
    op: str = ""  # "+=", "[...] =", "add_"
    form: str = ""  # "augassign" | "setitem" | "method"
    layer: ast.Call | None = None  # a module's in-place layer making the change: its construction (`nn.ReLU(inplace=True)`)
    reshape: bool = False  # `x.unsqueeze_(0)`, `x.t_()`: only the shape changes (no value written; the version counter moves)


@dataclass(eq=False, slots=True)
class BindEvent(Event):
    name: str = ""  # a plain name or a `self.x` label
    target: ast.expr = None
    value: ast.expr | None = None
    prov: Provenance | None = None
    alias_of: str | None = None  # `b = a`: "a"


@dataclass(eq=False, slots=True)
class ItemStoreEvent(Event):
    """`history[step] = loss`: a value stored into an item of a container not known to be a tensor (a dict, a list)."""

    target: ast.Subscript = None
    value: ast.expr | None = None
    prov: Provenance | None = None  # what is stored


@dataclass(eq=False, slots=True)
class UseEvent(Event):
    name: str = ""
    prov: Provenance | None = None
    usage: str = ""  # "arg" | "operand" | "receiver" | "other"
    callee: str | None = None  # for usage arg/receiver: the called function or method name


@dataclass(eq=False, slots=True)
class AttrLoadEvent(Event):
    """`x.data`, `x.grad`, `x.requires_grad`, misspelled grad attributes: any attribute read naming grad or data."""

    attr: str = ""
    receiver: ast.expr = None
    prov: Provenance | None = None  # what the receiver held


@dataclass(eq=False, slots=True)
class AttrStoreEvent(Event):
    target: ast.Attribute = None  # x.requires_grad = ..., x.data = ...
    prov: Provenance | None = None  # what x held
    value: ast.expr = None


@dataclass(eq=False, slots=True)
class FunctionInfo(_Open):
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    name: str
    scope: Scope | None = None
    cls: "ClassInfo | None" = None
    returns: Provenance | None = None
    returned_any: bool = False
    calls_backward: bool = False
    calls_step: bool = False
    calls_zero_grad: bool = False
    walked: bool = False
    walking: bool = False
    owner: object = field(default=None, repr=False)  # the Walker of the defining module (walks it when first needed)
    # its body changes an argument in place or its requires_grad, stores one on `self`, or hands one to a function
    # that does: only then is it walked again with what a call passes (walker.call_in_context)
    uses_arguments: bool = False
    context_of: "FunctionInfo | None" = None  # a walk of this function's body for one call site: the function itself


@dataclass(eq=False, slots=True)
class ClassInfo(_Open):
    node: ast.ClassDef
    name: str
    is_module: bool
    methods: dict = field(default_factory=dict)  # name -> FunctionInfo
    attributes: dict = field(default_factory=dict)  # attribute name -> Provenance (set in __init__)
    attribute_nodes: dict = field(default_factory=dict)  # attribute name -> the Assign in __init__
    constructed: dict = field(default_factory=dict)  # set in __init__ walked with a constructor call's arguments (merged over calls)
    late: dict = field(default_factory=dict)  # set by other methods (`setup()`, `configure()`), merged over them
    setters: dict | None = None  # attribute name -> methods other than __init__ that assign `self.<name>` (found when needed)
    bases: list = field(default_factory=list)  # its bases that are classes of this module (what it inherits is theirs)
    torch_layer: str | None = None  # its torch.nn layer base (`nn.Linear`: the short name), whose parameters it inherits

    instances: dict = field(default_factory=dict)  # id of a constructor call -> what its __init__ set (one instance's state)

    def attribute(self, name: str, instance: "Provenance | None" = None, constructed: bool = True):
        """What `self.<name>` holds as far as this module shows: __init__ as constructed here (for this instance, else
        merged over the constructions), else __init__, else the other methods that set it. None: unknown. Without
        `constructed` (the attribute is stored again after construction), not what a construction gave it."""
        table = self.instances.get(id(instance.node)) if instance is not None and instance.node is not None else None
        # (an instance whose construction was not walked, where others were: theirs are no facts of it)
        merged = self.constructed if table is not None or instance is None or instance.node is None or not self.instances else {}
        if not constructed:
            table, merged = None, {}
        for table in (table or {}, merged, self.attributes):
            found = table.get(name)
            if found is not None:
                return found  # (`self.opt = None` in __init__, set for real in `setup()`: the later value)
        return self.late.get(name)

    def known_attributes(self) -> dict:
        return {name: self.attribute(name) for name in {**self.attributes, **self.constructed}}


def state_of(record) -> dict:
    """Everything a slotted record (FunctionInfo, ClassInfo) holds: its fields and the facts added to its __dict__."""
    return {**{name: getattr(record, name) for name in type(record).__slots__}, **record.__dict__}


def restore_state(record, state: dict) -> None:
    """Put back what state_of() took: fields in their slots, the rest as the record's only added facts."""
    slots = type(record).__slots__
    record.__dict__.clear()
    for name, value in state.items():
        if name in slots:
            setattr(record, name, value)
        else:
            record.__dict__[name] = value


E = TypeVar("E", bound=Event)

# Caches on a model made from its walk alone (events, loops, functions, the tree), never from the text: an edit that
# leaves the tree and the walk as they were (a comment, trailing spaces) keeps them (ModuleModel.rebase). ~5 ms of the
# ~20 ms of such an edit of a 2,000-line module.
WALK_CACHES = frozenset({
    "_index", "_callers_index", "_mentions", "_attribute_facts",  # (here)
    "_training_units", "_switched_off",  # analysis/training.py
    "_loss_sites",  # rules/loss_sites.py
})


class ModuleModel:
    """Everything one walk learned about a module."""

    # What the walk and the rules read most, in slots (with the caches rules add, the instance dict was past CPython's
    # shared-key limit); those caches, and what release() and rebase() drop, stay in the __dict__.
    __slots__ = ("tree", "source", "imports", "events", "loops", "functions", "classes", "torch_subscripts", "_provs",
                 "call_site_backwards", "forward_graphs", "backward_handovers", "_keep_alive", "_ascii", "__dict__", "__weakref__")

    def __init__(self, tree: ast.Module, source: Source, imports: ImportTable):
        self.tree = tree
        self.source = source
        self.imports = imports
        self.events: list[Event] = []
        self.loops: list[Loop] = []
        self.functions: dict[ast.AST, FunctionInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.torch_subscripts: list[tuple[ast.Subscript, str]] = []  # `torch.tensor[...]`: a factory subscripted
        self._provs: dict[int, Provenance | None] = {}
        # `.backward()` calls in a helper whose receiver, walked with what one call site passes, has several elements
        # (id of the call -> that provenance): the symbolic walk cannot know it (AG005)
        self.call_site_backwards: dict[int, Provenance] = {}
        # a user module's call (its id) -> the graph its forward, walked with what that call passes, returned: the ops
        # inside it that a loss of the call's output runs the backward of (AG006)
        self.forward_graphs: dict[int, frozenset] = {}
        # a statement calling a helper whose body backpropagates the parameter it is given (`strategy.backward(loss)`),
        # walked with a loss known to have several elements: id -> (statement, that loss, the helper's backward) (AG005)
        self.backward_handovers: dict[int, tuple] = {}
        self._keep_alive: list[ast.AST] = []
        self._ascii = [line.isascii() for line in source.lines] if not source.text.isascii() else None

    # -- queries ---------------------------------------------------------------------------------------
    def of_type(self, kind: type[E]) -> Iterator[E]:
        return iter(self._by_type(kind))

    def calls(self, role: str | None = None, method: str | None = None, through: bool = False) -> Iterator[CallEvent]:
        """Call events (of a role, of a method); `through`: with the backward and step calls that calls of workspace
        functions run (ThroughEvent), in execution order."""
        events = self._by_type((CallEvent, ThroughEvent)) if through else self._by_type(CallEvent)
        for event in events:
            if (role is None or event.role == role) and (method is None or event.method == method):
                yield event

    def calls_by_node(self) -> dict:
        """id of a call node -> its call event in this module's walk (indexed once, with the events)."""
        index = self.__dict__.get("_call_index")
        if index is None or index[0] != len(self.events):
            index = self._call_index = (len(self.events), {id(event.node): event for event in self._by_type(CallEvent)})
        return index[1]

    def _by_type(self, kind: type) -> list:
        # Eighteen rules each filter the events by kind, several times: index them once, in execution order, all
        # kinds in one pass (a pass per kind asked was ~15% of the rules' time).
        index = self.__dict__.get("_index")
        if index is None or index[0] != len(self.events):
            exact: dict = {}
            for event in self.events:
                same = exact.get(type(event))
                if same is None:
                    exact[type(event)] = [event]
                else:
                    same.append(event)
            index = self._index = (len(self.events), exact, {})
        found = index[2].get(kind)
        if found is None:
            classes = [cls for cls in index[1] if issubclass(cls, kind)]  # (a tuple of kinds: events of any of them)
            if len(classes) > 1:  # (events of several classes: their execution order is the events' own)
                found = [event for event in self.events if isinstance(event, kind)]
            else:
                found = index[1][classes[0]] if classes else []
            index[2][kind] = found
        return found

    def grad_enabled(self, ctx: Context, depth: int = 0) -> bool | None:
        """Whether autograd records at a point: True/False when known, None when it depends on callers this module
        does not show. A function body takes its grad mode from the call it was walked for, else from its visible
        callers: enabled if one of them runs with grad, disabled if all run without, unknown with no caller."""
        if ctx.no_grad is not None:
            return not ctx.no_grad
        if depth > 4:
            return None
        if ctx.via is not None:
            return self.grad_enabled(ctx.via, depth + 1)
        function = ctx.scope.function
        if function is None:
            return True
        function = function.context_of or function
        callers = self._callers().get(id(function), ())
        modes = [self.grad_enabled(call.ctx, depth + 1) for call in callers if call.ctx.scope.function is not function]
        if True in modes:
            return True
        return False if modes and all(mode is False for mode in modes) else None

    def callers(self, function: "FunctionInfo") -> list:
        """The calls of this module that run `function` (called directly, or `model(x)` running its forward)."""
        return self._callers().get(id(function), [])

    def _callers(self) -> dict:
        index = self.__dict__.get("_callers_index")
        if index is None or index[0] != len(self.events):
            table: dict = {}
            for event in self._by_type(CallEvent):
                callee = event.function or event.runs
                if callee is not None:
                    table.setdefault(id(callee), []).append(event)
            index = self._callers_index = (len(self.events), table)
        return index[1]

    def release(self) -> None:
        """Break the reference cycles a walk leaves (scopes <-> functions, loops <-> events <-> contexts, the walker)
        so that reference counting frees the model at once instead of a full garbage collection much later.
        Summaries already computed stay readable; functions not yet walked stay unknown."""
        scopes = []
        for info in self.functions.values():
            if info.scope is not None:
                scopes.append(info.scope)
            info.owner = None
            info.scope = None
            for key in ("defining_scope", "walk_from", "walk_stmt", "walk_module"):  # (the last two: analysis/rewalk.py)
                info.__dict__.pop(key, None)
        for scope in scopes:
            scope.bindings.clear()
            scope.defs.clear()
            scope.parent = None
            scope.function = None
        walker = self.__dict__.get("_walker")
        for loop in [*self.loops, *(walker.unlisted_loops if walker is not None else ())]:
            loop.scope = loop.parent = None
            loop.backwards.clear(), loop.steps.clear(), loop.zero_grads.clear(), loop.forwards.clear()
        classes = {id(cls): cls for cls in [*self.classes.values(), *(info.cls for info in self.functions.values() if info.cls)]}
        for cls in classes.values():  # (two classes of one name: model.classes holds the first only)
            cls.methods = {}  # (each method keeps its `cls`: a summary read later still knows it is a method)
            cls.attributes.clear()
            cls.attribute_nodes.clear()
            cls.constructed.clear()
            cls.instances.clear()
            cls.late.clear()
            cls.setters = None
        walker = self.__dict__.pop("_walker", None)
        if walker is not None:
            for shadow in walker.shadows:  # bodies walked for one call site: their scopes and functions point at each other
                if shadow.scope is not None:
                    shadow.scope.bindings.clear()
                    shadow.scope.defs.clear()
                    shadow.scope.parent = shadow.scope.function = None
                shadow.scope = shadow.owner = None
                shadow.__dict__.pop("instance", None)
                shadow.__dict__.pop("called_from", None)
            walker.shadows.clear()
            walker.unlisted_loops.clear()
            walker.memo.clear()
            walker.memo_seen.clear()
            walker.summary_reads.clear()
            walker.function_aliases.clear()
            walker.via = walker.overlay = walker.escaped = walker._last_ctx = None
            walker.module_scope.bindings.clear()
            walker.module_scope.defs.clear()
            walker.scope = walker.module_scope = walker.function = walker.loop = walker.model = None
        self.events = []
        self.loops = []
        self._provs = {}
        self.call_site_backwards = {}
        self.forward_graphs = {}
        self.backward_handovers = {}
        self.__dict__.pop("_index", None)
        self.__dict__.pop("_callers_index", None)

    def mark_walked(self) -> None:
        """The walk is done: what the model holds now is the walk's; rules may add caches after this."""
        self._walked = frozenset(self.__dict__) | {"_walked"}

    def rebase(self, source: Source, walk_kept: bool = False) -> None:
        """The same tree under a new text (an edit that changed no node): the walk stands, the rules' caches and
        what derives from the text are made again. `walk_kept`: the events are the very ones the caches were made
        from (no function was walked again), so the caches of WALK_CACHES stay."""
        walked = self.__dict__.get("_walked", self.__dict__)
        kept = WALK_CACHES if walk_kept else ()
        for key in [key for key in self.__dict__ if key not in walked and key not in kept]:
            del self.__dict__[key]
        self.source = source
        self._ascii = [line.isascii() for line in source.lines] if not source.text.isascii() else None

    def output_marks(self) -> dict:
        """id of a call whose outputs an assignment unpacks (`a, v = policy(s)`) -> the ids of those targets, which the
        walk adds to the graph of the output each one takes (walker._output_marked). One pass over the tree, on first use."""
        found = self.__dict__.get("_output_marks")
        if found is None:
            found = self.__dict__["_output_marks"] = {}
            for node in ast.walk(self.tree):
                if type(node) is ast.Assign and type(node.value) is ast.Call:
                    for target in node.targets:
                        if type(target) in (ast.Tuple, ast.List) and len(target.elts) > 1 \
                                and not any(type(element) is ast.Starred for element in target.elts):
                            found[id(node.value)] = found.get(id(node.value), frozenset()) | {id(element) for element in target.elts}
        return found

    def passed_by_calls(self) -> dict:
        """Per called name (`Foo(...)`, `x.Foo(...)`, `super().__init__(...)`): the keyword names its calls pass (None
        among them: a `**options` that is not a function's own `**kwargs` passed on) and the most positional arguments
        (a `*args` counts as many). One pass over the tree, on first use."""
        found = self.__dict__.get("_passed_by_calls")
        if found is None:
            found, spread, forwarded = {}, [], set()
            for node in syntax.nodes(self.tree):  # (any order: sets and maxima)
                if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) and node.args.kwarg is not None:
                    forwarded.add(node.args.kwarg.arg)
                if type(node) is ast.Call:
                    func = node.func
                    name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
                    if name is None:
                        continue
                    keywords, most = found.get(name, (set(), 0))
                    keywords.update(kw.arg for kw in node.keywords if kw.arg is not None)
                    spread.extend((keywords, kw.value) for kw in node.keywords if kw.arg is None)
                    count = 1 << 30 if any(type(arg) is ast.Starred for arg in node.args) else len(node.args)
                    found[name] = (keywords, max(most, count))
            for keywords, value in spread:
                if not (type(value) is ast.Name and value.id in forwarded):
                    keywords.add(None)
            self.__dict__["_passed_by_calls"] = found
        return found

    def mentions(self, name: str) -> int:
        """How often `name` is written as a bare name in the code (not after a dot): definitions, uses, parameters,
        keywords, imports and words of string constants (a callback named in a string; not docstrings without doctests). Comments do not count, so
        this is a fact of the tree, true still when an edit changes only trivia. All names in one pass, on first use."""
        counts = self.__dict__.get("_mentions")
        if counts is None:
            counts = self.__dict__["_mentions"] = Counter(_bare_names(self.tree))
        return counts[name]

    def attribute_mentions(self, name: str) -> int:
        """How often `name` is written after a dot (`T.name`, `self.name`)."""
        return self.attribute_facts()[0][name]

    def attribute_stores(self, name: str) -> int:
        """How often `.name` is assigned (`self.name = ...`, `m.name += ...`)."""
        return self.attribute_facts()[1][name]

    def attribute_facts(self) -> tuple:
        """What is written after a dot, in one pass over the tree on first use (a pass costs about as much as the
        parse: every question of this kind shares it): (mentions and stores by attribute name; the attributes
        stored on each bare name; the methods called on each bare name; the names `name = call(...)` binds, by the
        call's id). Kept with the tree it was made from (the server's walk again of one function changes the tree)."""
        found = self.__dict__.get("_attribute_facts")
        if found is not None and found[0] is self.tree:
            return found[1]
        mentions, stores, stored_on, called_on, bound = Counter(), Counter(), {}, {}, {}
        Attribute, Name, Load, Call, Assign, Constant, AST = ast.Attribute, ast.Name, ast.Load, ast.Call, ast.Assign, ast.Constant, ast.AST
        child_fields = syntax.child_fields
        stack = [self.tree]
        pop, push, push_all = stack.pop, stack.append, stack.extend
        while stack:
            node = pop()
            kind = type(node)
            if kind is Name or kind is Constant:
                continue
            if kind is Attribute:
                attr = node.attr
                mentions[attr] += 1
                if type(node.ctx) is not Load:
                    stores[attr] += 1
                    if type(node.value) is Name:
                        stored_on.setdefault(node.value.id, set()).add(attr)
            elif kind is Call:
                func = node.func
                if type(func) is Attribute and type(func.value) is Name:
                    called_on.setdefault(func.value.id, set()).add(func.attr)
            elif kind is Assign and type(node.value) is Call:
                bound.setdefault(id(node.value), set()).update(t.id for t in node.targets if type(t) is Name)
            for field in child_fields(kind):
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, AST):
                            push(item)
                elif isinstance(value, AST):
                    push(value)
        facts = (mentions, stores, stored_on, called_on, bound)
        self.__dict__["_attribute_facts"] = (self.tree, facts)
        return facts

    def shared_graph(self, a: frozenset, b: frozenset) -> frozenset:
        """The ids of the autograd nodes two graphs truly share. A helper's own nodes are in the graph of what every call
        of it returns (one AST node for all of them), each call's own id beside them: such a node is shared only where a
        call of its helper that both graphs hold is shared itself (two calls of one loss helper, for two batches, build
        two graphs). A node of a helper that a graph holds through no call (the helper's own body) stays shared."""
        common = a & b
        if not common:
            return common
        owners, calls = self._graph_owners()
        callees = self.__dict__.get("_graph_callees")
        if callees is None:
            callees = self.__dict__["_graph_callees"] = {ident: function for function, ids in calls.items() for ident in ids}
        memo: dict = {}
        return frozenset(ident for ident in common if _truly_shared(ident, a, b, owners, calls, callees, memo))

    def _graph_owners(self) -> tuple[dict, dict]:
        """(id of a node inside a def -> the innermost def's node, a def's node -> the ids of the calls of it)."""
        found = self.__dict__.get("_graph_owners_index")
        if found is None:
            owners: dict = {}
            seen: set = set()

            def own(stack):
                while stack:
                    node, function = stack.pop()
                    seen.add(id(node))
                    if function is not None:
                        owners[id(node)] = function
                    inner = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else function
                    stack.extend((child, inner) for child in ast.iter_child_nodes(node))

            own([(child, None) for child in ast.iter_child_nodes(self.tree)])
            calls: dict = {}
            for event in self.calls():
                info = event.function
                if info is not None and info.node is not None:
                    calls.setdefault(info.node, set()).add(id(event.node))
            # a helper of another module that a call here walked: its body's nodes are its own as well (made by each call)
            for node in list(calls):
                if id(node) not in seen and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    seen.add(id(node))
                    own([(child, node) for child in ast.iter_child_nodes(node)])
            found = self.__dict__["_graph_owners_index"] = (owners, {node: frozenset(ids) for node, ids in calls.items()})
        return found

    def prov(self, node: ast.AST) -> Provenance | None:
        return self._provs.get(id(node))

    def record(self, node: ast.AST, prov: Provenance | None) -> Provenance | None:
        self._provs[id(node)] = prov
        return prov

    def text(self, node: ast.AST) -> str:
        """The source text of a node (exactly as written)."""
        # ast.get_source_segment splits the whole file on every call; the source's cached lines make this O(node).
        line, end_line = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        lines = self.source.lines
        if None in (line, end_line, col, end_col) or not 0 < line <= end_line <= len(lines):
            segment = ast.get_source_segment(self.source.text, node)
            return segment if segment is not None else ast.unparse(node)
        if line == end_line:
            return lines[line - 1].encode("utf-8")[col:end_col].decode("utf-8", "replace")
        first = lines[line - 1].encode("utf-8")[col:].decode("utf-8", "replace")
        last = lines[end_line - 1].encode("utf-8")[:end_col].decode("utf-8", "replace")
        return "\n".join([first, *lines[line:end_line - 1], last])

    def describe(self, prov: Provenance) -> str:
        """Where a value came from, for messages: "`torch.arange(1, 5)` at line 3"."""
        node = prov.node
        if node is not None and hasattr(node, "lineno"):
            text = " ".join(self.text(node).split())
            if len(text) > 40:
                text = text[:37] + "..."
            return f"`{text}` at line {node.lineno}"
        return f"{prov.origin} at line {prov.line}" if prov.line else prov.origin

    # -- positions -------------------------------------------------------------------------------------
    def char_col(self, line: int, byte_col: int) -> int:
        """ast columns are UTF-8 byte offsets; findings use character columns."""
        if self._ascii is None or byte_col <= 0 or not 0 < line <= len(self._ascii) or self._ascii[line - 1]:
            return byte_col
        return len(self.source.line_text(line).encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def span(self, node: ast.AST, end: ast.AST | None = None) -> Span:
        end = end or node
        line, end_line = node.lineno, end.end_lineno or node.lineno
        return Span(line, self.char_col(line, node.col_offset), end_line, self.char_col(end_line, end.end_col_offset or node.col_offset))

    def line_indent(self, line: int) -> str:
        text = self.source.line_text(line)
        return text[: len(text) - len(text.lstrip())]

    def finding(self, rule, node: ast.AST, message: str, fixes: Iterable[Fix] = (), related: Iterable[tuple[ast.AST, str]] = (), **data) -> Finding:
        """A finding of `rule` (a rule module) at `node`."""
        return Finding(
            code=rule.CODE,
            name=rule.NAME,
            severity=rule.SEVERITY,
            message=message,
            span=self.span(node),
            fixes=tuple(fixes),
            related=tuple(Related(self.span(where), text) for where, text in related if where is not None),
            data=data,
        )

    def with_cause(self, finding: Finding, node: "ast.AST | Span | None", message: str, failure: str) -> list[Finding]:
        """A bug of two places reported at both: `finding` where it fails, and one at `node`, its cause (the composition
        to move, the use to detach, the backward that accumulates), where the fix goes and where a reader starts. The
        second keeps the first's fixes and facts (the confirm runner reproduces the same bug from either), and points
        back at the failing line. `node` None, or on the failing line: the one finding."""
        if node is None:
            return [finding]
        span = node if isinstance(node, Span) else self.span(node)
        if span.line == finding.span.line:
            return [finding]
        related = (Related(finding.span, failure),) + tuple(r for r in finding.related if r.span.line != span.line)
        return [finding, replace(finding, message=message, span=span, related=related,
                                 data={**finding.data, "cause_of": finding.span.line})]


def _truly_shared(ident: int, a: frozenset, b: frozenset, owners: dict, calls: dict, callees: dict, memo: dict) -> bool:
    """ModuleModel.shared_graph's question for one id (a module function: a nested one calling itself is a reference
    cycle that keeps what it reads alive after the analysis)."""
    found = memo.get(ident)
    if found is not None:
        return found
    memo[ident] = True  # (a recursive helper meets its own question: shared, as before)
    function = owners.get(ident)
    result = True
    if function is not None:  # (a call inside a helper's body too: made anew by each call of that helper)
        through = calls.get(function, frozenset())
        in_a, in_b = through & a, through & b
        if in_a and in_b:
            result = any(_truly_shared(call, a, b, owners, calls, callees, memo) for call in in_a & in_b)
    callee = callees.get(ident)
    if callee is not None and result:
        # the id of a call of a helper: both graphs came out of that call; they share something only where they
        # share a node of its body (when both hold some: else what the body did is unknown, so shared)
        body_a = [i for i in a if owners.get(i) is callee]
        body_b = [i for i in b if owners.get(i) is callee]
        if body_a and body_b:
            result = any(_truly_shared(i, a, b, owners, calls, callees, memo) for i in set(body_a) & set(body_b))
    memo[ident] = result
    return result


def build_model(tree: ast.Module, source: Source, resolver=None, summary_only: bool = False) -> ModuleModel:
    """The model of a module. `summary_only` is for modules consulted by another one's analysis: no events or
    expression table are kept, and functions are walked only when a caller needs their summary."""
    from .walker import Walker

    return Walker(tree, source, resolver, summary_only=summary_only).run()


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_WORD = re.compile(r"(?<![\w.])\w+")


def _bare_names(tree: ast.AST) -> list[str]:
    """The names ModuleModel.mentions counts, in one pass over the tree: an explicit stack and a test of each node's
    type (a generic walk and an isinstance chain cost ~2x as much: ~10 ms of the first walk at 2,000 lines)."""
    found: list[str] = []
    add, extend, words = found.append, found.extend, _WORD.findall
    Name, Constant, arg, keyword, alias, ImportFrom, Expr = ast.Name, ast.Constant, ast.arg, ast.keyword, ast.alias, ast.ImportFrom, ast.Expr
    scoped, AST = (ast.Global, ast.Nonlocal), ast.AST
    stack = [tree]
    pop, push, push_all = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is Name:
            add(node.id)
            continue  # (its only child is its context)
        if kind is Constant:
            if type(node.value) is str:
                extend(words(node.value))
            continue
        if kind is str or node is None:
            continue  # (lists of fields hold names and holes too: Global.names, Dict.keys)
        if kind is arg:
            add(node.arg)
        elif kind is keyword:
            if node.arg:
                add(node.arg)
        elif kind is alias:
            add(node.name.split(".")[0])
            if node.asname:
                add(node.asname)
        elif kind in _DEFS:
            add(node.name)
        elif kind is ImportFrom:
            if node.module and not node.level:
                add(node.module.split(".")[0])
        elif kind in scoped:
            extend(node.names)
            continue
        elif kind is Expr and type(node.value) is Constant and (type(node.value.value) is not str or ">>>" not in node.value.value):
            continue  # a string standing as a statement (a docstring) is prose, unless it holds doctest calls
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                push_all(value)
            elif isinstance(value, AST):
                push(value)
    return found
