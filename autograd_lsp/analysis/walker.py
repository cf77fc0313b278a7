"""The one walk: statements in execution order, a scope stack of bindings, events for the rules.

Functions are summarised once each, lazily when first called (so their summary is known at the call site)
or at the end of the module. A body that changes, keeps or passes on its arguments is walked again for a call
whose arguments carry facts (call_in_context; bounds and memo in callsite.py), in the caller's grad mode.
A method's `self` sees the attributes its class set in `__init__` (per constructed instance) and in other methods.
Integers a call passes (or leaves as defaults) size the torch.nn layers a helper builds
(_layers_in_context); a forward hook's output parameter is its layer's output (_forward_hook); functions handed
over as values are called where the body calls them (call_value).
"""
from __future__ import annotations

import ast
import bisect
import builtins
import functools
import os
import re
from collections import Counter

from ..source import Source
from . import callsite, shapes, syntax
from . import torch_api as api
from . import uses
from .imports import ImportTable
from .model import (AttrLoadEvent, AttrStoreEvent, BindEvent, CallEvent, ClassInfo, Context, FunctionInfo, InplaceEvent, ItemStoreEvent, Loop,
                    ThroughEvent, ModuleModel, Scope, UseEvent)
from .provenance import Kind, Provenance, cut_of, flatten, merge



def label(node: ast.AST) -> str | None:
    """`a` -> "a", `self.w1` -> "self.w1"; other expressions have no label."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _graphs_in(prov: Provenance | None) -> frozenset:
    """The graph of a tensor, or of the tensors a list holds (its elements', and those appended to it)."""
    if prov is None:
        return frozenset()
    if prov.kind is Kind.TENSOR:
        return prov.graph
    if prov.kind is Kind.SEQUENCE:
        return prov.graph.union(*(e.graph for e in prov.elements if e is not None and e.kind is Kind.TENSOR))
    return frozenset()


def _own_graph(prov: Provenance) -> Provenance | None:
    """What another method may know of a value a method computed from its parameters: only that it is a tensor with a
    graph through trainable weights (composed from them), nothing the parameters decide (shape, dtype, where it came from)."""
    if prov.kind is not Kind.TENSOR or not prov.has_graph or not prov.composed_from or not prov.graph or prov.no_grad:
        return None
    return Provenance(Kind.TENSOR, prov.line, leaf=False, requires_grad=True, composed_from=prov.composed_from,
                      graph=prov.graph, loop=prov.loop, epoch=prov.epoch, origin=prov.origin, node=prov.node)


def _index_tensor(prov: Provenance | None) -> bool:
    """An integer tensor made by an index factory (`torch.randint`, `torch.randperm`) without a `dtype=`: advanced
    indexing by it picks one element (or row) per index, where a mask picks an unknown count."""
    if prov is None or prov.kind is not Kind.TENSOR or type(prov.node) is not ast.Call or not prov.origin.startswith("torch."):
        return False
    return prov.origin[6:] in api.INDEX_FACTORIES and not any(kw.arg == "dtype" for kw in prov.node.keywords)


def _const(node: ast.AST | None):
    return node.value if isinstance(node, ast.Constant) else None


def _literal_dtype(node: ast.AST) -> str | None:
    """dtype class of a nested list/tuple of literals (torch.tensor's data argument)."""
    kinds = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.List, ast.Tuple)):
            stack.extend(item.elts)
        elif isinstance(item, ast.UnaryOp) and isinstance(item.op, (ast.USub, ast.UAdd)):
            stack.append(item.operand)
        elif isinstance(item, ast.Constant) and isinstance(item.value, bool):
            kinds.add(api.INT)
        elif isinstance(item, ast.Constant) and isinstance(item.value, int):
            kinds.add(api.INT)
        elif isinstance(item, ast.Constant) and isinstance(item.value, (float, complex)):
            kinds.add(api.FLOAT)
        else:
            return None
    if api.FLOAT in kinds:
        return api.FLOAT
    return api.INT if kinds else None


def _typed_numbers(prov: Provenance | None) -> bool:
    """A number whose type is known (`32`, `0.5`), or a list of them (`[1, 2, 3]`): what a factory's dtype follows."""
    if prov is not None and prov.kind is Kind.SEQUENCE and prov.elements:
        return _numbers_dtype(prov.elements) is not None
    if prov is not None and prov.kind is Kind.MAPPING:
        return any(_typed_numbers(element) for element in prov.elements)  # (`cfg = {"lo": 20, ...}`, read by key)
    return prov is not None and prov.kind is Kind.NUMBER and prov.dtype is not None


def _common_graph(elements, node: ast.expr) -> Provenance | None:
    """The element of `for loss in [task_a, task_b]` when every element carries a graph: whichever one the loop is at,
    its graph holds what all of theirs share (a forward they were all made from)."""
    if not all(element is not None and element.has_graph for element in elements):
        return None
    shared = frozenset.intersection(*(element.graph for element in elements))
    loops, dtypes = {id(element.loop) for element in elements}, {element.dtype for element in elements}
    if not shared or len(loops) != 1:
        return None
    return Provenance(Kind.TENSOR, node.lineno, leaf=False, requires_grad=True, dtype=dtypes.pop() if len(dtypes) == 1 else None,
                      origin="element", node=node, graph=shared, loop=elements[0].loop, epoch=min(e.epoch for e in elements))


def _common_leaf(elements, node: ast.expr) -> Provenance | None:
    """The element of `for p in [w, b]` when every element is a trainable leaf: that fact (and a dtype all share) holds
    for each, whichever one the loop is at."""
    if not all(element is not None and element.is_trainable_leaf for element in elements):
        return None
    dtypes = {element.dtype for element in elements}
    return Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=True, dtype=dtypes.pop() if len(dtypes) == 1 else None,
                      origin="element", node=elements[0].node, composed_from=frozenset().union(*(e.composed_from for e in elements)))


def _common_module(elements, node: ast.expr) -> Provenance | None:
    """The element of `for block in self.blocks` when every block is an instance of one class of this workspace: whichever
    the loop is at, calling it runs that class's forward."""
    classes = {id(e.module_class) if e is not None and e.kind is Kind.MODULE and isinstance(e.module_class, ClassInfo) else None
               for e in elements}
    if len(classes) != 1 or None in classes:
        return None
    return Provenance(Kind.MODULE, node.lineno, module_class=elements[0].module_class, origin="element", node=node)


def _numbers_dtype(provs) -> str | None:
    """dtype class of Python numbers known by their provenance (`n = len(xs)`, a list of int literals); None otherwise."""
    kinds = {p.dtype if p is not None and p.kind is Kind.NUMBER else None for p in provs}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else (api.FLOAT if kinds == {api.FLOAT, api.INT} else None)


def _literal_numel(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return 1
    if isinstance(node, (ast.List, ast.Tuple)):
        total = 0
        for item in node.elts:
            count = _literal_numel(item)
            if count is None:
                return None
            total += count
        return total
    return None


def _size_numel(args: list[ast.expr], number=None) -> int | None:
    """numel of `zeros(2, 3)` / `zeros((2, 3))`, when every size is a literal (or a name `number` knows the value of)."""
    sizes = args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args
    total = 1
    for size in sizes:
        value = _const(size) if number is None else number(size)
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        total *= value
    return total


def _literal_shape(node: ast.AST):
    """The shape `torch.tensor(node)` has: nested list/tuple literals of numbers, every row of one length."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return ()
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _literal_shape(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        rows = [_literal_shape(item) for item in node.elts]
        if any(row is None for row in rows) or len(set(rows)) > 1:
            return None
        return (len(rows),) + (rows[0] if rows else ())
    return None


def _size_shape(args: list[ast.expr], number) -> tuple | None:
    """The shape `zeros(2, n)` / `zeros((2, n))` makes: a dim per size (None where a size's value is not known); None
    when the sizes are not spelt out (`zeros(*dims)`, `zeros(x.shape)`, a single name that may hold a tuple)."""
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        sizes = args[0].elts
    elif len(args) == 1:
        value = number(args[0])
        return (value,) if isinstance(value, int) and not isinstance(value, bool) else None
    else:
        sizes = args
    if any(isinstance(size, ast.Starred) for size in sizes):
        return None
    out = []
    for size in sizes:
        value = number(size)
        out.append(value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None)
    return tuple(out)


def _displayed(built, count: int) -> bool:
    """A torch.nn container built from `count` layers written out (`nn.ModuleList([a, b])`, `nn.Sequential(a, b)`), in order."""
    if type(built) is not ast.Call or built.keywords or any(type(arg) is ast.Starred for arg in built.args):
        return False
    if len(built.args) == 1 and type(built.args[0]) in (ast.List, ast.Tuple):
        elts = built.args[0].elts
        return len(elts) == count and not any(type(elt) is ast.Starred for elt in elts)
    return len(built.args) == count and count > 1


def _jumps(body: list) -> bool:
    """A `break` or `continue` of this loop's body (not of a loop or def nested in it)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Break or kind is ast.Continue:
            return True
        if kind in (ast.For, ast.AsyncFor, ast.While):
            stack.extend(node.orelse)  # (its own body's jumps are its own)
        elif kind not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda) and isinstance(node, ast.stmt):
            stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)))
        elif isinstance(node, ast.excepthandler) or kind is ast.match_case:
            stack.extend(node.body)
    return False


def _number(node: ast.AST | None):
    """The value of an int/float literal, `-1` included; None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _number(node.operand)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    value = _const(node)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _sequence_numel(short: str, args: list[ast.expr], keywords: dict, _number=_number) -> int | None:
    """numel of linspace/logspace/arange/range/eye calls whose counts are literals (torch's own size formulas)."""
    import math

    if short in ("linspace", "logspace"):
        steps = _number(args[2] if len(args) > 2 else keywords.get("steps"))
        return steps if isinstance(steps, int) else None
    if short == "eye":
        rows = _number(args[0] if args else keywords.get("n"))
        cols = _number(args[1] if len(args) > 1 else keywords.get("m", args[0] if args else keywords.get("n")))
        return rows * cols if isinstance(rows, int) and isinstance(cols, int) else None
    values = [_number(arg) for arg in args[:3]]
    if short == "arange" and len(args) == 1:
        values = [0, values[0]]
    values += [None] * (3 - len(values))
    for index, name in enumerate(("start", "end", "step")):
        if name in keywords:
            values[index] = _number(keywords[name])
    start, end, step = values
    step = 1 if step is None and len(args) < 3 and "step" not in keywords else step
    if start is None and short == "arange" and not args and "start" not in keywords:
        start = 0
    if start is None or end is None or step is None or step == 0:
        return None
    count = math.ceil((end - start) / step) if short == "arange" else int((end - start) / step + 1)
    return max(count, 0)


def workspace_module(path: str, top: str) -> bool:
    """`top` is a module next to `path` or up to three directories above it (or under their src/), a namespace
    package included."""
    from pathlib import Path

    from .crossmodule import namespace_package

    here = Path(path).resolve().parent
    return any((root / f"{top}.py").is_file() or (root / top / "__init__.py").is_file() or (root / "src" / top).is_dir()
               or namespace_package(root / top) for root in [here, *list(here.parents)[:3]])


CHAINS = frozenset({"itertools.chain"})  # one iterable over several: `itertools.chain(G.parameters(), D.parameters())`
_TUPLE = callsite.TUPLE
SEQUENTIAL_LAYERS = "<nn.Sequential layers>"  # the `self` attribute an nn.Sequential subclass's layers are kept under
_EACH = "comprehension"  # a SEQUENCE's origin: its one element stands for every item, however many
_SOME_ITEMS = "some items"  # a SEQUENCE's origin: built differently on two branches, its items unknown (not none)
# a layer list's item `act_layer(...)` built from a constructor parameter whose default is a torch.nn layer class: a
# MODULE of no known class (its `text` names the default's); only the order check of nn.Sequential reads it, and asks
# that every construction leave the default (_sequential_hazards)
_DEFAULT_LAYER = "layer class parameter "
_UNSET = object()
_CHANGING = {InplaceEvent, AttrStoreEvent, CallEvent}
# Python's dict methods that change its values (a mapping so changed keeps no known values)
_DICT_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__", "__ior__"})
_PLAIN_VALUES = (Kind.TENSOR, Kind.NUMBER, Kind.SEQUENCE, Kind.MAPPING, Kind.TEXT)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPE_NAMES = re.compile(r"[ \t]+([\w \t,]+)")  # after `global` / `nonlocal` at the start of a line: `global k, n`
def _scope_statements(text: str) -> list[str]:
    """What follows `global` / `nonlocal` on the lines that start with one. Found with str.find: a regex anchored at
    line starts tries every position of the text (1-2% of a check, as `global` is in most texts: `global_pool`)."""
    found = []
    for word in ("global", "nonlocal"):
        at = text.find(word)
        while at != -1:
            end = at + len(word)
            if text[end:end + 1] in (" ", "\t") and not text[text.rfind("\n", 0, at) + 1:at].strip(" \t"):
                match = _SCOPE_NAMES.match(text, end)
                if match is not None:
                    found.append(match.group(1))
            at = text.find(word, end)
    return found


_PURE_BUILTINS = frozenset(name for name in dir(builtins) if name not in ("exec", "eval"))  # (those two write a globals dict)


def _changes(event) -> bool:
    """An event that changes a tensor in place or its requires_grad (what a body walked for a call site reports); a torch
    call making a tensor that requires grad counts too (`torch.arange(n, requires_grad=True)`: its dtype is the call's)."""
    kind = type(event)
    return kind is InplaceEvent or kind is AttrStoreEvent or kind is CallEvent and (event.role == "requires_grad_" or _made_requiring_grad(event))


def _made_requiring_grad(event) -> bool:
    result = event.result
    return event.qualname is not None and result is not None and result.kind is Kind.TENSOR and result.node is event.node \
        and result.leaf and result.requires_grad is True

_NOT_WALKED = object()
_PARAMETER_INDEX: dict = {}  # index -> frozenset({index}) (made for every parameter of every walk)
_EV: dict = {}  # node type -> Walker.ev_<Type> (or None)
_STMT: dict = {}  # statement type -> Walker.stmt_<Type> (or None)


class Walker:
    # The walk reads these attributes millions of times per run: slots (a plain instance dict of 43 keys is past
    # CPython's shared-key limit, and its reads take the slower lookup by hint). Rare ones go to __dict__.
    __slots__ = ("model", "summary_only", "depth", "table", "imports", "resolver", "seq", "edited_saves", "scope", "module_scope",
                 "loop", "no_grad", "mode", "epoch", "stmt", "function", "zero_grad_receivers", "via", "overlay", "context_depth",
                 "context_walks", "quiet", "memo", "memo_seen", "events_before", "summary_reads", "escaped", "backprops",
                 "branching", "left_early", "ended", "_keywords", "shadows", "unlisted_loops", "function_aliases", "tensor_aliases",
                 "table_changes", "classes_read", "module_reads", "_last_ctx", "__dict__")

    def __init__(self, tree: ast.Module, source: Source, resolver=None, summary_only: bool = False):
        # (a notebook's tree is of its masked cells: its joined text is not searched for import lines)
        self.model = ModuleModel(tree, source, ImportTable.of(tree, source.text if source.cells is None else None))
        self.summary_only = summary_only
        self.depth = getattr(resolver, "depth", 0)  # how many imports away from the checked file this module is
        # nobody asks another module's expressions for their provenance
        self.table = None if summary_only else self.model._provs  # expression -> provenance (ModuleModel.prov)
        self.imports = self.model.imports
        self.resolver = resolver
        self.seq = 0
        self.edited_saves: set = set()  # ids of saving ops whose saved tensor an in-place change already broke
        self.scope = Scope(tree, "<module>", None)
        self.module_scope = self.scope
        self.loop: Loop | None = None
        self.no_grad = False
        self.mode: bool | None = False  # Context.no_grad: script code runs with grad; a function body has its callers' mode (None)
        self.epoch = 0
        self.stmt: ast.stmt = tree  # type: ignore[assignment]
        self.function: FunctionInfo | None = None
        self.zero_grad_receivers: set[str] = set()
        # walking a body for one call site (call_in_context): that call's context, an expression table of its own
        self.via: Context | None = None
        self.overlay: dict | None = None
        self.context_depth = 0
        self.context_walks = 0
        self.quiet = False  # inside a body walked only for the shape it returns: it reports nothing (see call_in_context)
        self.memo: dict = {}  # (function node, grad mode, facts of self and the arguments) -> (return, arguments, escaped, backprops)
        # memo key -> [event count when its walk began, event count at its last use]: where a body walked for one call
        # site lies in the walk, and whether anything read it after (analysis/rewalk.py walks such walks again)
        self.memo_seen: dict = {}
        self.events_before = ()  # (analysis/rewalk.py: the events before a block walked again)
        # id of a function -> {id of a reader: the function (None: module code)} whose walk read its summary other than
        # through a call event of its own (the last block of an nn.Sequential, a layer's width)
        self.summary_reads: dict = {}
        self.escaped: list | None = None  # events of another module's body that concern the caller's arguments
        # a body walked for one call site: its backward and step calls (and those its own calls stand for), in order,
        # each marked `certain` when it runs whenever the body runs (rules see them at the caller: ThroughEvent)
        self.backprops: list | None = None
        self.branching = 0  # enclosing branches of the body being walked that may not run (an if not decided, a loop)
        self.left_early = False  # a return (or raise) that may have run already: what follows may not run
        self.ended = False  # a walk for one call site met a return that runs for sure: what follows never runs
        self._keywords: dict | None = None
        self.shadows: list[FunctionInfo] = []  # (for release())
        self.unlisted_loops: list[Loop] = []  # loops of summary and call-site walks, not in model.loops (for release())
        self.function_aliases: dict = {}  # (id of a scope, name) -> the torch function the name was bound to there
        self.tensor_aliases: dict = {}  # (id of a scope, name) -> names `b = a` bound there to the same tensor, either way
        self.table_changes = 0  # stores into class tables so far
        self.classes_read: set | None = None  # (id of a class, attribute) read from class tables (recorded by analysis/rewalk.py only)
        self.module_reads: set = set()  # the same, read by module code (FunctionInfo.reads_classes: by a function)
        self._last_ctx: Context | None = None  # (ctx())

    # -- driving -------------------------------------------------------------------------------------
    def run(self) -> ModuleModel:
        self._register_defs(self.model.tree.body)
        self.walk_body(self.model.tree.body)
        self.stmt = self.model.tree  # (walks from here on are of functions no module code called: analysis/rewalk.py)
        if not self.summary_only:
            for info in list(self.model.functions.values()):
                if not info.walked:
                    self.walk_function(info)
        self.model._walker = self  # for release()
        return self.model

    def ctx(self) -> Context:
        """The context of the point the walk is at; the events of one point share one (read-only) Context."""
        found = self._last_ctx
        if (found is not None and found.statement is self.stmt and found.scope is self.scope and found.loop is self.loop
                and found.no_grad is self.mode and found.epoch == self.epoch and found.via is self.via):
            return found
        found = self._last_ctx = Context(self.scope, self.loop, self.mode, self.epoch, self.stmt, self.via)
        return found

    def emit(self, event):
        self.seq += 1
        if type(event) is InplaceEvent and event.prov is not None and event.prov.saved_node is not None:
            self.edited_saves.add(id(event.prov.saved_node))
        event.seq = self.seq
        function = self.function
        if self.via is None:
            if function is not None and not function.uses_arguments and type(event) in _CHANGING:
                self._note_change(function, event)
        elif self.backprops is not None and not self.quiet and (
                type(event) is ThroughEvent or type(event) is CallEvent and (event.role == "backward" or event.role == "step")):
            # (what the caller sees of it: ThroughEvent; the body's own events stay those of its symbolic walk)
            event.certain = event.certain and self.branching == 0 and not self.left_early
            if type(event) is CallEvent and event.role == "backward" and event.node.args and not (
                    event.receiver_prov is not None and event.receiver_prov.kind is Kind.TENSOR):
                event.value = self.prov_of(event.node.args[0])  # (`accelerator.backward(loss)`)
            self.backprops.append(event)
            return event
        elif self.quiet or not _changes(event):
            # A body walked for one call site: only what the helper does to a value in place (or to its
            # requires_grad) is judged from there; loops, uses and losses stay those of the symbolic walk.
            return event
        elif self.escaped is not None:
            self.escaped.append(event)
        if not self.summary_only:
            self.model.events.append(event)
        return event

    @staticmethod
    def _note_change(function: FunctionInfo, event):
        if _changes(event):
            prov = event.receiver_prov if type(event) is CallEvent else event.prov
            # a parameter itself, or an item of one it iterates (`for p in params: p -= ...`), not a value made from it
            if prov is not None and prov.param_deps and prov.origin in ("param", "element"):
                function.uses_arguments = True
            elif type(event) is InplaceEvent and prov is not None and prov.param_deps and prov.requires_grad is None \
                    and api.saves_output(prov.origin.split("(", 1)[0].rsplit(".", 1)[-1]):
                # the output of an op that keeps it (`t = x.norm(dim=-1); t += eps`): saved, and so broken by the edit,
                # when the call passes a tensor that requires grad
                function.uses_arguments = True

    def _note_unknown_write(self, target: ast.expr):
        """An in-place write into something reached from a parameter (`model.blocks[i].weight[0] = 0`, `net.fc.bias.zero_()`)
        that the symbolic walk cannot know: the body is worth walking again with what each caller passes."""
        function = self.function
        if function is None or function.uses_arguments or self.via is not None or function.cls is not None:
            return
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
        if isinstance(target, ast.Name) and target is not None:
            args = function.node.args
            if any(arg.arg == target.id for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]) and self.scope.bindings.get(target.id) is not None \
                    and self.scope.bindings[target.id].origin == "param":
                function.uses_arguments = True

    def prov_of(self, node: ast.AST) -> Provenance | None:
        if self.overlay is not None and id(node) in self.overlay:
            return self.overlay[id(node)]
        return self.model.prov(node)

    def _state(self):
        return (self.scope, self.loop, self.no_grad, self.mode, self.epoch, self.stmt, self.function, self.via, self.table,
                self.overlay, self.escaped, self.backprops, self.branching, self.left_early, self.ended)

    def _restore(self, state):
        (self.scope, self.loop, self.no_grad, self.mode, self.epoch, self.stmt, self.function, self.via, self.table,
         self.overlay, self.escaped, self.backprops, self.branching, self.left_early, self.ended) = state

    def _register_defs(self, body: list[ast.stmt]):
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info = FunctionInfo(stmt, stmt.name, owner=self)
                info.defining_scope = self.scope  # type: ignore[attr-defined]
                self.model.functions[stmt] = info
                self.scope.defs[stmt.name] = info
            elif isinstance(stmt, ast.ClassDef):
                self.scope.defs[stmt.name] = self._register_class(stmt)
            elif isinstance(stmt, (ast.If, ast.Try)):
                # defs behind `if TYPE_CHECKING:` / try-import fallbacks
                self._register_defs(stmt.body)
                self._register_defs(getattr(stmt, "orelse", []))

    def _register_class(self, node: ast.ClassDef) -> ClassInfo:
        is_module = False
        for base in node.bases:
            qualname = self.imports.qualname(base)
            if qualname in api.MODULE_BASES or (qualname or "").startswith("torch.nn."):
                is_module = True
            elif isinstance(base, ast.Name) and isinstance(self.lookup_def(base.id), ClassInfo):
                is_module = is_module or self.lookup_def(base.id).is_module  # (`class A(nn.Module, Mixin)`: any base decides)
            elif isinstance(base, ast.Attribute) and base.attr in ("Module", "LightningModule"):
                is_module = True
        info = ClassInfo(node, node.name, is_module)
        layers = [q.rsplit(".", 1)[-1] for q in map(self.imports.qualname, node.bases) if q and q.startswith("torch.nn.")]
        if len(layers) == 1 and api.layer_parameters(layers[0]):
            info.torch_layer = layers[0]  # `class NoisyLinear(nn.Linear)`: `self.weight`, `self.bias` are its Parameters
        info.bases = [base for base in (self.lookup_def(b.id) for b in node.bases if isinstance(b, ast.Name)) if isinstance(base, ClassInfo)]
        if len(info.bases) < len(node.bases) and self.resolver is not None and not self.summary_only:
            info.pending_bases = True  # (bases from other modules: resolved when this module constructs one, construct())
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                function = FunctionInfo(stmt, stmt.name, cls=info, owner=self)
                function.defining_scope = self.scope  # type: ignore[attr-defined]
                info.methods[stmt.name] = function
                self.model.functions[stmt] = function
        self.model.classes.setdefault(node.name, info)
        return info

    def _workspace_bases(self, node: ast.ClassDef) -> list[ClassInfo]:
        """The bases of a class of the checked module that are classes of the workspace's other modules."""
        found = []
        for base in node.bases:
            qualname = self.imports.qualname(base)
            if qualname is None or self.imports.is_torch(qualname) or not self._in_workspace(qualname):
                continue
            definition = self.resolver.resolve(self.model.source, base, qualname=qualname)
            if isinstance(definition, ClassInfo) and definition.node is not node:
                found.append(definition)
        return found

    def lookup_def(self, name: str):
        scope = self.scope
        while scope is not None:
            if name in scope.defs:
                # a def whose name its scope has assigned since (`Block = partial(Block, act="GELU")`): not known to be it
                return None if name in scope.bindings else scope.defs[name]
            scope = scope.parent
        return None

    def _function_alias(self, name: str) -> str | None:
        """The torch function a name holds (`criterion = F.cross_entropy`), in the scope that binds the name."""
        if not self.function_aliases or not name:
            return None
        scope = self.scope
        while scope is not None:
            if name in scope.bindings:
                return self.function_aliases.get((id(scope), name))
            scope = scope.parent
        return None

    def _builtin(self, node: ast.Name) -> bool:
        """A name no scope binds, defines or imports: Python's builtin."""
        scope = self.scope
        while scope is not None:
            if node.id in scope.bindings or node.id in scope.defs:
                return False
            scope = scope.parent
        return self.imports.qualname(node) is None

    def lookup(self, name: str) -> Provenance | None:
        scope = self.scope
        while scope is not None:
            if name in scope.bindings:
                return scope.bindings[name]
            scope = scope.parent
        return None

    def bind(self, name: str, prov: Provenance | None):
        self.scope.bindings[name] = prov
        if self.function_aliases:
            self.function_aliases.pop((id(self.scope), name), None)
        loop = self.loop
        while loop is not None:  # "rebound anywhere in the loop": known once the loop's walk ends
            loop.assigned.add(name)
            loop = loop.parent

    def update(self, name: str, prov: Provenance | None):
        """A new fact about the same value (saved for backward, requires_grad_ set): not a rebinding."""
        before = self.scope.bindings.get(name)
        self.scope.bindings[name] = prov
        self._share(name, before, prov)

    def _share(self, name: str, before: Provenance | None, prov: Provenance | None):
        if self.tensor_aliases and before is not None:
            # `b = a`: a name still holding the very provenance `name` held is the same tensor (a rebinding, or a merge
            # of branches that bound it apart, makes another object): the fact holds for it too
            bindings, key, pending, seen = self.scope.bindings, id(self.scope), [name], {name}
            while pending:
                for other in self.tensor_aliases.get((key, pending.pop()), ()):
                    if other not in seen and bindings.get(other) is before:
                        seen.add(other)
                        pending.append(other)
                        bindings[other] = prov

    def rebind(self, target: ast.AST, prov: Provenance | None):
        """Update what a name or `self.x` holds after an in-place change of its tensor."""
        name = label(target)
        if name is not None:
            self.update(name, prov)

    # -- functions and classes -----------------------------------------------------------------------
    def ensure_class_init(self, cls: ClassInfo):
        init = cls.methods.get("__init__")
        if init is not None and not init.walked and not init.walking:
            self.walk_function(init)

    def _walk_closure(self, node: ast.Call):
        """`optimizer.step(closure)` runs the closure (LBFGS: several times): a def of this module that nothing else
        calls (nested in the training function, so no walk of its own) is walked here, so that its backward and its
        reset are known as the step's."""
        argument = node.args[0] if node.args else next((kw.value for kw in node.keywords if kw.arg == "closure"), None)
        if type(argument) is not ast.Name or self.summary_only:
            return
        scope = self.scope
        while scope is not None and argument.id not in scope.defs:
            scope = scope.parent
        info = scope.defs.get(argument.id) if scope is not None else None
        if isinstance(info, FunctionInfo) and not info.walked and not info.walking and info.owner is self and not info.node.args.args:
            self.walk_function(info)

    def walk_function(self, info: FunctionInfo):
        if info.walked or info.walking:
            return
        if info.owner is not self:
            if info.owner is not None:  # another module's function: its own imports and scopes apply
                info.owner.walk_for_caller(info)
            return  # (no owner: its module was released unwalked; the summary stays unknown)
        if info.cls is not None and info.name != "__init__":
            self.ensure_class_init(info.cls)
        info.walking = True
        # where this walk began (its caller, the event count, the module statement), for analysis/rewalk.py
        info.walk_from, info.walk_seq, info.walk_stmt = self.function, self.seq, self.stmt  # type: ignore[attr-defined]
        info.walk_tables = self.table_changes  # type: ignore[attr-defined]
        if self.function is None and self.stmt is not self.model.tree and not self.summary_only:  # module code calls it
            info.walk_module = (dict(self.module_scope.bindings), {key: value for key, value in self.function_aliases.items()  # type: ignore[attr-defined]
                                                                   if key[0] == id(self.module_scope)})
        saved = self._state()
        node = info.node
        self.scope = Scope(node, info.name, getattr(info, "defining_scope", self.module_scope), function=info)
        info.scope = self.scope
        self.loop, self.no_grad, self.epoch, self.function = None, self._decorated_no_grad(node), 0, info
        self.mode = True if self.no_grad else None
        self.via, self.overlay, self.escaped, self.backprops = None, None, None, None
        self.branching, self.left_early, self.ended = 0, False, False
        self.table = None if self.summary_only else self.model._provs
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        for index, arg in enumerate([*positional, *args.kwonlyargs]):
            if index == 0 and info.cls is not None and not self._is_static(node):
                self.bind(arg.arg, Provenance(Kind.MODULE, node.lineno, module_class=info.cls, origin="self"))
                continue
            prov = info.__dict__.get("passed_modules", {}).get(arg.arg) or info.__dict__.get("hook_outputs", {}).get(arg.arg) \
                or self._param_prov(arg, index)
            self.bind(arg.arg, prov.but(scalar=False) if arg.arg in info.__dict__.get("passed_sizes", ()) else prov)
        for arg in (args.vararg, args.kwarg):
            if arg is not None:
                self.bind(arg.arg, None)
        passed = info.__dict__.get("passed_modules", {})
        for index, arg in self._module_parameters(node, positional, args.kwonlyargs, info.cls is not None and not self._is_static(node),
                                                  info.__dict__.get("module_arguments", ())):
            if arg.arg in passed:
                continue  # the module its only call passes (bound above) tells more than a symbolic module
            # `def train(netD, netG, ...)` that iterates `netD.parameters()`: a module, whose call is a forward
            self.scope.bindings[arg.arg] = Provenance(Kind.MODULE, arg.lineno, origin="param", param_deps=frozenset({index}), node=arg)
        self._register_defs(node.body)
        if info.cls is not None and not info.cls.is_module and self._optimizer_class(info.cls):
            # a method of a torch.optim.Optimizer subclass that changes its parameters in place: `step()`, or a body writing
            # the loop variable of `for p in group["params"]` (`p.add_(e_w)`, `p.data.sub_(...)`): its calls are steps
            info.moves_parameters = info.name == "step" or _writes_parameters(node)  # type: ignore[attr-defined]
        try:
            self.walk_body(node.body)
            marks = info.__dict__.pop("kept_params", {})
            if info.name == "forward" and info.cls is not None and info.cls.is_module:
                # the inputs its ops keep for backward (`self.conv(x)`): a caller's tensor passed there is saved too
                kept = {index: prov.saved_by for index, arg in enumerate(positional)
                        for prov in [self.scope.bindings.get(arg.arg) if arg.arg not in marks else marks[arg.arg][0].but(saved_by=marks[arg.arg][1])]
                        if prov is not None and prov.kind is Kind.TENSOR and prov.saved_by and prov.origin == "param"
                        and prov.param_deps == frozenset({index})}
                if kept:
                    info.saved_inputs = kept  # type: ignore[attr-defined]
        finally:
            self._restore(saved)
            info.walking = False
            info.walked = True
            info.walk_end = self.seq  # type: ignore[attr-defined]
            info.walk_tables_end = self.table_changes  # type: ignore[attr-defined]

    def _module_parameters(self, node, positional, kwonly, method: bool, given=()):
        """Parameters that are an nn.Module: those the first call passed a module for (`given`), and those the body
        treats as one: receivers of `.parameters()`, `.named_modules()`... (torch's module iterators, which no tensor
        or optimizer has). The body's text is searched first: most functions never name one."""
        arguments = [*positional, *kwonly]
        index_of = {arg.arg: index for index, arg in enumerate(arguments) if not (method and index == 0)}
        found = {name: (index_of[name], arguments[index_of[name]]) for name in given if name in index_of}
        if not self._iterator_call_between(node.lineno, node.end_lineno or node.lineno):
            return list(found.values())
        for sub in syntax.nodes(node):  # (in no order: each name is found once, and its parameter is bound already)
            if type(sub) is ast.Call and type(sub.func) is ast.Attribute and sub.func.attr in api.MODULE_ITERATORS \
                    and type(sub.func.value) is ast.Name and sub.func.value.id in index_of:
                name = sub.func.value.id
                found[name] = (index_of[name], arguments[index_of[name]])
        return list(found.values())

    def _iterator_call_between(self, first: int, last: int) -> bool:
        """Some line from `first` to `last` holds `.parameters(` or another of torch's module iterators called. The
        lines are found once per module, by one search of its text: most functions are never searched further."""
        text = self.model.source.text
        cached = self.__dict__.get("_iterator_lines")
        if cached is not None and cached[0] is text:
            lines = cached[1]
        elif "\r" in text:
            return True  # (line endings the search would count wrong: the tree is searched)
        else:  # (a walker kept across an edit sees the new text)
            lines, line, position = [], 1, 0
            for match in _ITERATOR_CALL.finditer(text):
                line += text.count("\n", position, match.start())
                position = match.start()
                lines.append(line)
            self._iterator_lines = (text, lines)
        index = bisect.bisect_left(lines, first)
        return index < len(lines) and lines[index] <= last

    def walk_for_caller(self, info: FunctionInfo):
        """Walk one of this (summary-only) module's functions because another module's analysis needs it."""
        at_depth = getattr(self.resolver, "at_depth", None)
        if at_depth is None:
            self.walk_function(info)
            return
        with at_depth(self.depth) as free:
            if free:
                self.walk_function(info)

    def _decorated_no_grad(self, node) -> bool:
        """`@torch.no_grad()` / `@torch.inference_mode()` on a def: its whole body runs without grad."""
        for decorator in getattr(node, "decorator_list", ()):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.imports.qualname(target) in api.NO_GRAD_CONTEXTS:
                return True
        return False

    @staticmethod
    def _is_static(node) -> bool:
        return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)

    def _static_method(self, receiver: ast.expr | None, method: str) -> FunctionInfo | None:
        """`Name.method` where `Name` is a class defined here (not rebound) and `method` one of its staticmethods."""
        if type(receiver) is not ast.Name or self.is_bound(receiver.id):
            return None
        cls = self.lookup_def(receiver.id)
        info = cls.methods.get(method) if isinstance(cls, ClassInfo) else None
        return info if info is not None and not isinstance(info.node, ast.Lambda) and self._is_static(info.node) else None

    def _param_prov(self, arg: ast.arg, index: int) -> Provenance | None:
        # Parameters are symbolic: a call site substitutes what it passes (see instantiate()).
        deps = _PARAMETER_INDEX.get(index)
        if deps is None:
            deps = _PARAMETER_INDEX[index] = frozenset({index})
        return Provenance(Kind.TENSOR, arg.lineno, origin="param", param_deps=deps, as_large_as=frozenset({id(arg)}), node=arg)

    def _summarised(self, info: FunctionInfo | None) -> bool:
        """A function's summary can be read: ours (a recursive call sees what is known so far), or another
        module's that was walked to its end (the server's jedi thread may be half-way through it)."""
        return info is None or info.owner is self or info.walked

    def instantiate(self, info: FunctionInfo, call: ast.Call, arg_provs: list, arg_nodes: list) -> Provenance | None:
        ret = info.returns
        if ret is None or not self._summarised(info):
            return None
        if any(type(arg) is ast.Starred for arg in arg_nodes) and (spread := callsite.spread(call, arg_provs)) is not None:
            # `score(x, *net(x))` of a tuple of known elements: each fills its own parameter
            arg_nodes = [value for arg, prov in zip(arg_nodes, arg_provs) for value in
                         ([arg.value] * len(prov.elements) if type(arg) is ast.Starred else [arg])]
            arg_provs = spread
        return self._instantiate_returned(info, ret, call, arg_provs, arg_nodes)

    def _instantiate_returned(self, info: FunctionInfo, ret: Provenance, call: ast.Call, arg_provs: list, arg_nodes: list):
        if ret.kind in (Kind.SEQUENCE, Kind.MAPPING) and ret.elements:
            # `return loss, {"mse": mse}`: each element is its own function of the arguments (`loss, logs = my_loss(pred, y)`)
            elements = tuple(self._instantiate_returned(info, element, call, arg_provs, arg_nodes) if element is not None else None
                             for element in ret.elements)
            return ret.but(line=call.lineno, node=call, loop=self.loop, epoch=self.epoch, elements=elements)
        return self._instantiate_value(info, ret, call, arg_provs, arg_nodes)

    def _passed_otherwise(self, info: FunctionInfo, call: ast.Call, index: int):
        """(provenance, node) of the parameter at `index` (positional then keyword-only, as walk_function numbers them)
        when the call passes it by keyword, or leaves it at a number default; None otherwise."""
        args = info.node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if not 0 <= index < len(params) or any(isinstance(arg, ast.Starred) for arg in call.args) \
                or any(kw.arg is None for kw in call.keywords):
            return None
        name = params[index].arg
        for keyword in call.keywords:
            if keyword.arg == name:
                prov = self.prov_of(keyword.value)
                return (prov, keyword.value) if prov is not None else None
        bound: dict = {}
        _bind_defaults(info.node, call, bound, info.cls is not None and not self._is_static(info.node))
        return (bound[name], None) if bound.get(name) is not None and bound[name].kind is Kind.NUMBER else None

    def _instantiate_value(self, info: FunctionInfo, ret: Provenance, call: ast.Call, arg_provs: list, arg_nodes: list) -> Provenance | None:
        offset = 1 if info.cls is not None and not self._is_static(info.node) else 0
        deps = []
        starred = next((i for i, arg in enumerate(arg_nodes) if isinstance(arg, ast.Starred)), None)
        cut = []  # per dependency: the helper reaches it only through a graph cut (its values, never its graph)
        for index in sorted(ret.param_deps):
            position = index - offset
            if starred is not None and position >= starred:
                deps.append((None, None))  # (`helper(*batch)`: which parameters it fills is not known)
            elif 0 <= position < len(arg_provs):
                deps.append((arg_provs[position], arg_nodes[position]))
            elif (given := self._passed_otherwise(info, call, index)) is not None:
                deps.append(given)  # by keyword, or left at its number default (`def init(size, std=1.0)`)
            elif ret.nondiff is not None and ret.requires_grad is False and ret.dtype == api.INT:
                deps.append((None, None))  # an integer cut (`.long()`, argmax) whatever that argument is: still integer
            else:
                return None  # depends on something the call did not pass positionally: unknown
            cut.append(index in ret.cut_deps)
        if ret.origin == "param" and len(deps) == 1:
            return deps[0][0]  # an identity-like helper returns what it was given
        if not deps:
            # made inside the helper (e.g. returns torch.zeros(..., requires_grad=True)): a fresh value per call
            return ret.but(line=call.lineno, node=_built_or(ret, call), loop=self.loop, epoch=self.epoch, origin=f"{info.name}()",
                           graph=frozenset({id(call)}) if ret.graph else frozenset())
        if ret.kind is not Kind.TENSOR:
            return None
        grads = any(p is not None and p.kind is Kind.TENSOR and p.requires_grad for p in flatten([prov for (prov, _), c in zip(deps, cut) if not c]))
        if any(prov is None for prov, _ in deps):
            # an integer cut has no grad whatever the rest is; a tensor built from one that requires grad has it
            # (`summed_loss(predictions, targets)` with unknown targets)
            # (and a graph the helper made from something that requires grad whatever its parameters hold: a module's forward)
            if not (ret.nondiff is not None and ret.requires_grad is False) and not (grads and ret.requires_grad is None) \
                    and not (ret.requires_grad is True and ret.leaf is False):
                return None
            cut = [c for (prov, _), c in zip(deps, cut) if prov is not None]
            deps = [(prov, node) for prov, node in deps if prov is not None]
        requires_grad = ret.requires_grad
        if ret.nondiff is not None and ret.requires_grad is False:
            pass  # every path through the helper went through an integer cut (argmax, comparison): no grad whatever it is given
        elif grads and ret.requires_grad is not False:  # (False: the helper detaches or runs under no_grad)
            requires_grad = True
        elif requires_grad is None and all(prov.requires_grad is False or prov.kind is Kind.NUMBER for prov, _ in deps) \
                and any(prov.kind is Kind.TENSOR for prov, _ in deps):
            requires_grad = False  # (a number, `eps` left at its default, never requires grad)
        # the helper's own parameters (`self.backbone(x).floor()` in a method) carry its cut whatever the arguments hold
        carried = bool(ret.composed_from) or any(
            prov.kind is Kind.TENSOR and (prov.requires_grad or prov.composed_from or prov.nondiff) for prov, _ in deps)
        nondiff = ret.nondiff if carried else None
        if nondiff is None and ret.requires_grad is None and not ret.composed_from:
            # made from its arguments alone (no graph of its own): a cut they all went through stays one (`soft_skel(hard)`
            # of `hard = (pred > 0.5).float()`), as for an op of the body (derive)
            carriers = [prov for prov, _ in deps if prov.kind is Kind.TENSOR and (prov.requires_grad or prov.composed_from or prov.nondiff)]
            nondiff = carriers[0].nondiff if carriers and all(prov.nondiff for prov in carriers) else None
        covered = _covered(info, ret, arg_provs, offset)
        # Given nothing that requires grad, what the helper itself made require grad (`(torch.randn(n) * std).requires_grad_()`,
        # a leaf or not depending on `std` in its summary) is a leaf: no graph reaches it from the arguments.
        own_leaf = not grads and ret.leaf is not False and ret.requires_grad is True and all(
            c or prov.kind is Kind.NUMBER or prov.kind is Kind.TENSOR and prov.requires_grad is False for (prov, _), c in zip(deps, cut))
        return ret.but(
            nondiff=nondiff,
            line=call.lineno,
            requires_grad=requires_grad if not self.no_grad else False,
            leaf=(True if own_leaf or requires_grad is False or self.no_grad else (False if requires_grad else None)),
            dtype=ret.dtype or self._common_dtype([prov for prov, _ in deps]),
            composed_from=ret.composed_from | self._composed([dep for dep, c in zip(deps, cut) if not c]),
            graph=frozenset() if requires_grad is False else
            ret.graph | frozenset().union(*(p.graph for p in flatten([prov for (prov, _), c in zip(deps, cut) if not c]) if p is not None)) | {id(call)},
            # a helper called inside another helper with that one's parameters: the result still depends on them
            param_deps=(outer := frozenset().union(*(prov.param_deps for prov, _ in deps))),
            cut_deps=outer if requires_grad is False else cut_of([prov.but(cut_deps=prov.param_deps) if c else prov for (prov, _), c in zip(deps, cut)]),
            no_grad=self.no_grad,
            loop=self.loop,
            epoch=self.epoch,
            scalar=ret.scalar if ret.scalar is not None else (False if any(p.scalar is False for p in covered) else _elementwise_scalar(info, ret, deps)),
            as_large_as=frozenset().union(*(p.as_large_as for p in covered)),
            origin=f"{info.name}()",
            node=call,
        )

    # -- statements ----------------------------------------------------------------------------------
    def walk_body(self, body: list[ast.stmt]):
        for stmt in body:
            if self.ended:
                return  # (`if threshold is not None: return ...` taken for this call: the rest is dead code)
            self.stmt = stmt
            kind = type(stmt)
            method = _STMT.get(kind, _UNSET)
            if method is _UNSET:
                method = _STMT[kind] = getattr(Walker, "stmt_" + kind.__name__, None)
            if method is not None:
                method(self, stmt)
            else:
                for child in ast.iter_child_nodes(stmt):
                    if isinstance(child, ast.expr):
                        self.ev(child)

    def stmt_FunctionDef(self, node):
        if node not in self.model.functions:  # nested in a block we did not pre-register
            self._register_defs([node])

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def stmt_ClassDef(self, node):
        if node.name not in self.scope.defs:
            self._register_defs([node])
        for decorator in node.decorator_list:
            self.ev(decorator)
        for stmt in node.body:  # (class attributes are not walked)
            self._factory_subscripts_in(stmt)

    def stmt_Expr(self, node):
        self.ev(node.value)

    def stmt_Return(self, node):
        prov = self.ev(node.value) if node.value is not None else None
        if self.branching:
            self.left_early = True
        elif self.via is not None and self.loop is None:
            self.ended = True  # (in a walk for one call site, where a test this call decides took the branch)
        info = self.function
        if info is not None:
            info.returns = merge(info.returns, prov) if info.returned_any else prov
            info.returned_any = True

    def stmt_Assign(self, node):
        prov = self.ev(node.value)
        for target in node.targets:
            self.assign(target, node.value, prov)

    def stmt_AnnAssign(self, node):
        if node.value is not None:
            self.assign(node.target, node.value, self.ev(node.value))

    def stmt_AugAssign(self, node):
        value = self.ev(node.value, usage="operand")
        target = node.target
        base = target.value if isinstance(target, ast.Subscript) else target
        before = self.ev_target(base)
        op = _OPS.get(type(node.op), "?") + "="
        element = _item_of(before, target.slice) if isinstance(target, ast.Subscript) and before is not None and before.kind is Kind.SEQUENCE else None
        if before is not None and before.kind is Kind.TENSOR:
            self.emit(InplaceEvent(node, self.ctx(), target=target, prov=before, op=op if not isinstance(target, ast.Subscript) else f"[...] {op}",
                                   form="augassign"))
            after = self._after_inplace(before, [value])
            if value is not None and value.kind is Kind.TENSOR and value.graph and not self.no_grad and not value.graph <= after.graph:
                after = after.but(graph=after.graph | value.graph)  # (`loss += adv`: backward of loss runs through adv's graph too)
            after = self._through_edit(node, before, after)
        elif element is not None and element.kind is Kind.TENSOR:
            # `outs[i] += y`: the list's tensor changed in place (Tensor.__iadd__), the list itself stays what it was
            self.emit(InplaceEvent(node, self.ctx(), target=target, prov=element, op=op, form="augassign"))
            return
        else:
            if isinstance(target, ast.Subscript):
                self._note_unknown_write(base)
            after = self.combine(node, [(before, base), (value, node.value)], binop=node.op)
        name = label(base)
        if name is not None:
            if self.summary_only or self.via is not None:
                self.seq += 1  # (emit() keeps no binding there: its place in the order only)
            else:
                self.emit(BindEvent(node, self.ctx(), name=name, target=base, value=node.value, prov=after))
            held = self.scope.bindings.get(name)
            self.bind(name, after)
            if before is not None and before.kind is Kind.TENSOR:
                self._share(name, held, after)  # (an in-place change: its aliases hold the changed tensor)
            if isinstance(base, ast.Attribute) and base.value.id == "self":
                self._store_self_attribute(base.attr, after, node)

    def _through_edit(self, node: ast.AST, before: Provenance, after: Provenance) -> Provenance:
        """An in-place edit of a kept tensor is a node of its graph from then on: a loss computed from the edited tensor
        holds it (AG006 asks for it where the saving call returned several tensors)."""
        if before.saved_node is None or self.no_grad or not after.graph:
            return after
        return after.but(graph=after.graph | {id(node)})

    def _saved_since(self, receiver: ast.expr, recv: Provenance) -> Provenance:
        """The receiver of `x.div_(x.norm())` as the arguments left it: an op among them may have saved it."""
        name = label(receiver)
        now = self.lookup(name) if name is not None and recv.saved_by is None else None
        if now is None or now.kind is not Kind.TENSOR or now.saved_by is None:
            return recv
        return recv.but(saved_by=now.saved_by, saved_node=now.saved_node)

    def _after_inplace(self, before: Provenance, values: list) -> Provenance:
        after = self._changed_in_place(before, values)
        if after.cut_deps and not self.no_grad:
            # (`y = x.detach(); y += x`: a path that keeps x's graph now reaches y)
            live = frozenset().union(*(v.param_deps - v.cut_deps for v in values if v is not None and v.kind is Kind.TENSOR))
            if after.cut_deps & live:
                after = after.but(cut_deps=after.cut_deps - live)
        return after

    def _changed_in_place(self, before: Provenance, values: list) -> Provenance:
        grads = [v for v in values if v is not None and v.kind is Kind.TENSOR and v.requires_grad]
        if grads and not self.no_grad and not before.requires_grad:
            return before.but(leaf=False, requires_grad=True, nondiff=None)
        if grads and not self.no_grad and before.nondiff is not None:
            before = before.but(nondiff=None)  # (a path with a gradient now reaches it)
        if not grads and before.requires_grad is False and before.nondiff is None and not before.composed_from:
            cut = next((v.nondiff for v in values if v is not None and v.kind is Kind.TENSOR and v.nondiff), None)
            if cut is not None:  # `onehot.scatter_(1, x.argmax(1, keepdim=True), 1)`: its values now come from the cut only
                return before.but(nondiff=cut)
        saver = id(before.saved_node) if before.saved_node is not None else None
        if saver is not None and saver not in before.graph and not self.no_grad and any(saver in v.graph for v in grads):
            # `x /= x.norm()`: x is now computed through the norm that saved it, whose backward a loss of x runs (AG006)
            return before.but(graph=before.graph | {saver})
        return before

    def stmt_For(self, node):
        iter_prov = self.ev(node.iter)
        # `for block in self.blocks:` over a container known to hold a layer: the first pass always runs
        over = self._iterated_container(node.iter, iter_prov)
        sure = over is not None and over.elements and self._runs_layers(over) and not _jumps(node.body)
        self._loop(node, node.body, lambda: self.assign(node.target, None, self._element_of(iter_prov, node.iter)), sure)
        self._branch(node.orelse)

    stmt_AsyncFor = stmt_For

    def stmt_While(self, node):
        self.ev(node.test)
        self._loop(node, node.body)
        self._branch(node.orelse)

    def _loop(self, node, body, bind_target=None, sure=False):
        loop = Loop(node, self.scope, self.loop)
        loop.seq = self.seq  # type: ignore[attr-defined]  # (its place among the events: analysis/rewalk.py)
        if not self.summary_only and self.via is None:
            self.model.loops.append(loop)
        else:
            self.unlisted_loops.append(loop)
        saved = self.loop
        self.loop = loop
        step = 0 if sure else 1
        self.branching += step
        try:
            if bind_target is not None:
                bind_target()
            self.walk_body(body)
        finally:
            self.loop = saved
            self.branching -= step

    def stmt_If(self, node):
        self.ev(node.test)
        self._note_none_test(node.test)
        taken = self._known_test(node.test)
        if taken is not None:  # `if eps is None: eps = self.eps`, eps left at its None default: that branch alone
            self.walk_body(node.body if taken else node.orelse)
            return
        before = dict(self.scope.bindings)
        narrowed = self._narrowed(node.test)
        carried = self._carried_into_body(node)
        if carried is not None:
            # `if acc is not None: acc += y` / `else: acc = y` in a loop: the body of a later pass holds what the else bound
            self._branch(node.orelse)
            after_else = self.scope.bindings
            self.scope.bindings = dict(before)
            if after_else.get(carried) is not before.get(carried):
                self.scope.bindings[carried] = after_else.get(carried)
        if narrowed is not None:
            self.bind(*narrowed)  # `if isinstance(m, nn.Conv2d):` m is a Conv2d in the body
        self._branch(node.body)
        after_body = self.scope.bindings
        if carried is None and node.orelse:
            self.scope.bindings = dict(before)
            self.scope.bindings.update(self._carried_into_else(node, before, after_body))
            self._branch(node.orelse)
            after_else = self.scope.bindings
        elif carried is None:
            after_else = before  # (no else: what held before, read only below)
        # Most names are bound to the very same provenance after both branches (neither touched them): keep it
        # without comparing (a large scope has hundreds of names, and a module thousands of `if`s).
        merged = {}
        for name, prov in after_body.items():
            if name in after_else:
                other = after_else[name]
                merged[name] = prov if prov is other else _merge_branches(prov, other)
            else:
                merged[name] = _merge_branches(before[name], prov) if name in before else prov
        for name, prov in after_else.items():
            if name not in after_body:
                merged[name] = _merge_branches(before[name], prov) if name in before else prov
        self.scope.bindings = merged

    def _carried_into_else(self, node: ast.If, before: dict, after_body: dict) -> dict:
        """In a loop, `if i == 0: acc = y` / `else: acc += y`: a name first bound in the body, and bound nowhere else in
        the loop, holds in the `else` of a later iteration what the body bound (else it is unbound there)."""
        loop = self.loop
        if loop is None or loop.scope is not self.scope:
            return {}
        new = [name for name in after_body if name not in before]
        test = node.test
        if type(test) is ast.Compare and type(test.left) is ast.Name and len(test.ops) == 1 and type(test.ops[0]) is ast.Is \
                and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None \
                and after_body.get(test.left.id) is not before.get(test.left.id) and self.function is not None \
                and _none_outside(self.function.node, loop.node, test.left.id):
            new.append(test.left.id)  # `acc = None` before the loop, `if acc is None: acc = y` / `else: acc += y`
        if not new:
            return {}
        elsewhere = self._stores_outside(loop.node, node)
        return {name: after_body[name] for name in new if name not in elsewhere}

    def _carried_into_body(self, node: ast.If) -> str | None:
        """The name of `if acc is not None: acc += y` / `else: acc = y` in a loop, `acc = None` before it and bound nowhere
        else in the loop: the body, on a later pass, holds what the else bound (walked first for that)."""
        loop, test = self.loop, node.test
        if loop is None or loop.scope is not self.scope or not node.orelse or self.function is None \
                or not (type(test) is ast.Compare and type(test.left) is ast.Name and len(test.ops) == 1 and type(test.ops[0]) is ast.IsNot
                        and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None):
            return None
        name = test.left.id
        if name in self._stores_outside(loop.node, node, orelse=True) or not _none_outside(self.function.node, loop.node, name):
            return None
        return name

    @staticmethod
    def _stores_outside(loop: ast.AST, branch: ast.If, orelse: bool = False) -> set:
        """Names the loop binds outside `branch`'s body (its else, `orelse`) (an augmented assignment keeps its tensor:
        not counted). The loop's counts are kept on it; only the branch's part is counted again (an `if` per name)."""
        everywhere = syntax.kept_on(loop, "_bound_counts", lambda node: _bound_names(
            ([node.target] if isinstance(node, (ast.For, ast.AsyncFor)) else []) + node.body))
        inside = _bound_names(branch.orelse if orelse else branch.body)
        return {name for name, count in everywhere.items() if count > inside.get(name, 0)}

    def _note_cut(self):
        """The symbolic walk of a function meets a graph cut (a comparison, argmax, a cast to int): whether what it returns
        is cut may depend on what each call passes (a parameter that might require grad keeps a path open), so a call
        passing tensors whose requires_grad is known walks the body with them (call_in_context)."""
        function = self.function
        if function is not None and self.via is None:
            function.cuts_graph = True  # type: ignore[attr-defined]

    def _branch(self, body: list[ast.stmt]):
        """A block that may not run (a branch not decided, a loop's else, a handler)."""
        if body:
            self.branching += 1
            scope = self.scope
            outer, scope.branch = scope.branch, object()
            try:
                self.walk_body(body)
            finally:
                self.branching -= 1
                scope.branch = outer

    def _note_none_test(self, test):
        """The symbolic walk of a function meets `if <parameter> is (not) None`: calls passing it or not may take
        different branches (_optional_tuple)."""
        function = self.function
        if self.via is not None or function is None or type(test) is not ast.Compare or len(test.ops) != 1 \
                or type(test.ops[0]) not in (ast.Is, ast.IsNot) or type(test.left) is not ast.Name \
                or type(test.comparators[0]) is not ast.Constant or test.comparators[0].value is not None:
            return
        args = function.node.args
        if any(arg.arg == test.left.id for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]):
            function.tests_none = True  # type: ignore[attr-defined]

    def _narrowed(self, test) -> tuple | None:
        """`isinstance(name, <module class>)` on a name of unknown value: (name, that module) for the if's body."""
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" and len(test.args) == 2
                and isinstance(test.args[0], ast.Name)):
            return None
        known = self.lookup(test.args[0].id)
        if known is not None and not (known.origin == "param" and (known.kind is Kind.TENSOR or known.kind is Kind.MODULE and known.module_class is None)):
            return None  # (a parameter's symbolic value says nothing about its type)
        kind = test.args[1]
        kinds = kind.elts if isinstance(kind, ast.Tuple) and kind.elts else [kind]
        qualnames = [self.imports.qualname(k) for k in kinds]
        if all(q is not None and q.startswith("torch.nn.") for q in qualnames):
            # torch layers with the same parameters (`(nn.Conv2d, nn.Linear)`: weight and bias): any of them will do
            owned = {api.layer_parameters(q.rsplit(".", 1)[-1]) for q in qualnames}
            if len(owned) != 1 or not next(iter(owned)):
                return None
            cls = qualnames[0]
        elif len(kinds) > 1:
            return None
        else:
            cls = self.lookup_def(kind.id) if isinstance(kind, ast.Name) else None
            if not isinstance(cls, ClassInfo) or not cls.is_module:
                return None
        return test.args[0].id, Provenance(Kind.MODULE, test.lineno, module_class=cls, origin=self.model.text(kind), node=kind)

    def stmt_With(self, node):
        saved = self.no_grad, self.mode
        for item in node.items:
            self.ev(item.context_expr)
            expr = item.context_expr
            qualname = self.imports.qualname(expr.func if isinstance(expr, ast.Call) else expr)
            if qualname in api.NO_GRAD_CONTEXTS:
                self.no_grad = self.mode = True
            elif qualname in api.ENABLE_GRAD_CONTEXTS:
                self.no_grad = self.mode = False
            elif qualname in api.SET_GRAD_ENABLED and isinstance(expr, ast.Call) and expr.args:
                enabled = _const(expr.args[0])
                if enabled is False:
                    self.no_grad = self.mode = True
                elif enabled is True:
                    self.no_grad = self.mode = False
            if item.optional_vars is not None:
                self.assign(item.optional_vars, None, None)
        try:
            self.walk_body(node.body)
        finally:
            self.no_grad, self.mode = saved

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, node):
        self.walk_body(node.body)
        for handler in node.handlers:
            if handler.name:
                self.bind(handler.name, None)
            self._branch(handler.body)
        self.walk_body(node.orelse)
        self.walk_body(node.finalbody)

    stmt_TryStar = stmt_Try

    def stmt_Match(self, node):
        self.ev(node.subject)
        for case in node.cases:
            self._branch(case.body)

    def stmt_Delete(self, node):
        for target in node.targets:
            name = label(target)
            if name is not None:
                self.scope.bindings.pop(name, None)

    def stmt_Import(self, node):
        pass

    stmt_ImportFrom = stmt_Global = stmt_Nonlocal = stmt_Pass = stmt_Break = stmt_Continue = stmt_Import

    def stmt_Raise(self, node):
        self.ev(node.exc)
        self.ev(node.cause)
        if self.branching:
            self.left_early = True

    # -- assignment ----------------------------------------------------------------------------------
    def assign(self, target: ast.expr, value: ast.expr | None, prov: Provenance | None):
        if prov is not None and prov.kind is Kind.MODULE and type(value) is ast.Call and prov.node is not value \
                and prov.elements and isinstance(prov.module_class, str) and prov.module_class.endswith(".Sequential") \
                and type(target) in (ast.Name, ast.Attribute) and not self.summary_only \
                and self._item_changes().get(target.id if type(target) is ast.Name else target.attr):
            # a written-out nn.Sequential a call returned (`self.right = make_branch(w)`), changed under this name
            # (`self.right.extend(...)`): its last layer is not known (the construction's own name is checked there)
            prov = prov.but(tail=(None,))
        if isinstance(target, ast.Name):
            if prov is _INT_NUMBER and type(value) is ast.Constant and type(value.value) is int:
                prov = _int_number(value.value)  # `batch_size = 32`: its value sizes tensors made from it
            elif prov is None and type(value) is ast.Constant and type(value.value) is str and len(value.value) <= 16:
                prov = Provenance(Kind.TEXT, value.lineno, text=value.value)  # `reduction = "none"`: a loss's argument
            alias = value.id if isinstance(value, ast.Name) else None
            if self.summary_only or self.via is not None:
                self.seq += 1  # (emit() keeps no binding there: its place in the order only)
            else:
                self.emit(BindEvent(self.stmt, self.ctx(), name=target.id, target=target, value=value, prov=prov, alias_of=alias))
            self.bind(target.id, prov)
            if alias is not None and prov is not None and prov.kind is Kind.TENSOR and self.scope.bindings.get(alias) is prov:
                key = id(self.scope)
                self.tensor_aliases.setdefault((key, alias), set()).add(target.id)
                self.tensor_aliases.setdefault((key, target.id), set()).add(alias)
            if prov is None and isinstance(value, (ast.Attribute, ast.Name)):
                qualname = self.imports.qualname(value) or self._function_alias(value.id if isinstance(value, ast.Name) else "")
                module, _, short = (qualname or "").rpartition(".")
                if module in api.MATH_MODULES and short[:1].islower():
                    self.function_aliases[(id(self.scope), target.id)] = qualname  # `loss_fn = F.l1_loss`
        elif isinstance(target, (ast.Tuple, ast.List)):
            star = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)), None)
            elements = self._unpack(value, prov, len(target.elts), star)
            if type(value) is ast.Call and star is None and len(elements) > 1 and type(self.stmt) is ast.Assign and self.stmt.value is value:
                elements = _output_marked(value, target, elements)
            for element_target, (element_value, element_prov) in zip(target.elts, elements):
                self.assign(element_target, element_value, element_prov)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, None, None)
        elif isinstance(target, ast.Attribute):
            self.ev(target.value)
            owner = label(target.value)
            if target.attr in ("requires_grad", "data", "grad") or target.attr in _GRAD_TYPOS or api.misspells_requires_grad(target.attr):
                before = self.prov_of(target.value)
                self.emit(AttrStoreEvent(self.stmt, self.ctx(), target=target, prov=before, value=value))
                if target.attr == "requires_grad" and before is not None and before.kind is Kind.TENSOR and isinstance(_const(value), bool):
                    self.rebind(target.value, before.but(requires_grad=_const(value)))
                return
            name = label(target)
            if name is None:
                return
            alias = value.id if isinstance(value, ast.Name) else None
            if self.summary_only or self.via is not None:
                self.seq += 1  # (emit() keeps no binding there: its place in the order only)
            else:
                self.emit(BindEvent(self.stmt, self.ctx(), name=name, target=target, value=value, prov=prov, alias_of=alias))
            self.bind(name, prov)
            if owner == "self":
                self._store_self_attribute(target.attr, prov, self.stmt)
        elif isinstance(target, ast.Subscript):
            base_prov = self.ev_target(target.value)
            self.ev(target.slice)
            if base_prov is not None and base_prov.kind is Kind.TENSOR:
                self.emit(InplaceEvent(self.stmt, self.ctx(), target=target, prov=base_prov, op="[...] =", form="setitem"))
                after = self._after_inplace(base_prov, [prov])
                if prov is not None and prov.kind is Kind.TENSOR and prov.graph and not self.no_grad and not prov.graph <= after.graph:
                    after = after.but(graph=after.graph | prov.graph)  # (`out[:, a:b] = y`: a backward of out runs through y's graph)
                if after is not base_prov:
                    self.rebind(target.value, after)
            else:
                if base_prov is None:
                    self._note_unknown_write(target.value)
                if not (self.summary_only or self.via is not None):  # (a dict, a list: for the rules that follow what they hold)
                    self.emit(ItemStoreEvent(self.stmt, self.ctx(), target=target, value=value, prov=prov))
            if base_prov is not None and base_prov.kind is Kind.MAPPING and label(target.value) is not None:
                # (every name of the display forgets it: `cfg[key] = float(cfg[key])` changed a value not known)
                self._forget_values(target.value)
                if not (base_prov.keys and None not in base_prov.keys and isinstance(_const(target.slice), str)):
                    return
                key = _const(target.slice)  # `out["loss"] = loss` on a dict display: that key now holds it
                keys, values = list(base_prov.keys), list(base_prov.elements)
                if key in keys:
                    values[keys.index(key)] = prov
                else:
                    keys.append(key)
                    values.append(prov)
                self.update(label(target.value), base_prov.but(keys=tuple(keys), elements=tuple(values)))

    def _optional_layer(self, cls: ClassInfo, attr: str) -> Provenance | None:
        """`self.fuse = Fusion(c) if n > 1 else None`, set by __init__ alone: where `self.fuse(...)` runs, it is that layer
        (a call of None raises). Only its calls read it so: a test `if self.fuse is not None` stays undecided."""
        stmt = cls.attribute_nodes.get(attr)
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.value) is not ast.IfExp or attr in cls.late:
            return None
        target, value = stmt.targets[0], stmt.value
        if not (type(target) is ast.Attribute and target.attr == attr and type(target.value) is ast.Name and target.value.id == "self"):
            return None
        sides = [side for side in (value.body, value.orelse) if not (type(side) is ast.Constant and side.value is None)]
        layer = self.model.prov(sides[0]) if len(sides) == 1 else None
        return layer if layer is not None and layer.kind is Kind.MODULE else None

    def _defaulted_layer(self, cls: ClassInfo, attr: str) -> Provenance | None:
        """`self.loss = loss if loss is not None else MAE()` (`loss or MAE()`), `loss` an __init__ parameter defaulting
        to None that no construction walked here passes: where `self.loss(...)` runs, it is the default's layer."""
        stmt = cls.attribute_nodes.get(attr)
        init = cls.methods.get("__init__")
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or attr in cls.late or attr in cls.constructed or init is None:
            return None
        target, value = stmt.targets[0], stmt.value
        if not (type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self"):
            return None
        name, default = _none_defaulted(value)
        if name is None or name not in syntax.none_default_parameters(init.node):
            return None
        passed = self.model.passed_by_calls()
        positional = [arg.arg for arg in [*init.node.args.posonlyargs, *init.node.args.args]][1:]
        callers = {cls.name, "__init__", *(other.name for other in self.model.classes.values() if _derives(other, cls))}
        for caller in callers & passed.keys():
            keywords, most = passed[caller]
            if name in keywords or None in keywords or (name in positional and most > positional.index(name)):
                return None  # (a construction here, or a subclass's, may pass its own: by keyword, `**options` or position)
        layer = self.model.prov(default)
        return layer if layer is not None and layer.kind is Kind.MODULE else None

    def _store_self_attribute(self, attr: str, prov, stmt):
        info = self.function
        if info is None or info.cls is None:
            return
        self.table_changes += 1  # (a class table changed: analysis/rewalk.py)
        info.cls.changed_at = self.table_changes  # type: ignore[attr-defined]
        info.cls.__dict__.setdefault("changed_attrs", {})[attr] = self.table_changes  # (the last store of each attribute)
        cls = info.cls
        if prov is not None and prov.param_deps:
            info.uses_arguments = True
        if info.name == "__init__" and info.context_of is None:
            cls.attributes[attr] = self._either_store(attr, cls.attributes.get(attr), prov)
            cls.attribute_nodes[attr] = stmt
        elif info.name == "__init__":
            # a constructor call's arguments: what this module builds, merged over its constructions
            table = cls.constructed
            table[attr] = merge(table[attr], prov) if attr in table and getattr(info, "constructions", 0) else prov
            cls.attribute_nodes.setdefault(attr, stmt)
            instance = getattr(info, "instance", None)
            if instance is not None and instance.node is not None:
                stores = cls.instances.setdefault(id(instance.node), {})
                stores[attr] = self._either_store(attr, stores.get(attr), prov)
                value = stmt.value if type(stmt) is ast.Assign and len(stmt.targets) == 1 else None
                if prov is None and type(value) is ast.Name and self._known_none(value.id):
                    # (`self.ignore = ignore` of a parameter this construction leaves at None: None for this instance)
                    cls.__dict__.setdefault("none_attributes", {}).setdefault(id(instance.node), set()).add(attr)
        else:
            if prov is not None and prov.param_deps and info.context_of is None:
                # the method's own symbolic parameter: meaningless in another method, but a module's forward of it still
                # has a graph through that module's weights (`self.embedded = self.encoder(inputs)`)
                prov = _own_graph(prov)
            table = cls.late
            table[attr] = merge(table[attr], prov) if attr in table else prov

    def _either_store(self, attr: str, earlier, prov):
        """`if trainable: self.w = nn.Parameter(t)` / `else: self.register_buffer("w", t)`: a tensor stored in an undecided
        branch over one this walk stored outside that branch holds either (merged), not the last one walked."""
        scope = self.scope
        if scope.stored is None:
            scope.stored = {}
        before = scope.stored.get(attr, scope)
        scope.stored[attr] = scope.branch
        if self.branching and before is not scope and before is not scope.branch and earlier is not None and prov is not None \
                and earlier.kind is Kind.TENSOR and prov.kind is Kind.TENSOR:
            return merge(earlier, prov)
        return prov

    def _unpack(self, value, prov, count, star: int | None = None):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == count and not any(isinstance(e, ast.Starred) for e in value.elts):
            return [(element, self.prov_of(element)) for element in value.elts]
        if prov is not None and prov.kind is Kind.SEQUENCE and len(prov.elements) == count and star is None:
            return [(None, element) for element in prov.elements]
        if prov is not None and prov.kind is Kind.SEQUENCE and prov.origin == _TUPLE and star is not None and len(prov.elements) >= count - 1:
            # `a, b, *rest = returned_tuple`: the names before the star take the first elements, those after it the last
            after = count - star - 1
            tail = list(prov.elements[len(prov.elements) - after:]) if after else []
            return [(None, element) for element in [*prov.elements[:star], None, *tail]]
        if prov is not None and prov.kind is Kind.MODULE and len(prov.elements) == count and star is None and _displayed(prov.node, count):
            return [(None, element) for element in prov.elements]  # `attn, ff = nn.ModuleList([Attention(), FeedForward()])`
        if self._sizes_of_tensor(value):  # `n, c = x.size()[:2]`, `b, _, h, w = x.shape`: ints
            return [(None, Provenance(Kind.NUMBER, value.lineno, dtype=api.INT))] * count
        indices = self._integer_outputs(value, prov, count)
        if indices:  # `values, indices = x.max(1)`: the indices are an integer tensor without a graph
            return [(None, self._indices(value) if i in indices else prov and prov.but(scalar=None, shape=None)) for i in range(count)]
        if prov is not None and prov.kind is Kind.TENSOR and self._float_outputs(value, count):
            # `vals, vecs = torch.linalg.eigh(a)`: every output a floating tensor computed from what the op was given
            return [(None, prov.but(scalar=None, shape=None))] * count
        if prov is not None and prov.kind is Kind.TENSOR and prov.has_graph:
            # `y1, y2 = model(x)`: every output shares the forward's graph
            return [(None, prov.but(scalar=None, shape=None)) for _ in range(count)]
        if prov is not None and prov.kind is Kind.TENSOR and prov.origin == "batch":
            return [(None, prov)] * count  # `for inputs, labels in loader`: every field has the batch's rows
        if prov is not None and prov.kind is Kind.TENSOR and prov.origin == "param" and prov.param_deps:
            # `box, cls = predictions` of a helper's parameter: each part is what the call passes decides, as for the parameter
            part = Provenance(Kind.TENSOR, prov.line, origin="element", param_deps=prov.param_deps, cut_deps=prov.cut_deps, node=value)
            return [(None, part)] * count
        if prov is not None and prov.kind is Kind.TENSOR and prov.param_deps and isinstance(value, ast.Call) \
                and (self._tuple_op(value) or "") in api.VIEWS:
            # `w, v = torch.split(s, [3, 3])` of a value made from a helper's parameters: pieces of it, as it depends on them
            part = Provenance(Kind.TENSOR, prov.line, origin="element", param_deps=prov.param_deps, cut_deps=prov.cut_deps, node=value)
            return [(None, part)] * count
        return [(None, None)] * count

    def _sizes_of_tensor(self, value) -> bool:
        """`x.size()` or `x.shape` of a tensor, or a slice of it: a torch.Size, a tuple of ints."""
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
            value = value.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" and not value.args \
                and not value.keywords:
            value = value.func
        elif not (isinstance(value, ast.Attribute) and value.attr == "shape"):
            return False
        receiver = self.prov_of(value.value)
        return receiver is not None and receiver.kind is Kind.TENSOR

    def _integer_outputs(self, value, prov, count) -> frozenset:
        """Which of the `count` tensors a torch op's call returns are integer (its indices), by the op table."""
        if not isinstance(value, ast.Call):
            return frozenset()
        qualname = self.imports.qualname(value.func)
        if qualname is None and (prov is None or prov.kind is not Kind.TENSOR):
            return frozenset()  # x.max(1) on a known tensor; torch.max(x, 1) with x a tensor, known or not
        op = self._tuple_op(value)
        # the overload with a dim: `x.max(1)`, `torch.max(x, 1)`, `dim=` (an int; `torch.max(a, b)` is elementwise)
        return api.integer_outputs(op, count, api.gives_dim(op, value, value.args[1 if qualname is not None else 0:], self.prov_of))

    def _float_outputs(self, value, count) -> bool:
        """A call of a torch op that returns `count` tensors, all floating (the op table's TUPLE_RESULTS), whichever
        overload: one that needs a dim for its tuple (`x.max(1)`) is not among them (it has integer indices)."""
        if not isinstance(value, ast.Call):
            return False
        entry = api.TUPLE_RESULTS.get(self._tuple_op(value) or "")
        return entry is not None and not entry["dim"] and len(entry["outputs"]) == count and all(kind == api.FLOAT for kind in entry["outputs"])

    def _tuple_op(self, call: ast.Call) -> str | None:
        qualname = self.imports.qualname(call.func)
        if qualname is not None:
            if qualname.startswith("torch.linalg.") and qualname.count(".") == 2:
                return "linalg_" + qualname.rsplit(".", 1)[-1]  # (the op table's name: native `linalg_eigh`)
            return qualname.rsplit(".", 1)[-1] if self.imports.is_torch(qualname) and qualname.count(".") == 1 else None
        return call.func.attr if isinstance(call.func, ast.Attribute) else None

    def _indices(self, node) -> Provenance:
        return Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=False, dtype=api.INT, no_grad=self.no_grad, loop=self.loop,
                          epoch=self.epoch, origin=self._origin(node), nondiff=self._origin(node).rsplit(".", 1)[-1].strip("()"), node=node)

    def _element_of(self, prov: Provenance | None, node: ast.expr) -> Provenance | None:
        if prov is None:
            if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "range" and self._builtin(node.func):
                bounds = self._ints(node.args) if 1 <= len(node.args) <= 3 and not node.keywords else None
                if bounds is None or None in bounds or (len(bounds) == 3 and bounds[2] == 0):
                    return _INT_NUMBER  # (the builtin's counter: an int)
                return Provenance(Kind.NUMBER, 0, dtype=api.INT, counter=range(*bounds))
            return None
        if prov.kind is Kind.TENSOR and prov.origin == "param":
            # a helper's parameter iterated (`for pred in predictions`): what the call passes decides, as for the parameter
            return Provenance(Kind.TENSOR, node.lineno, origin="element", param_deps=prov.param_deps, cut_deps=prov.cut_deps, node=node)
        if prov.kind is Kind.TENSOR and prov.requires_grad is False and prov.leaf is True and prov.data_of is None:
            # a row or chunk of a plain tensor (`for xb in data.split(64)`): plain too, with a split's piece shape
            element = Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=False, dtype=prov.dtype, origin="element", node=node)
            piece = self._split_piece(node) if type(node) is ast.Call else None
            return element.but(shape=piece, scalar=shapes.scalar_of(piece)) if piece is not None else element
        if prov.kind is Kind.PARAMS:
            origin = prov.origin if prov.origin.endswith(".parameters()") else "parameter"
            param = Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=True, dtype=api.FLOAT, origin=origin, node=node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "named_parameters":
                return Provenance(Kind.SEQUENCE, node.lineno, elements=(None, param))  # (name, parameter) pairs
            return param
        if prov.kind in (Kind.SEQUENCE, Kind.MODULE) and prov.elements:  # (a module: a container's layers)
            first = prov.elements[0]
            if all(element == first for element in prov.elements):
                return first
            return _common_leaf(prov.elements, node) or _common_graph(prov.elements, node) or _common_module(prov.elements, node)
        if prov.kind is Kind.TENSOR and type(node) is ast.Call:
            piece = self._split_piece(node)
            if piece is not None:  # `for block in x.split(32)`: what the split gave, one piece's shape
                return prov.but(shape=piece, scalar=shapes.scalar_of(piece), node=node, line=node.lineno)
        return None

    def _split_piece(self, call: ast.Call):
        """The shape of every piece of `x.split(k)` / `torch.split(x, k)` (an int size, dim 0 or given), where known."""
        func, args = call.func, list(call.args)
        if type(func) is not ast.Attribute or func.attr != "split" or any(isinstance(a, ast.Starred) for a in args):
            return None
        if self.imports.qualname(func) == "torch.split":
            receiver, args = (args[0], args[1:]) if args else (None, args)
        else:
            receiver = func.value
        named = {kw.arg: kw.value for kw in call.keywords}
        if receiver is None or set(named) - {"split_size", "split_size_or_sections", "dim"} or len(args) > 2:
            return None
        size = args[0] if args else named.get("split_size", named.get("split_size_or_sections"))
        dim = args[1] if len(args) > 1 else named.get("dim")
        recv = self.prov_of(receiver)
        if recv is None or recv.kind is not Kind.TENSOR or size is None:
            return None
        dim_value = 0 if dim is None else self._int_value(dim)
        return shapes.split_piece(recv.shape, self._int_value(size), dim_value) if isinstance(dim_value, int) else None

    # -- expressions ---------------------------------------------------------------------------------
    def ev(self, node: ast.expr | None, usage: str = "other", callee: str | None = None) -> Provenance | None:
        if node is None:
            return None
        kind = type(node)
        if kind is ast.Name:  # (a third of all evaluations: ev_Name inlined)
            name = node.id
            scope = self.scope
            while scope is not None:
                bindings = scope.bindings
                if name in bindings:
                    prov = bindings[name]
                    break
                scope = scope.parent
            else:
                prov = None
            if prov is not None and prov.kind is Kind.TENSOR:
                if self.summary_only or self.via is not None:
                    # another module's summary, a body walked for one call site: emit() would keep no use (only
                    # in-place changes and requires_grad), so none is made; its place in the order still counts
                    self.seq += 1
                else:
                    self.emit(UseEvent(node, self.ctx(), name=name, prov=prov, usage=usage, callee=callee))
            table = self.table
            if table is not None:
                table[id(node)] = prov
            return prov
        if kind is ast.Constant:  # (a quarter: numbers size tensors, other constants are nothing the walk tracks)
            value = node.value
            prov = (_INT_NUMBER if type(value) is int else _FLOAT_NUMBER if type(value) is float else _TRUE if value is True
                    else _FALSE if value is False else _text(value) if type(value) is str else None)
            table = self.table
            if table is not None:
                table[id(node)] = prov
            return prov
        method = _EV.get(kind, _UNSET)
        if method is _UNSET:  # the hottest call of the walk: dispatch on the node's type once per type
            method = _EV[kind] = getattr(Walker, "ev_" + kind.__name__, None)
        if method is None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.ev(child)
            prov = None
        else:
            prov = method(self, node)
        table = self.table  # (recorded inline: the hottest call of the walk)
        if table is not None:
            table[id(node)] = prov
        return prov

    def ev_target(self, node: ast.expr) -> Provenance | None:
        """The provenance of an assignment target's current value (without a use event)."""
        if isinstance(node, ast.Name):
            prov = self.lookup(node.id)
            if self.table is not None:
                self.table[id(node)] = prov
            return prov
        return self.ev(node)

    def ev_Tuple(self, node):
        elements = tuple(self.ev(element, usage="element") for element in node.elts)
        exact = type(node) is ast.Tuple and not any(type(element) is ast.Starred for element in node.elts)
        # (a tuple display holds exactly these elements, in order, for good: `(loss,) + outputs` can be indexed)
        return Provenance(Kind.SEQUENCE, node.lineno, elements=elements, origin=_TUPLE if exact else "")

    ev_List = ev_Tuple

    def ev_Dict(self, node):
        """`{"loss": loss, "acc": acc}`: its values by their string keys (`**rest` or a computed key: None)."""
        keys, values = [], []
        for key, value in zip(node.keys, node.values):
            if key is not None:
                self.ev(key)
            text = _const(key)
            keys.append(text if isinstance(text, str) else None)
            values.append(self.ev(value, usage="element"))
        return Provenance(Kind.MAPPING, node.lineno, elements=tuple(values), keys=tuple(keys), node=node)

    def ev_ListComp(self, node):
        saved = self.scope
        self.scope = Scope(node, "<comprehension>", saved, function=saved.function)
        try:
            for generator in node.generators:
                self.assign(generator.target, None, self._element_of(self.ev(generator.iter), generator.iter))
                for condition in generator.ifs:
                    self.ev(condition)
            element = self.ev(node.elt)
        finally:
            self.scope = saved
        if element is not None and element.kind is Kind.OPTIMIZER and element.params and len(node.generators) == 1:
            element = self._member_optimizer(element, node.generators[0])
        return Provenance(Kind.SEQUENCE, node.lineno, elements=(element,), origin=_EACH)

    def _member_optimizer(self, element: Provenance, generator) -> Provenance:
        """`[Adam(c.parameters()) for c in self.critics]`: each optimizer updates one member of the container, named
        `self.critics[*]` (some member) rather than by the comprehension's own variable."""
        target, owner = generator.target, label(generator.iter) if type(generator.iter) in (ast.Name, ast.Attribute) else None
        container = self.prov_of(generator.iter) if owner is not None else None
        if type(target) is not ast.Name or container is None or container.kind is not Kind.MODULE:
            return element
        name = target.id
        params = frozenset(f"{owner}[*]{param[len(name):]}" if param == name or param.startswith(name + ".") else param for param in element.params)
        return element.but(params=params)

    ev_GeneratorExp = ev_SetComp = ev_ListComp

    def ev_DictComp(self, node):
        saved = self.scope
        self.scope = Scope(node, "<comprehension>", saved, function=saved.function)
        try:
            for generator in node.generators:
                self.assign(generator.target, None, None)
                self.ev(generator.iter)
            self.ev(node.key)
            self.ev(node.value)
        finally:
            self.scope = saved
        return None

    def ev_Lambda(self, node):
        # bodies of lambdas are not analysed (their provenance is unknown); only a factory subscripted there is noted,
        # which needs no provenance (`default_factory=lambda: torch.tensor[...]`)
        self._factory_subscripts_in(node)
        return None

    def _factory_subscripts_in(self, node) -> None:
        """Note the factories subscripted in code the walk does not evaluate (a lambda; a class body's statements but
        its methods, walked as functions), but where a lambda's parameter shadows the name."""
        bound, stack = set(), [node]
        while stack:
            inner = stack.pop()
            kind = type(inner)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                stack.extend(inner.decorator_list)
                continue
            if kind is ast.AnnAssign:  # (an annotation may never be evaluated: `from __future__ import annotations`)
                stack.extend(v for v in (inner.target, inner.value) if v is not None)
                continue
            if kind is ast.Lambda:
                bound.update(a.arg for a in (*inner.args.posonlyargs, *inner.args.args, *inner.args.kwonlyargs))
                bound.update(a.arg for a in (inner.args.vararg, inner.args.kwarg) if a is not None)
            elif kind is ast.Subscript and type(inner.ctx) is ast.Load:
                root = inner.value
                while type(root) is ast.Attribute:
                    root = root.value
                if type(root) is ast.Name and root.id not in bound:
                    self._factory_subscript(inner)
            stack.extend(ast.iter_child_nodes(inner))

    def _factory_subscript(self, node) -> None:
        """`torch.tensor[...]`: a factory subscripted instead of called (noted once, whatever the walks of its code)."""
        qualname = self.imports.qualname(node.value)
        if qualname and qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in api.TENSOR_FACTORIES \
                and not any(seen is node for seen, _ in self.model.torch_subscripts):
            self.model.torch_subscripts.append((node, qualname))

    def ev_IfExp(self, node):
        self.ev(node.test)
        taken = self._known_test(node.test)
        body, orelse = self.ev(node.body), self.ev(node.orelse)
        if taken is not None:
            return body if taken else orelse  # `self.eps if eps is None else eps`, eps left at its None default
        return merge(body, orelse) or _cut_or_number(body, orelse)

    def _known_test(self, test) -> bool | None:
        """Whether an `if` takes its body, where a walk for one call site knows: a None test (_none_test), or a flag this
        call passes or leaves at its default as a `True`/`False` literal, tested as `flag` or `not flag` (`if backward:
        loss.backward()`), and not bound again since (the walk's binding of the name is that literal's, outside loops)."""
        taken = self._none_test(test)
        if taken is None and self.via is not None and self.loop is None:
            taken = self._type_test(test)
        if taken is None and self.via is not None and type(test) is ast.Compare:
            return self._text_test(test)  # (a string kept on `self` by the constructor: no loop of the body rebinds it)
        negated = False
        while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, negated = test.operand, not negated
        if taken is None and type(test) is ast.Attribute:
            return self._flag_test(test, negated)
        if taken is not None or self.via is None or self.loop is not None:
            return taken
        if type(test) is not ast.Name:
            return None
        known = self.scope.bindings.get(test.id)  # (this body's own name: a parameter, or a local bound to a literal)
        if known is None or known.kind is not Kind.NUMBER or known.truth is None:
            return None
        return known.truth is not negated

    def _flag_test(self, test: ast.Attribute, negated: bool) -> bool | None:
        """`if self.flag:` / `if not self.flag:` on a `True`/`False` literal that __init__ keeps on `self` and nothing in
        the module assigns again: whether the body runs (the walk of every instance, as _text_test's strings)."""
        function = self.function
        cls = function.cls if function is not None else None
        if cls is None or type(test.value) is not ast.Name or test.value.id != "self":
            return None
        stmt = cls.attribute_nodes.get(test.attr)
        literal = type(stmt) is ast.Assign and type(stmt.value) is ast.Constant and type(stmt.value.value) is bool
        # (or a comparison of strings, `self.inplace = act not in KEEPS_OUTPUT`, which the constructor's walk decided)
        compared = type(stmt) is ast.Assign and type(stmt.value) is ast.Compare
        if not (literal or compared) or self.model.attribute_stores(test.attr) != 1:  # (the pass over the tree last: most flags are no literal)
            return None
        known = self.prov_of(test)
        if known is None or known.kind is not Kind.NUMBER or known.truth is None or literal and known.truth is not stmt.value.value:
            return None
        return known.truth is not negated

    def _type_test(self, test) -> bool | None:
        """`type(n) is int` / `isinstance(n, float)` (or `is not`) of a name holding a number (not a bool) or a tensor in
        a walk for one call site: whether it holds (`if type(category) is int: category = [category] * n`)."""
        if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in (ast.Is, ast.IsNot) \
                and type(test.left) is ast.Call and type(test.left.func) is ast.Name and test.left.func.id == "type" and len(test.left.args) == 1:
            name, kind, negated = test.left.args[0], test.comparators[0], type(test.ops[0]) is ast.IsNot
        elif type(test) is ast.Call and type(test.func) is ast.Name and test.func.id == "isinstance" and len(test.args) == 2:
            name, kind, negated = test.args[0], test.args[1], False
        else:
            return None
        if type(name) is not ast.Name or type(kind) is not ast.Name or kind.id not in ("int", "float") or not self._builtin(kind) \
                or not self._builtin(test.left.func if type(test) is ast.Compare else test.func):
            return None
        known = self.lookup(name.id)
        if known is None or known.origin == "param" or known.kind not in (Kind.NUMBER, Kind.TENSOR) or known.truth is not None:
            return None
        if known.kind is Kind.TENSOR:
            return negated
        if known.dtype not in (api.INT, api.FLOAT):
            return None
        return ((known.dtype == api.INT) is (kind.id == "int")) is not negated

    def _text_test(self, test: ast.Compare) -> bool | None:
        """`self.mode == "byol"` / `!=`, of a short string this call's instance is known to hold (a constructor's argument
        kept on `self`): whether the test holds."""
        if type(test.left) is not ast.Attribute or type(test.left.value) is not ast.Name or test.left.value.id != "self" or len(test.ops) != 1 or type(test.ops[0]) not in (ast.Eq, ast.NotEq) or type(test.comparators[0]) is not ast.Constant \
                or not isinstance(test.comparators[0].value, str):
            return None
        found = _text_comparison(test, [self.prov_of(test.left), Provenance(Kind.TEXT, 0, text=test.comparators[0].value)])
        return None if found is None else found.truth

    def _none_test(self, test) -> bool | None:
        """In a walk for one call site: `name is None` / `name is not None` on a parameter this call left at its None
        default and the body has not assigned before this statement (outside loops), or on a name holding a tensor or
        module this call passed or the body made: whether the test holds. None where it is not known."""
        function = self.function
        if self.via is None or function is None or not (type(test) is ast.Compare and len(test.ops) == 1 and type(test.left) is ast.Name
                                                        and type(test.ops[0]) in (ast.Is, ast.IsNot) and type(test.comparators[0]) is ast.Constant
                                                        and test.comparators[0].value is None):
            return None
        name = test.left.id
        if self.loop is not None:
            return None
        known = self.lookup(name)
        if known is not None and known.kind in _NEVER_NONE and known.origin != "param" and not known.param_deps:
            return type(test.ops[0]) is ast.IsNot  # (in a walk for one call: a tensor this call passes, or one made here)
        if known is not None and known.kind is Kind.SEQUENCE and type(known.node) in (ast.BinOp, ast.List, ast.Tuple):
            return type(test.ops[0]) is ast.IsNot  # (a list the body displayed: `[category] * n`)
        left = function.__dict__.get("left_none")
        if not left or name not in left:
            return None
        if self.scope.bindings.get(name, _UNSET) is not None:
            return None
        stored = _first_stores(function.node).get(name)
        if stored is not None and stored < self.stmt.lineno:
            return None
        return type(test.ops[0]) is ast.Is

    def _known_none(self, name: str) -> bool:
        """`name` holds None in this walk for one call: a parameter the call left at its None default, not bound since."""
        test = ast.Compare(left=ast.Name(id=name, ctx=ast.Load()), ops=[ast.Is()], comparators=[ast.Constant(value=None)])
        return self._none_test(test) is True

    def _none_keywords(self, node: ast.Call, bound: dict) -> frozenset:
        """The parameters a call gives, by keyword, a value known to be None in this walk: a parameter left at its None
        default (_known_none), or `self.<attr>` of an instance whose construction left that attribute None."""
        if self.via is None or not node.keywords:
            return frozenset()
        found = set()
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg is None or keyword.arg not in bound:
                continue
            if type(value) is ast.Name and self._known_none(value.id):
                found.add(keyword.arg)
            elif type(value) is ast.Attribute and type(value.value) is ast.Name and value.value.id == "self":
                owner = self.lookup("self")
                cls = owner.module_class if owner is not None and owner.kind is Kind.MODULE and owner.node is not None else None
                if isinstance(cls, ClassInfo) and value.attr in cls.__dict__.get("none_attributes", {}).get(id(owner.node), ()) \
                        and value.attr not in self._stored_after_construction(cls, owner):
                    found.add(keyword.arg)
        return frozenset(found)

    def ev_NamedExpr(self, node):
        prov = self.ev(node.value)
        self.assign(node.target, node.value, prov)
        return prov

    def ev_Starred(self, node):
        return self.ev(node.value, usage="arg")

    def ev_UnaryOp(self, node):
        operand = self.ev(node.operand, usage="operand")
        if isinstance(node.op, ast.Not):
            return None
        if operand is None or operand.kind not in (Kind.TENSOR, Kind.NUMBER):
            return None
        if operand.kind is Kind.NUMBER:
            if operand.value is not None and not isinstance(node.op, ast.UAdd):
                # `-n`, `~n`: not n's integer (nor its range counter)
                value = -operand.value if isinstance(node.op, ast.USub) else None
                return operand.but(value=value, counter=None, truth=None)
            return operand
        return self.combine(node, [(operand, node.operand)])

    def ev_BinOp(self, node):
        left = self.ev(node.left, usage="operand")
        right = self.ev(node.right, usage="operand")
        if isinstance(node.op, ast.Add) and left is not None and right is not None and left.kind is Kind.PARAMS and right.kind is Kind.PARAMS:
            # `list(G.parameters()) + list(E.parameters())`: one optimizer over both (known only when both are)
            both = left.params | right.params if left.params and right.params else frozenset()
            return Provenance(Kind.PARAMS, node.lineno, origin=left.origin, params=both, node=node)
        if isinstance(node.op, ast.Add) and left is not None and right is not None and left.kind is Kind.SEQUENCE \
                and right.kind is Kind.SEQUENCE and left.origin == _TUPLE and right.origin == _TUPLE:
            # `(loss,) + outputs` (transformers' `return ((loss,) + output)`): the elements of both, in order
            return Provenance(Kind.SEQUENCE, node.lineno, elements=left.elements + right.elements, origin=_TUPLE)
        if isinstance(node.op, ast.Mult) and left is not None and right is not None and {left.kind, right.kind} == {Kind.SEQUENCE, Kind.NUMBER}:
            items = left if left.kind is Kind.SEQUENCE else right
            if type(node.left if items is left else node.right) is ast.List and items.elements \
                    and all(element is not None and element.kind is Kind.NUMBER for element in items.elements):
                # `[category] * n`: a list of n of these numbers, all alike where it has one
                return Provenance(Kind.SEQUENCE, node.lineno, elements=items.elements, origin=_EACH if len(items.elements) == 1 else "", node=node)
        result = self.combine(node, [(left, node.left), (right, node.right)], binop=node.op)
        if result is not None and result.requires_grad and isinstance(node.op, (ast.Mult, ast.Div, ast.Pow, ast.MatMult)):
            self._mark_saved([node.left, node.right], api.operator_op(node.op), node)
        return result

    def ev_BoolOp(self, node):
        for value in node.values:
            self.ev(value)
        return None

    def ev_Compare(self, node):
        provs = [self.ev(node.left, usage="operand")] + [self.ev(c, usage="operand") for c in node.comparators]
        if not any(p is not None and p.kind is Kind.TENSOR for p in provs):
            return _text_comparison(node, provs)
        if any(type(op) in (ast.Is, ast.IsNot, ast.In, ast.NotIn) for op in node.ops):
            return None  # (a Python bool, never elementwise: `pred is not None`, `2.0 in t` is Tensor.__contains__)
        graphs = [p for p in provs if p is not None and p.kind is Kind.TENSOR]
        carriers = [p for p in graphs if p.requires_grad or p.composed_from or p.nondiff or (p.param_deps and p.requires_grad is None)]
        cut = carriers[0].nondiff if carriers and all(p.nondiff for p in carriers) else ("comparison" if carriers else None)
        if cut is not None:
            self._note_cut()
        return Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=False, dtype=api.INT, origin="comparison",
                          nondiff=cut, param_deps=(deps := frozenset().union(*(p.param_deps for p in graphs))), cut_deps=deps,
                          composed_from=frozenset().union(*(p.composed_from for p in graphs)), no_grad=self.no_grad,
                          loop=self.loop, epoch=self.epoch, node=node, shape=_broadcast_shape(zip(provs, provs)),
                          scalar=all(p.scalar for p in graphs) or (False if any(p.scalar is False for p in graphs) else None))

    def ev_Subscript(self, node):
        base = self.ev(node.value, usage="receiver", callee="[]")
        picked = self.ev(node.slice)
        if base is None and type(node.value) is ast.Attribute and node.value.attr == "shape":
            of = self.prov_of(node.value.value)
            found = _dim_size(of, _number(node.slice))  # `x.shape[0]`
            if found is None and of is not None and of.kind is Kind.TENSOR and type(_number(node.slice)) is int:
                return Provenance(Kind.NUMBER, node.lineno, dtype=api.INT)  # (an int of unknown value, as `x.size(0)`)
            return found
        if base is None:
            self._factory_subscript(node)
            return None
        if base.kind is Kind.MODULE:  # model.layers[i], model.layers[-1]: a layer of a container, when known
            name = (label(node.value) or "").rsplit(".", 1)[-1]
            changes = self._item_changes().get(name)
            index = _number(node.slice)
            ahead = isinstance(index, int) and index >= 0
            if changes and (not changes <= (_FOLLOWED_OR_PASSED if ahead else _FOLLOWED_CHANGES)
                            or not ahead and any(id(call) not in base.grown and self._may_change_here(call, node.value)
                                                 for call in self._item_changes().grown_by(name))):
                # (`self.acts[-1] = nn.Identity()`, `self.acts.insert(0, m)`: which layer is where, not known; given to a
                # call, `add_head(self.body)`, it may end in another layer, its first ones stay; appended to where the
                # walk of what it reads did not go, `def add_task(self): self.heads.append(...)`, it may end in another)
                return None
            if isinstance(index, int) and -len(base.elements) <= index < len(base.elements):
                return base.elements[index]
            if index is not None or type(node.slice) in (ast.Constant, ast.Slice, ast.Tuple):
                return None  # (out of range, a ModuleDict's key, a slice: a container of its own)
            return self._element_of(base, node)  # `self.layers[i]`, `self.lateral[self.level]`: the layer they all are, if one
        if base.kind is Kind.MAPPING:
            key = self.prov_of(node.slice) if type(node.slice) is ast.Name else None
            classes = any(v is not None and v.origin == "class" for v in base.elements)
            if classes and self._item_changes().get((label(node.value) or "").rsplit(".", 1)[-1]):
                return None  # (a registry of layer classes changed or given away anywhere: which class a key holds, not known)
            if key is not None and key.kind is Kind.TEXT:  # (`ACTIVATIONS[act]` of an `act` known to be "sigmoid")
                return _value_of(base, ast.Constant(key.text))
            if type(node.slice) is ast.Name and classes:
                self._note_configured(node.slice)  # (a layer class picked by a parameter: each call's string picks it)
            return _value_of(base, node.slice)
        if base.kind is Kind.SEQUENCE:
            return _item_of(base, node.slice)
        if base.kind is not Kind.TENSOR:
            return None
        index = _const(node.slice)
        if isinstance(index, int) and isinstance(node.value, ast.Call):
            indices = self._integer_outputs(node.value, base, None)
            if indices and index in indices:  # `x.max(1)[1]`
                return self._indices(node)
        shape, several = self._index_shape(base, node.slice)
        if not several and _index_tensor(picked):  # `table[steps]`: one element per index at least
            several = picked.scalar is False
            shape = picked.shape + base.shape[1:] if picked.shape is not None and base.shape else None
        result = self.derive(node, base, [(base, node.value)], scalar=False if several else None, shape=shape)
        return self._view(result, base) if syntax.basic_index(node.slice) else result  # w[0], w[:, 1]; not w[mask]

    def ev_Attribute(self, node):
        owner = self.ev(node.value, usage="receiver", callee="." + node.attr)
        attr = node.attr
        if owner is not None and owner.kind is Kind.MODULE:
            return self._module_attribute(node, owner)
        if owner is not None and owner.kind is Kind.TEXT and attr == "value":
            return owner  # `config.reduction.value` of an Enum member known by its value (`Reduction("none")`)
        if owner is None and type(node.value) is ast.Name and not self.is_bound(node.value.id):
            cls = self.lookup_def(node.value.id)
            if isinstance(cls, ClassInfo) and not cls.is_module and not _is_enum(cls):
                found = _class_constant(cls, attr, node.lineno)  # `Config.reduction` read on the class itself
                if found is not None and found.kind is Kind.TEXT:
                    return found
        name = label(node)
        if name is not None and self.is_bound(name):
            return self.lookup(name)
        if owner is None and attr in _MATH_CONSTANTS and type(node.value) is ast.Name and self.imports.qualname(node) == "math." + attr:
            return Provenance(Kind.NUMBER, node.lineno, dtype=api.FLOAT)  # (the math module's constants)
        if owner is None and attr[:1].isupper() and api.is_layer(attr) and self.imports.qualname(node) == "torch.nn." + attr:
            # `nn.Sigmoid` named, not called (`{"sigmoid": nn.Sigmoid}`, `act=nn.Tanh`): the class, called later
            return Provenance(Kind.FUNCTION, node.lineno, module_class="torch.nn." + attr, origin="class", node=node)
        if attr == "data" or "grad" in attr or api.misspells_requires_grad(attr):
            self.emit(AttrLoadEvent(node, self.ctx(), attr=attr, receiver=node.value, prov=owner))
        if owner is None or owner.kind is not Kind.TENSOR:
            return None
        if attr == "data":
            # (no `base`: `w[0].data` is a detached tensor of its own, whose in-place change autograd never sees)
            return owner.but(leaf=True, requires_grad=False, data_of=label(node.value) or owner.origin, detached=True, cut_deps=owner.param_deps,
                             composed_from=frozenset(), graph=frozenset(), node=node, line=node.lineno, base=None)
        if attr == "grad":
            return Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=False, dtype=owner.dtype, origin="grad", node=node)
        if isinstance(node.value, ast.Call):  # `x.max(1).indices`: a field of an op's named tuple
            indices = self._integer_outputs(node.value, owner, None)
            if indices:
                position = api.output_position(self._tuple_op(node.value), attr)
                if position is not None:
                    return self._indices(node) if position in indices else owner.but(scalar=None, shape=None, node=node, line=node.lineno)
        if uses.attribute(attr) == uses.VIEW:  # .T, .mT, .real
            return self._view(self.derive(node, owner, [(owner, node.value)], shape=None), owner)  # (.T reverses the dims)
        return None

    def _local(self, func: ast.expr) -> bool:
        """The name a dotted call starts at is bound in a function scope (a local shadowing an import)."""
        start = syntax.head(func)
        if start is None:
            return False
        scope = self.scope
        while scope is not None and scope is not self.module_scope:
            if start.id in scope.bindings:
                return True
            scope = scope.parent
        return False

    def is_bound(self, name: str) -> bool:
        scope = self.scope
        while scope is not None:
            if name in scope.bindings:
                return True
            scope = scope.parent
        return False

    def _module_attribute(self, node: ast.Attribute, owner: Provenance) -> Provenance | None:
        name = label(node)
        if name is not None and self.is_bound(name):
            return self.lookup(name)
        cls = owner.module_class
        if isinstance(cls, ClassInfo):
            # who read what of which class's tables (analysis/rewalk.py walks them again when an edit changes it)
            read = (id(cls), node.attr)
            if self.classes_read is not None:
                self.classes_read.add(read)
            reader = self.function
            if reader is None:
                self.module_reads.add(read)
            else:
                reads = reader.__dict__.get("reads_classes")
                if reads is None:
                    reads = reader.reads_classes = set()  # type: ignore[attr-defined]
                reads.add(read)
            self.ensure_class_init(cls)
            if not self._summarised(cls.methods.get("__init__")):
                return None
            instance = owner if owner.origin != "self" else None
            # (asked only where a construction's table holds the attribute: else the answer is the same either way)
            constructed = instance is None or instance.node is None or not (
                node.attr in cls.constructed or node.attr in cls.instances.get(id(instance.node), ())) \
                or node.attr not in self._stored_after_construction(cls, instance)
            found = cls.attribute(node.attr, instance, constructed)
            if found is None:
                found = self._late_attribute(cls, node.attr)
            if found is None and not any(node.attr in table for table in (cls.attributes, cls.constructed, cls.late)):
                found = _class_constant(cls, node.attr, node.lineno)  # `cfg.network.bins`: a plain config class's number
            if found is None and cls.bases:
                # set by a base class's __init__ that this class's construction runs (none of its own methods sets it)
                for base in cls.bases:
                    # (of an instance: what the base's __init__ set for it, walked from `super().__init__(...)`)
                    found = self._module_attribute(node, owner.but(module_class=base) if owner.origin != "self" and owner.node is not None
                                                   else Provenance(Kind.MODULE, node.lineno, module_class=base, origin="self"))
                    if found is not None:
                        return found if _inherits_attribute(cls, node.attr) else None
            if found is None and cls.torch_layer is not None and node.attr in api.layer_parameters(cls.torch_layer) \
                    and _inherits_attribute(cls, node.attr):
                return Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=True, dtype=api.FLOAT,
                                  origin=f"torch.nn.{cls.torch_layer}.{node.attr}", node=node)
            init = cls.methods.get("__init__")
            if found is not None and found.param_deps and found.kind is not Kind.MODULE and (owner.origin == "self" or (
                    found is cls.attributes.get(node.attr) and reader is not None and (reader.context_of or reader) is not init)):
                # `self.scale` set from __init__'s parameter (or a constructing caller's): those parameters are not this
                # method's, so what the value depends on is not something this method's callers pass (nor, for the
                # symbolic __init__'s, a method walked for one call on an instance: `criterion(pred, mask)`)
                left = _left_at_default(init, found, owner.node) if owner.origin != "self" and constructed else None
                found = left if left is not None else found.but(param_deps=frozenset(), cut_deps=frozenset())
            return found
        if isinstance(cls, str) and node.attr in (api.layer_parameters(cls.rsplit(".", 1)[-1]) or api.PARAMETER_NAMES):
            return Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=True, dtype=api.FLOAT, origin=f"{cls}.{node.attr}", node=node)
        return None

    def _stored_after_construction(self, cls: ClassInfo, instance: Provenance | None) -> frozenset:
        """The attributes of `cls` stored again once `instance` is built: on a name it is bound to (`crit.gate = None`),
        or by a method called on that name (`crit.soften()` setting `self.gate = None`). What its construction gave them
        is then no fact of the instance (an option switched off later)."""
        if instance is None or instance.node is None:
            return frozenset()  # (`self.<attr>` inside a method: most reads, and no pass over the tree for them)
        tree = self.model.tree
        cached = self.__dict__.get("_later_stores")
        if cached is None or cached[0] is not tree:
            _, _, stores, calls, bound = self.model.attribute_facts()
            cached = self._later_stores = (tree, {}, stores, calls, bound)
        _, memo, stores, calls, bound = cached
        key = (id(cls), id(instance.node))
        found = memo.get(key)
        if found is None:
            later = set()
            for name in bound.get(key[1], ()):
                later |= stores.get(name, set())
                for method in calls.get(name, ()):  # (only the methods called on it: their stores on self)
                    info = cls.methods.get(method)
                    if info is not None and method != "__init__":
                        later |= _self_names(info.node, stores_only=True)
            found = memo[key] = frozenset(later & _stored_names(cls))
        return found

    def _late_attribute(self, cls: ClassInfo, attr: str) -> Provenance | None:
        """`self.<attr>` that __init__ leaves unset or None, set by another method (`setup()` building `self.opt`):
        walk those methods first."""
        if attr in cls.late or self.summary_only:
            return cls.late.get(attr)  # (another module's class: only the methods a caller needed are walked)
        if attr in cls.attributes:
            stmt = cls.attribute_nodes.get(attr)
            if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is None):
                return None  # __init__ sets it to something unknown: no other method's value is more certain
        if cls.setters is None:
            cls.setters = {}
            for method in cls.methods.values():
                if method.name == "__init__":
                    continue
                for name in setter_attributes(method.node):
                    cls.setters.setdefault(name, []).append(method)
        for method in cls.setters.get(attr, ()):
            if not method.walked and not method.walking:
                self.walk_function(method)
        return cls.late.get(attr)

    # -- calls ---------------------------------------------------------------------------------------
    def ev_Call(self, node: ast.Call):
        func = node.func
        qualname = self.imports.qualname(func)
        if qualname is not None and self.scope is not self.module_scope and self._local(func):
            qualname = None  # `ones = torch.ones_like(a); ones.view(...)` in a function importing `ones`: the local
        if qualname is None and isinstance(func, ast.Name) and self.function_aliases:
            qualname = self._function_alias(func.id)
        method = func.attr if isinstance(func, ast.Attribute) and qualname is None else None
        callee = qualname or method or (func.id if isinstance(func, ast.Name) else None)
        receiver = func.value if method is not None else None
        receiver_prov = self.ev(receiver, usage="receiver", callee=method) if receiver is not None else None
        func_prov = None
        if receiver is None and not isinstance(func, ast.Name) and qualname is None:
            func_prov = self.ev(func)
        elif isinstance(func, ast.Name) and qualname is None:
            func_prov = self.lookup(func.id)
        short = (callee or "").rsplit(".", 1)[-1]
        arg_usage = "other" if uses.is_reporter(short) else "arg"
        arg_provs = [self.ev(arg, usage=arg_usage, callee=callee) for arg in node.args]
        for index, arg in enumerate(node.args):
            if arg_provs[index] is None and type(arg) in (ast.Name, ast.Lambda):
                arg_provs[index] = self._function_value(arg)
        keyword_provs = {}
        spread = None  # `**mapping` arguments: all of known keys (True), not (False), none (None)
        for keyword in node.keywords:
            prov = self.ev(keyword.value, usage=arg_usage, callee=callee)
            if prov is None and type(keyword.value) in (ast.Name, ast.Lambda):
                prov = self._function_value(keyword.value)
            if keyword.arg is not None:
                keyword_provs[keyword.arg] = prov
            elif prov is not None and prov.kind is Kind.MAPPING and prov.keys and None not in prov.keys:
                spread = spread if spread is not None else True
                keyword_provs.update(zip(prov.keys, prov.elements))  # `model(**batch)` of a dict whose keys are known
            else:
                spread = False  # (an unknown `**options`: which parameters it fills is not known)
        if spread:
            keyword_provs = callsite.Expanded(keyword_provs)
        self._keywords = keyword_provs  # for the user-function calls below (call_in_context)
        event = CallEvent(node, self.ctx(), qualname=qualname, method=method, receiver=receiver, receiver_prov=receiver_prov)
        result = None
        if qualname is not None and self.imports.is_torch(qualname):
            result = self.torch_call(node, qualname, arg_provs)
            if qualname in ("torch.autograd.backward",):
                event.role = "backward"
        elif qualname in CHAINS:
            result = self._chained_params(node, arg_provs)
        elif qualname is not None and qualname.startswith("math."):
            result = Provenance(Kind.NUMBER, node.lineno)  # (the math module's functions: a Python number, int or float)
        elif method == "__init__" and self._sequential_base_init(receiver):
            # `class MLP(nn.Sequential)` whose __init__ runs `super().__init__(*layers)`: its layers, as nn.Sequential's
            self._store_self_attribute(SEQUENTIAL_LAYERS, self.torch_call(node, "torch.nn.Sequential", arg_provs), self.ctx().statement)
        elif method is not None:
            result = self.method_call(node, event, method, receiver, receiver_prov, arg_provs)
        elif func_prov is not None and func_prov.kind is Kind.MODULE:
            result = self.forward(node, func_prov, arg_provs, event)
        elif func_prov is not None and func_prov.kind is Kind.FUNCTION:
            result = self.call_value(node, func_prov, arg_provs, event)
        elif isinstance(func, ast.Name):
            if func_prov is not None and func_prov.origin == "param":
                self._note_configured(func)  # (`loss_function(pred, y)` of a parameter: what each call passes decides it)
            result = self.local_call(node, func.id, arg_provs, event)
        elif qualname is not None and self.resolver is not None:
            result = self.external_call(node, func, qualname, arg_provs, event)
        event.result = result
        self.emit(event)
        if event.role is not None or event.function is not None:
            self._note_role(event)
        self._note_mapping_changes(node, qualname, method, receiver, receiver_prov)
        return result

    def _sequential_base_init(self, receiver: ast.expr | None) -> bool:
        """`super().__init__(...)` in the `__init__` of a class derived from nn.Sequential."""
        function = self.function
        if not (type(receiver) is ast.Call and type(receiver.func) is ast.Name and receiver.func.id == "super"
                and function is not None and function.name == "__init__" and function.cls is not None):
            return False
        return any(self.imports.qualname(base) == "torch.nn.Sequential" for base in function.cls.node.bases)

    def _note_mapping_changes(self, node: ast.Call, qualname, method, receiver, receiver_prov):
        """`cfg.update(...)`, or `apply(cfg)` (a call that may store into it): its values are no longer the display's."""
        if method in _DICT_MUTATORS and label(receiver) is not None and receiver_prov is not None and receiver_prov.kind is Kind.MAPPING:
            self._forget_values(receiver)
        if qualname is not None and (self.imports.is_torch(qualname) or qualname.startswith("math.")) \
                or type(node.func) is ast.Name and node.func.id in _PURE_BUILTINS and self.lookup_def(node.func.id) is None \
                or receiver_prov is not None and receiver_prov.kind in _PLAIN_VALUES:
            return  # (torch, a builtin, a list's or a tensor's method: none stores into a dict it is given)
        for arg in [*node.args, *(keyword.value for keyword in node.keywords if keyword.arg is not None)]:
            if type(arg) in (ast.Name, ast.Attribute):
                self._forget_values(arg)

    def _forget_values(self, node: ast.expr):
        """The dict `node` names, and every other name of this scope bound to the same display, hold unknown values."""
        name = label(node)
        if name is None:
            return
        scope = self.scope  # (one search of the scopes: called for every name passed to a call)
        while scope is not None:
            if name in scope.bindings:
                prov = scope.bindings[name]
                break
            scope = scope.parent
        else:
            return
        if prov is None or prov.kind is not Kind.MAPPING or not (prov.elements or prov.keys):
            return
        shared = [other for other, value in self.scope.bindings.items() if value is not None and value.kind is Kind.MAPPING
                  and value.node is prov.node and prov.node is not None and (value.elements or value.keys)]
        for other in {name, *shared}:
            self.update(other, (self.lookup(other) or prov).but(elements=(), keys=()))

    def _note_role(self, event: CallEvent):
        function = event.function
        backward = event.role == "backward" or (function is not None and function.calls_backward)
        step = event.role == "step" or (function is not None and function.calls_step)
        zero = event.role == "zero_grad" or (function is not None and function.calls_zero_grad)
        if event.role == "step":
            self.epoch += 1
        loop = self.loop
        while loop is not None:
            if event.role == "backward":
                loop.backwards.append(event)
            elif event.role == "step":
                loop.steps.append(event)
            elif event.role == "zero_grad":
                loop.zero_grads.append(event)
            elif event.role == "forward":
                loop.forwards.append(event)
            if function is not None:
                loop.calls_backward_indirectly |= function.calls_backward
                loop.calls_step_indirectly |= function.calls_step
                loop.zero_grad_indirectly |= function.calls_zero_grad
            loop = loop.parent
        if self.function is not None:
            self.function.calls_backward |= backward
            self.function.calls_step |= step
            self.function.calls_zero_grad |= zero

    def _function_value(self, node: ast.expr) -> Provenance | None:
        """A def of this module named as a value (`Operator(model, objective=unit_objective)`), or a lambda written
        there: a FUNCTION provenance, for the body that calls it (`self.objective(x)`)."""
        if type(node) is ast.Lambda:
            return Provenance(Kind.FUNCTION, node.lineno, module_class=node, origin="lambda", node=node)
        found = self.lookup_def(node.id)
        if not isinstance(found, FunctionInfo) or found.cls is not None or found.owner is not self:
            return None
        return Provenance(Kind.FUNCTION, node.lineno, module_class=found, origin=found.name, node=node)

    def call_value(self, node: ast.Call, function: Provenance, arg_provs, event) -> Provenance | None:
        """A call of a FUNCTION value: a def's (its summary, or its body walked with these arguments), or a lambda's
        body evaluated with them, in the module's scope (its names are the module's: a default's or an argument's
        lambda written at module level)."""
        target = function.module_class
        if isinstance(target, FunctionInfo):
            return self.call_function(target, node, arg_provs, event)
        if isinstance(target, str) and function.origin == "class":
            return self.torch_call(node, target, arg_provs)  # `loss_class(reduction=...)` of `getattr(torch.nn, name)`
        self._keywords = None
        if not isinstance(target, ast.Lambda) or node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args) \
                or self.context_depth >= callsite.MAX_DEPTH:
            return None
        args = target.args
        positional = [*args.posonlyargs, *args.args]
        if len(arg_provs) > len(positional) or args.vararg is not None or args.kwarg is not None or args.kwonlyargs:
            return None
        scope = Scope(target, "<lambda>", self.module_scope, function=self.function)
        scope.bindings.update({arg.arg: None for arg in positional})
        scope.bindings.update({arg.arg: prov for arg, prov in zip(positional, arg_provs)})
        saved, depth = self.scope, self.context_depth
        self.scope, self.context_depth = scope, depth + 1
        try:
            return self.ev(target.body)
        finally:
            self.scope, self.context_depth = saved, depth

    def _note_configured(self, expr: ast.expr | None):
        """A layer's class or a loss's reduction read from a parameter (`config.loss`, `cfg.reduction`): the body is
        worth walking with what each call passes (FunctionInfo.configured_by_arguments)."""
        function, start = self.function, syntax.head(expr) if expr is not None else None
        if function is None or self.via is not None or start is None or isinstance(function.node, ast.Lambda):
            return
        args = function.node.args
        if any(arg.arg == start.id for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]):
            function.configured_by_arguments = True  # type: ignore[attr-defined]

    def _names_enum(self, name: str) -> bool:
        definition = self.lookup_def(name)
        return isinstance(definition, ClassInfo) and _is_enum(definition)

    def _torch_class(self, node: ast.Call, name: Provenance | None) -> Provenance | None:
        """`getattr(torch.nn, "MSELoss")` of a known name of a torch.nn class: that class, called later."""
        if self.imports.qualname(node.args[0]) != "torch.nn":
            return None
        if name is None or name.kind is not Kind.TEXT or not api.is_layer(name.text):
            self._note_configured(node.args[1])
            return None
        return Provenance(Kind.FUNCTION, node.lineno, module_class=f"torch.nn.{name.text}", origin="class", node=node)

    def local_call(self, node, name, arg_provs, event) -> Provenance | None:
        definition = self.lookup_def(name)
        if isinstance(definition, FunctionInfo):
            if not definition.walked:
                self._pass_modules(definition, node, arg_provs, self._keywords)
            return self.call_function(definition, node, arg_provs, event)
        if isinstance(definition, ClassInfo):
            if _is_enum(definition):
                # `Reduction("none")`: the member of that value, known by it (`.value` gives it back); a value no member
                # has (one `_missing_` maps) is not known
                value = arg_provs[0] if len(arg_provs) == 1 and not node.keywords else None
                return value if value is not None and value.kind is Kind.TEXT and value.text in _member_values(definition) else None
            return self.construct(definition, node, arg_provs, event)
        if name == "getattr" and len(node.args) == 2 and definition is None:
            owner = arg_provs[0]
            if owner is not None and owner.kind is Kind.MODULE and owner.origin == "self" and not node.keywords \
                    and (attr := syntax.attribute_name(node.args[1])) is not None:
                # `getattr(self, f"block{i}")`: the layer `self.add_module(f"block{i}", ...)` registered, read as an attribute
                return self._module_attribute(ast.Attribute(node.args[0], attr, ast.Load(), lineno=node.lineno, col_offset=node.col_offset,
                                                            end_lineno=node.end_lineno, end_col_offset=node.end_col_offset), owner)
            return self._torch_class(node, arg_provs[1])
        if name == "list" and arg_provs and arg_provs[0] is not None and arg_provs[0].kind is Kind.PARAMS:
            return arg_provs[0]
        if (name == "list" or name == "tuple") and len(arg_provs) == 1 and not node.keywords and arg_provs[0] is not None \
                and arg_provs[0].kind is Kind.SEQUENCE and arg_provs[0].elements:
            return Provenance(Kind.SEQUENCE, node.lineno, elements=arg_provs[0].elements, node=node)  # `list([w, b])`: the same elements
        if (name == "list" or name == "tuple") and len(arg_provs) == 1 and not node.keywords and arg_provs[0] is not None \
                and arg_provs[0].kind is Kind.SEQUENCE and arg_provs[0].graph:
            return Provenance(Kind.SEQUENCE, node.lineno, graph=arg_provs[0].graph, node=node)  # `tuple(outs)`: their graphs
        if name == "filter" and len(arg_provs) == 2 and arg_provs[1] is not None and arg_provs[1].kind is Kind.PARAMS:
            return arg_provs[1]  # `filter(lambda p: p.requires_grad, G.parameters())`: some of G's parameters, none else
        if name == "dict" and not node.args and node.keywords and all(kw.arg is not None for kw in node.keywords) \
                and isinstance(self._keywords, dict):
            # `dict(token_ids=ids, labels=y)`: a dict display by another name
            keys = tuple(kw.arg for kw in node.keywords)
            return Provenance(Kind.MAPPING, node.lineno, elements=tuple(self._keywords.get(key) for key in keys), keys=keys, node=node)
        if (name == "zip" or name == "enumerate") and arg_provs and not node.keywords:
            # the loop over `zip(predictions, targets)` of a helper: each element pairs the elements of its parameters
            items = [self._element_of(prov, arg) for prov, arg in zip(arg_provs[:1] if name == "enumerate" else arg_provs, node.args)]
            if all(item is None for item in items):
                return None
            items = [_INT_NUMBER, *items] if name == "enumerate" else items
            return Provenance(Kind.SEQUENCE, node.lineno, elements=(Provenance(Kind.SEQUENCE, node.lineno, elements=tuple(items)),))
        if name == "sum" and len(arg_provs) == 1 and not node.keywords and arg_provs[0] is not None and arg_provs[0].kind is Kind.SEQUENCE \
                and self.lookup_def(name) is None:
            # `sum(losses)` of a list of tensors: their additions (the builtin starts from 0)
            items = [(item, node.args[0]) for item in flatten(arg_provs[0].elements)]
            return self.combine(node, items, binop=ast.Add()) if items else None
        if name == "float" or name == "int" or name == "len":
            return Provenance(Kind.NUMBER, node.lineno, dtype=api.FLOAT if name == "float" else api.INT)
        if self.resolver is not None and name in self.imports.names:
            return self.external_call(node, node.func, self.imports.names[name], arg_provs, event)
        star = self._star_imported(name) if self.resolver is not None and definition is None else None
        if star is not None:
            return self.external_call(node, node.func, star, arg_provs, event)
        return None

    def _star_imported(self, name: str) -> str | None:
        """The qualname of `name` when the module's last `from X import *` is of a workspace module and may bind it
        (`from common.value_networks import *` then `QNetwork(...)`); the resolver says whether X binds it. Another
        star import after it could bind the same name: then unknown."""
        stars = self.imports.stars
        if not stars or name.startswith("_") or hasattr(builtins, name):
            return None
        prefix = stars[-1]
        qualname = prefix + name if prefix.endswith(".") else f"{prefix}.{name}"
        return qualname if self._in_workspace(qualname) else None

    def external_call(self, node, func, qualname, arg_provs, event) -> Provenance | None:
        """A function or class from another module of the workspace, resolved through jedi."""
        if not self._in_workspace(qualname):
            return None  # library code: jedi is only asked about the user's own modules
        if not self._worth_resolving(node, qualname, arg_provs):
            return None
        definition = self.resolver.resolve(self.model.source, func, qualname=qualname)
        if definition is None:
            return None
        if isinstance(definition, FunctionInfo):
            return self.call_function(definition, node, arg_provs, event)
        if isinstance(definition, ClassInfo):
            return self.construct(definition, node, arg_provs, event)
        return None

    def call_function(self, info: FunctionInfo, node: ast.Call, arg_provs, event, receiver: Provenance | None = None) -> Provenance | None:
        """A call of a function of the workspace: its summary, or its body walked with what this call passes."""
        keywords, self._keywords = self._keywords, None
        if not info.walked:
            self._note_module_arguments(info, node, arg_provs, keywords, receiver is not None or info.cls is not None)
            self.walk_function(info)
        event.function = info
        self._passes_arguments(info, arg_provs, keywords)
        if info.__dict__.get("cuts_graph"):
            self._note_cut()  # (a helper's cut, `(x > cut).float()` under `if cut is not None:`, is its callers' to decide too)
        walked = self.call_in_context(info, node, arg_provs, keywords, receiver)
        if walked is _NOT_WALKED and receiver is None and info.cls is None:
            walked = self._layers_in_context(info, node, arg_provs, keywords)
        if walked is not _NOT_WALKED:
            return _no_graph_if(self.no_grad, walked)  # (a body walked for this call under no_grad: its result too)
        return _no_graph_if(self.no_grad, self.instantiate(info, node, arg_provs, node.args))

    def _layers_in_context(self, info: FunctionInfo, node: ast.Call, arg_provs, keyword_provs):
        """A helper that builds and returns torch.nn layers (`def double_conv(cin, cout): return nn.Sequential(
        nn.Conv2d(cin, cout, 3), ...)`), called with integers (`double_conv(16, 32)`, a name bound to one, `32 + 16`) or
        leaving integer defaults: its body walked again with those values, so its layers have the widths they are built
        with. Memoised by the values; quiet: the symbolic walk judges the body. _NOT_WALKED where the summary has to do."""
        if (not info.walked or info.walking or info.owner is not self or isinstance(info.node, ast.Lambda)
                or self.context_depth >= callsite.MAX_DEPTH or self.summary_only):
            return _NOT_WALKED
        ret = info.returns
        if ret is None or ret.kind is not Kind.MODULE or not isinstance(ret.module_class, str):
            return _NOT_WALKED
        integer = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
        values = [self._int_value(arg) for arg in node.args]
        keyword_values = {kw.arg: self._int_value(kw.value) for kw in node.keywords if kw.arg is not None}
        unknown = lambda v, prov: _int_number(v) if integer(v) else prov  # noqa: E731
        bound = callsite.bind_arguments(info.node, False, node, [unknown(v, p) for v, p in zip(values, arg_provs)],
                                        {name: unknown(keyword_values.get(name), prov) for name, prov in (keyword_provs or {}).items()})
        if bound is None:
            return _NOT_WALKED
        _bind_defaults(info.node, node, bound, False)  # `def block(cin, cout, k=3)` called without k
        if not any(prov is not None and prov.kind is Kind.NUMBER and prov.value is not None for prov in bound.values()):
            return _NOT_WALKED
        key = ("layers", id(info.node), tuple((name, callsite.facts(prov)) for name, prov in bound.items()))
        memo = self.memo
        if key not in memo:
            if self.context_walks >= callsite.MAX_WALKS:
                return _NOT_WALKED
            self.context_walks += 1
            memo[key] = None
            was_quiet, self.quiet = self.quiet, True
            began, shadows = self.seq, len(self.shadows)
            try:
                memo[key] = self.walk_in_context(info, bound, None, self.ctx(), self.context_depth + 1, None)
            finally:
                self.quiet = was_quiet
            self._note_context_walk(key, began, shadows)
        else:
            self._note_memo_read(key)
        found = memo[key]
        if found is None or found.kind is not Kind.MODULE or not isinstance(found.module_class, str):
            return _NOT_WALKED
        return found  # (the layers as built, their construction calls kept: their widths are read from them)

    def _note_module_arguments(self, info: FunctionInfo, node: ast.Call, arg_provs, keywords, method: bool):
        """The first call of a function, which walks its body: the parameters it is given a trainable module for
        (`train_single_scale(Discriminator(), Generator(), ...)`) are modules in its summary, so their calls are forwards."""
        if info.owner is not self or info.walking or isinstance(info.node, ast.Lambda):
            return
        bound = callsite.bind_arguments(info.node, method and not self._is_static(info.node), node, arg_provs, keywords or {})
        if not bound:
            return
        modules = {name for name, prov in bound.items() if prov is not None and prov.kind is Kind.MODULE and _trainable_module(prov)}
        if modules:
            info.module_arguments = modules  # type: ignore[attr-defined]

    def construct(self, cls: ClassInfo, node: ast.Call, arg_provs, event) -> Provenance | None:
        """`Model(w)`, `Trainer(model, opt)`: an instance of a user class, its __init__ walked with the arguments."""
        keywords, self._keywords = self._keywords, None
        if cls.__dict__.pop("pending_bases", False):
            # `class Net(BaseModel)` of `from models.base import BaseModel`, constructed here: its base's layers and
            # methods are its own (resolved only now: a library defines many such classes and constructs few)
            imported = self._workspace_bases(cls.node)
            cls.bases += imported
            cls.is_module = cls.is_module or any(base.is_module for base in imported)
        init = cls.methods.get("__init__")
        if init is not None and init.owner is not self:
            # another module's class: its __init__ is walked only when this call passes it something worth knowing
            if not callsite.worth_walking(init, [*arg_provs, *(keywords or {}).values()]) and not _switches_option(init, node, keywords or {}):
                return Provenance(Kind.MODULE, node.lineno, module_class=cls, origin=f"{cls.name}()", node=node)
        self.ensure_class_init(cls)
        instance = Provenance(Kind.MODULE, node.lineno, module_class=cls, origin=f"{cls.name}()", node=node)
        if init is None and _is_dataclass(cls) and not self.summary_only:
            fields = _dataclass_fields(cls, node, arg_provs, keywords, self._names_enum)
            if fields:
                cls.instances[id(node)] = fields  # `LossConfig(reduction="none")`: what `config.reduction` holds
        if init is not None:
            event.function = init
            self._passes_arguments(init, arg_provs, keywords)
            # (an __init__ building layers from its integer parameters is not walked again per construction: the
            # per-instance tables it made kept the server from walking again only an edited method, for no finding
            # on any evaluation set; a helper's layers are, below)
            self.call_in_context(init, node, arg_provs, keywords, instance)
        return instance

    def _passes_arguments(self, callee: FunctionInfo, arg_provs, keywords):
        function = self.function
        if function is not None and not function.uses_arguments and callee.uses_arguments:
            if any(p is not None and p.param_deps for p in flatten([*arg_provs, *(keywords or {}).values()])):
                function.uses_arguments = True  # hands its own parameters to a helper that changes or keeps them
        if function is not None and self.via is None and callee.__dict__.get("backpropagates") and not function.__dict__.get("backpropagates") \
                and any(p is not None and p.param_deps for p in flatten([*arg_provs, *(keywords or {}).values()])):
            function.backpropagates = True  # type: ignore[attr-defined]  # (hands its parameters to a body that backpropagates)
        if function is not None and self.via is None and callee.__dict__.get("backward_of_arguments") \
                and not function.__dict__.get("backward_of_arguments"):
            # (hands its parameters, or values it cannot tell apart from them, to one that backpropagates them)
            if any(p is None or p.param_deps for p in flatten([*arg_provs, *(keywords or {}).values()])):
                function.backward_of_arguments = True  # type: ignore[attr-defined]

    def _pass_modules(self, info: FunctionInfo, node: ast.Call, arg_provs, keywords):
        """The modules (a criterion, a model) handed to a plain function of this module named nowhere else: its only call,
        so its body is walked with them (`train(net, loader, nn.CrossEntropyLoss(reduction="none"))`): info.passed_modules."""
        if self.summary_only or info.owner is not self or info.cls is not None and not self._is_static(info.node) \
                or isinstance(info.node, ast.Lambda):
            return  # (a staticmethod, `Trainer.evaluate(net, loader, crit)` on its class, is a plain function)
        if not any(p is not None and (p.kind is Kind.MODULE and p.module_class is not None or _sized(p) or _modules_by_key(p))
                   for p in [*arg_provs, *(keywords or {}).values()]):
            return
        # named exactly twice in the code (its `def` and this call; a mention in a string makes us give up): no
        # other call, no use as a callback
        if (self.model.mentions(info.name), self.model.attribute_mentions(info.name) if info.cls is not None else 0) != \
                ((1, 1) if info.cls is not None else (2, 0)):
            return
        bound = callsite.bind_arguments(info.node, False, node, arg_provs, keywords or {})
        info.passed_modules = {name: prov for name, prov in (bound or {}).items()  # type: ignore[attr-defined]
                               if prov is not None and (prov.kind is Kind.MODULE and prov.module_class is not None or prov.origin == "DataLoader"
                                                        or _modules_by_key(prov))}
        # tensors known to have several elements: the parameter stays symbolic, with that one fact (for AG005)
        info.passed_sizes = {name for name, prov in (bound or {}).items() if _sized(prov) and prov.kind is Kind.TENSOR}  # type: ignore[attr-defined]

    def call_in_context(self, info: FunctionInfo, node: ast.Call, arg_provs, keyword_provs, receiver: Provenance | None,
                        own_summary: bool = True):
        """Walk `info`'s body with what this call passes, when that tells more than its symbolic summary: the helper's
        in-place ops and requires_grad changes are then judged at its own lines, in the caller's grad mode, and its
        return value is what it makes of these arguments. Memoised by the facts of the arguments and the grad mode.
        Returns _NOT_WALKED when the summary has to do."""
        keyword_provs = keyword_provs or {}
        if info.__dict__.get("sized_by_arguments", False) or callsite.keeps_dims(info):
            arg_provs, keyword_provs = self._valued(node, arg_provs, keyword_provs)
        passed = [*arg_provs, *keyword_provs.values()]
        if info.__dict__.get("dtype_from_arguments", False):
            self._note_dtype_passed_on([*node.args, *(kw.value for kw in node.keywords)])
        # (a body that backpropagates, given tensors known to be wide: walked with their shapes, `self.apply(vec)` whose
        # torch.autograd.grad is of what it computes from vec, through values the symbolic walk cannot follow)
        sized = (info.__dict__.get("backward_of_arguments", False) or info.__dict__.get("backpropagates", False)) \
            and any(_sized_deeply(p) for p in passed)
        # (and a trainer's method backpropagating what its constructor kept, `Trainer(model, batches).fit()`: walked
        # quietly, for the sizes of what reaches its backward calls alone)
        kept = not sized and info.calls_backward and _instance_sized(info, receiver)
        # a tensor of known shape passed to a body whose result is made from its parameters: walked for that shape
        # (`model(torch.randn(8, 16))`: what the forward's layers make of 8 rows)
        # (and a constructor keeping what it is given on `self`: `self.code = code.clone()` has the shape passed)
        # (and a method of an instance whose constructor kept such a tensor: `field.energy(w)` reads `self.anchors`)
        init = info.name == "__init__" and info.cls is not None and info.uses_arguments
        shaped = (_shaped_by_arguments(info) or init) \
            and (any(_shaped(p) or (init or _pair(p)) and _shaped_deeply(p) for p in passed) or info.cls is not None and receiver is not None and receiver.node is not None
                 and receiver.origin != "self" and any(_shaped(p) for p in info.cls.instances.get(id(receiver.node), {}).values()))
        # (and a body whose factory takes a size from a parameter, given an integer of several: `draw(count=16)`)
        shaped = shaped or info.__dict__.get("sized_by_arguments", False) and any(
            p is not None and p.kind is Kind.NUMBER and type(p.value) is int and p.value > 1 for p in passed)
        # a body that runs backward() or an optimizer step: walked with what the call gives it, so that the caller sees
        # which of its values are backpropagated, freed and stepped, in order (ThroughEvent). Only for calls that give it
        # a value with a graph, an instance of a plain class of the workspace (an optimizer or criterion wrapper whose
        # own methods backpropagate), or a function of the workspace (what it does to the values is known then): a body walked for a call site is walked again with the walk that holds the call after an edit of it (rewalk.py)
        backprops = (info.calls_backward or info.calls_step) and any(
            p is not None and (p.kind is Kind.TENSOR and bool(p.graph) or p.kind is Kind.MODULE and isinstance(p.module_class, ClassInfo)
                               and not p.module_class.is_module or p.kind is Kind.FUNCTION) for p in flatten(passed))
        # a body that cuts a graph (`(pred > 0.5).float()`), given a tensor that requires grad and one that has no graph
        # (a plain target): whether what it returns is cut is the call's to say (the summary keeps a path open through a
        # parameter that might require grad)
        cuts = _cut_by_arguments(info, passed, own_graph=_returns_cut(info))
        # (or may hand back what it is given, under a None test: a cut tensor stays cut, `if ignore is None: return xs`)
        cuts = cuts or info.__dict__.get("tests_none", False) and any(
            p is not None and p.kind is Kind.TENSOR and p.nondiff is not None for p in passed)
        # (a body that backpropagates what it cut: the caller sees that backward as this call's, with these values)
        backprops = backprops or cuts and info.calls_backward
        # a body whose factory takes its dtype from a parameter (`torch.arange(n)`), given a number of known type
        dtyped = info.__dict__.get("dtype_from_arguments", False) and any(_typed_numbers(p) for p in passed)
        # (shapes are what a body backpropagating its arguments is judged by, too: walked with them)
        with_shapes, quiet = shaped or sized or kept, (shaped and not sized or kept) and not info.uses_arguments and not backprops and not cuts
        sized = sized or kept
        sized = sized or shaped
        # (and a body that picks a loss's class or reduction from a config it is given: `get_loss(config)`)
        configured = info.__dict__.get("configured_by_arguments", False) and (any(
            p is not None and p.kind in (Kind.MODULE, Kind.TEXT) for p in passed) or _leaves_text(info.node, node))
        # (a torch.nn class given to a constructor that builds its layer from it: `Block(c, act_layer=nn.Tanh)`)
        configured = configured or info.name == "__init__" and any(
            p is not None and p.kind is Kind.FUNCTION and p.origin == "class" for p in passed)
        configured = configured or _switches_option(info, node, keyword_provs) or callsite.keeps_dims(info) and any(
            p is not None and p.kind is Kind.NUMBER and type(p.value) is int for p in passed)
        if (not (info.uses_arguments or sized or backprops or cuts or configured or dtyped) or not info.walked
                or self.context_depth >= callsite.MAX_DEPTH or info.walking or info.owner is None or isinstance(info.node, ast.Lambda)):
            return _NOT_WALKED
        if not (sized or configured or dtyped) and not callsite.worth_walking(info, passed):
            return _NOT_WALKED
        owner = info.owner
        method = info.cls is not None and not self._is_static(info.node)
        bound = callsite.bind_arguments(info.node, method, node, arg_provs, keyword_provs)
        if bound is None:
            return _NOT_WALKED
        left_none = _bind_defaults(info.node, node, bound, method, owner.imports)
        passed_none = self._none_keywords(node, bound)  # (`ignore=self.ignore`, None for this instance: as if left out)
        if passed_none:
            left_none = left_none | passed_none
            bound.update(dict.fromkeys(passed_none))
        if not with_shapes:  # (walked and memoised without shapes: one walk serves tensors of every size)
            bound = {name: callsite.unshaped(prov) for name, prov in bound.items()}
        caller = self.ctx()
        instance = receiver if method and receiver is not None and receiver.origin != "self" else None
        # (a body walked only because a shape was passed judges nothing there: the symbolic walk does, as before)
        key = (id(info.node), caller.no_grad, (callsite.facts(instance), id(instance.node)) if instance is not None else None,
               tuple((name, callsite.facts(prov)) for name, prov in bound.items()), quiet,
               tuple(callsite.shapes_of(prov) for prov in bound.values()) if with_shapes else None, left_none)
        memo = owner.memo
        if key not in memo:
            if owner.context_walks >= callsite.MAX_WALKS:
                return _NOT_WALKED
            owner.context_walks += 1
            memo[key] = None  # a recursive call meets its own walk: the summary does
            escaped = [] if owner is not self else None
            collected = [] if backprops and not quiet else None
            began, shadows = owner.seq, len(owner.shadows)
            at_depth = getattr(owner.resolver, "at_depth", None) if owner is not self else None
            was_quiet, owner.quiet = owner.quiet, owner.quiet or quiet or self.quiet
            try:
                if at_depth is None:
                    ret = owner.walk_in_context(info, bound, receiver if method else None, caller, self.context_depth + 1, escaped,
                                                left_none=left_none, backprops=collected)
                else:
                    with at_depth(owner.depth) as free:  # another module's body: as deep as that module, never waiting for jedi
                        if not free:
                            del memo[key]
                            return _NOT_WALKED
                        ret = owner.walk_in_context(info, bound, receiver if method else None, caller, self.context_depth + 1, escaped,
                                                    left_none=left_none, backprops=collected)
            finally:
                owner.quiet = was_quiet
            memo[key] = (ret, dict(bound), escaped, collected)
            owner._note_context_walk(key, began, shadows)
        elif owner is self:
            self._note_memo_read(key)
        found = memo[key]
        if found is None:
            return _NOT_WALKED
        ret, passed, escaped, collected = found
        if escaped:
            self._reemit(escaped, passed, bound, node, owner.model.source.path)
        if collected and not self.quiet:
            self._through(collected, passed, bound, node)
        if quiet and own_summary:
            # walked for its shape alone: the summary says the rest (what the walk could not know, a default's value,
            # the symbolic walk knows as a parameter)
            return _no_graph_if(self.no_grad, _with_shape(self.instantiate(info, node, arg_provs, node.args),
                                                          self._returned(ret, passed, bound, node)))
        return self._returned(ret, passed, bound, node)

    def _valued(self, node: ast.Call, arg_provs, keyword_provs) -> tuple:
        """The arguments with each integer literal (or name bound to one) as a number of that value, for a body whose
        factories take sizes from its parameters."""
        def valued(prov, argument):
            if prov is not None and (prov.kind is not Kind.NUMBER or prov.value is not None):
                return prov
            value = self._int_value(argument)
            return _int_number(value) if type(value) is int else prov
        if len(arg_provs) == len(node.args):
            arg_provs = [valued(prov, argument) for prov, argument in zip(arg_provs, node.args)]
        if type(keyword_provs) is dict:
            given = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
            keyword_provs = {name: valued(prov, given[name]) if name in given else prov for name, prov in keyword_provs.items()}
        return arg_provs, keyword_provs

    def _summary_of(self, info: FunctionInfo) -> FunctionInfo:
        """`info`, its summary read by this walk (recorded for analysis/rewalk.py)."""
        if not self.summary_only:
            self.summary_reads.setdefault(id(info), {})[id(self.function)] = self.function
        return info

    def _note_context_walk(self, key, began: int, shadows: int):
        self.memo_seen[key] = [began, self.seq]
        if len(self.shadows) > shadows:
            shadow = self.shadows[shadows]  # (the walk's own: those of the calls inside it come after)
            shadow.ctx_key, shadow.ctx_seq, shadow.ctx_end = key, began, self.seq  # type: ignore[attr-defined]

    def _note_memo_read(self, key):
        seen = self.memo_seen.get(key)
        if seen is not None:
            seen[1] = self.seq

    def walk_in_context(self, info: FunctionInfo, bound: dict, receiver, caller: Context, depth: int, escaped,
                        left_none: frozenset = frozenset(), backprops: list | None = None) -> Provenance | None:
        shadow = FunctionInfo(info.node, info.name, cls=info.cls, owner=self, context_of=info)
        if left_none:
            shadow.left_none = left_none  # type: ignore[attr-defined]  # (parameters this call leaves at their None default)
        shadow.called_from = caller.scope.function  # type: ignore[attr-defined]
        self.shadows.append(shadow)
        cls = info.cls
        shadow.instance = receiver  # type: ignore[attr-defined]
        if info.name == "__init__" and cls is not None:
            shadow.constructions = cls.__dict__.get("_constructions", 0)  # type: ignore[attr-defined]
            cls._constructions = shadow.constructions + 1  # type: ignore[attr-defined]
        saved = self._state()
        saved_depth = self.context_depth
        node = info.node
        self.scope = Scope(node, info.name, getattr(info, "defining_scope", self.module_scope), function=shadow)
        shadow.scope = self.scope
        decorated = self._decorated_no_grad(node)
        self.loop, self.epoch, self.function = None, 0, shadow
        self.mode = True if decorated else caller.no_grad
        self.no_grad = bool(self.mode)
        self.via, self.context_depth = caller, depth
        self.overlay = self.table = {}
        if escaped is not None:
            self.escaped = escaped
        self.backprops, self.branching, self.left_early, self.ended = backprops, 0, False, False
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        if receiver is not None and positional:
            self.scope.bindings[positional[0].arg] = receiver
        elif cls is not None and positional and not self._is_static(node):
            self.scope.bindings[positional[0].arg] = Provenance(Kind.MODULE, node.lineno, module_class=cls, origin="self")
        self.scope.bindings.update(bound)
        for arg in (args.vararg, args.kwarg):
            if arg is not None and arg.arg not in bound:
                self.scope.bindings[arg.arg] = None
        self._register_known_defs(node.body)
        try:
            self.walk_body(node.body)
        finally:
            self._restore(saved)
            self.context_depth = saved_depth
        return shadow.returns if shadow.returned_any else None

    def _register_known_defs(self, body):
        """The defs of a body walked again: the same FunctionInfos as its first walk (rules and calls know those)."""
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info = self.model.functions.get(stmt)
                if info is None:
                    self._register_defs([stmt])
                else:
                    self.scope.defs[stmt.name] = info
            elif isinstance(stmt, ast.ClassDef):
                method = next((s for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
                known = self.model.functions.get(method) if method is not None else None
                if known is not None and known.cls is not None:
                    self.scope.defs[stmt.name] = known.cls
                else:
                    self.scope.defs[stmt.name] = None  # (stmt_ClassDef: already "defined", unknown)
            elif isinstance(stmt, (ast.If, ast.Try)):
                self._register_known_defs(stmt.body)
                self._register_known_defs(getattr(stmt, "orelse", []))

    def _returned(self, ret: Provenance | None, passed: dict, bound: dict, call: ast.Call) -> Provenance | None:
        """The value a walked body returned, as seen by this call (a memoised walk may have been made for another)."""
        if ret is None:
            return None
        for name, prov in passed.items():
            if prov is not None and (ret is prov or ret.node is not None and ret.node is prov.node):
                mine = bound.get(name)
                if ret is prov or mine is None:
                    return mine  # returns what it was given
                if mine is prov:
                    return ret  # the caller's own value, changed by the helper (`requires_grad_()` on it)
                # a walk made for another call: this call's value, with the helper's changes
                return ret.but(node=mine.node, line=mine.line, loop=mine.loop, epoch=mine.epoch, graph=mine.graph,
                               composed_from=mine.composed_from, origin=mine.origin)
        if ret.kind is Kind.SEQUENCE and ret.elements:
            # `return loss, acc`: each element as this call sees it (a walk memoised for another call holds its graphs)
            return ret.but(elements=tuple(self._returned(element, passed, bound, call) for element in ret.elements))
        if ret.kind is not Kind.TENSOR:
            return ret.but(line=call.lineno, node=_built_or(ret, call)) if ret.kind is not Kind.SEQUENCE else ret
        theirs = frozenset().union(*(p.graph for p in passed.values() if p is not None and p.kind is Kind.TENSOR))
        # this call's graph where the walk's argument's reached what it returned (not one the body detached)
        mine = frozenset().union(*(p.graph for name, p in bound.items() if p is not None and p.kind is Kind.TENSOR and (
            (given := passed.get(name)) is not None and given.kind is Kind.TENSOR and given.graph and given.graph <= ret.graph)))
        graph = (ret.graph - theirs) | mine | ({id(call)} if ret.requires_grad else frozenset())
        return ret.but(line=call.lineno, node=call, loop=self.loop, epoch=self.epoch, graph=graph, origin=ret.origin if ret.origin == "param" else
                       f"{getattr(call.func, 'attr', None) or getattr(call.func, 'id', '?')}()")

    def _through(self, collected: list, passed: dict, bound: dict, call: ast.Call):
        """The backward and step calls a body walked for this call ran (`collected`, in order): this call's own, on its
        values (ThroughEvent). A value the call passed is named by its argument; one the body made (or took from
        `self`) is as the walk left it, with this call in its graph."""
        arguments, given = {}, _before_star(call.args)
        for index, name in enumerate(passed):
            argument = given[index] if index < len(given) else next((kw.value for kw in call.keywords if kw.arg == name), None)
            if argument is not None:
                arguments[name] = argument
        for event in collected:
            value, receiver = event.receiver_prov, event.receiver
            if event.role == "backward" and type(event) is CallEvent and (value is None or value.kind is not Kind.TENSOR) and event.node.args:
                value, receiver = event.value, event.node.args[0]  # (`accelerator.backward(loss)`: its argument)
            if value is not None and value.kind is Kind.TENSOR:
                named = next((name for name, prov in passed.items() if value is prov), None)
                if named is None and value.node is not None:  # (the value given, as the body changed it: one of that node)
                    same = [name for name, prov in passed.items() if prov is not None and prov.node is value.node]
                    named = same[0] if len(same) == 1 else None
                if named is not None:
                    value, receiver = bound.get(named), arguments.get(named)
                    if value is None or receiver is None:
                        continue  # (a value this call does not give: unknown here)
                else:
                    # made by the body (or kept on `self`): its own graph, where what it took from a value the walk was
                    # given is what this call gives (a memoised walk may have been made for another call). This call is no
                    # node of it: two values the body made share what they share there.
                    graph = value.graph
                    for name, prov in passed.items():
                        given = bound.get(name)
                        if prov is not None and prov is not given and prov.kind is Kind.TENSOR and prov.graph and prov.graph <= graph:
                            graph = (graph - prov.graph) | (given.graph if given is not None and given.kind is Kind.TENSOR else frozenset())
                    value = value.but(graph=graph) if graph is not value.graph else value
            inner_site = event.through if type(event) is ThroughEvent else event.node
            self.emit(ThroughEvent(inner_site, self.ctx(), role=event.role, method=event.method, receiver=receiver,
                                   receiver_prov=value, through=call, inner=event, certain=event.certain))

    def _reemit(self, escaped: list, passed: dict, bound: dict, call: ast.Call, path: str | None):
        """Another module's helper changed an argument in place: report it at this call, the line of the checked file."""
        for event in escaped:
            if not isinstance(event, InplaceEvent) or event.prov is None:
                continue
            for index, (name, prov) in enumerate(passed.items()):
                if prov is None or prov.node is None or event.prov.node is not prov.node:
                    continue
                given = _before_star(call.args)
                argument = given[index] if index < len(given) else next((kw.value for kw in call.keywords if kw.arg == name), None)
                if argument is None or bound.get(name) is None:
                    continue
                ctx = Context(self.scope, self.loop, self.mode, self.epoch, self.stmt, self.via)  # its own: changed below
                if event.ctx.no_grad is True and not ctx.no_grad:
                    ctx.no_grad = True  # the helper runs it under its own no_grad()
                helper = getattr(call.func, "attr", None) or getattr(call.func, "id", "?")
                where = f"{os.path.basename(path)}:{event.node.lineno}" if path else f"line {event.node.lineno}"
                self.emit(InplaceEvent(call, ctx, target=argument, prov=bound[name], op=f"{event.op}` in `{helper}()` at `{where}", form="call"))

    def _worth_resolving(self, node: ast.Call, qualname: str, arg_provs) -> bool:
        """Resolve a helper only where its summary can change a finding: called with concrete tensors, modules or
        optimizers, called with nothing (a factory of leaves), a class, or called inside a loop (a training step).
        Library code mostly passes its own symbolic parameters around: resolving those costs a walk of the other
        module and can only produce unknowns."""
        if getattr(self.resolver, "depth", 0) > 0:
            return True  # summarising another module for a caller: symbolic arguments carry its dependencies
        if self.loop is not None or self.function is None or (not node.args and not node.keywords):
            return True  # script-level code, training loops and zero-argument factories
        if arg_provs and all(prov is not None and not prov.param_deps for prov in arg_provs):
            return True  # every argument concrete (e.g. `trainable(100, 16)` in main()): the summary can be exact
        if qualname.rsplit(".", 1)[-1][:1].isupper():
            return True
        for prov in flatten(arg_provs):
            if prov is None:
                continue
            if prov.kind in (Kind.MODULE, Kind.OPTIMIZER, Kind.PARAMS):
                return True
            if prov.kind is Kind.TENSOR and (prov.requires_grad or prov.composed_from or prov.graph):
                return True
        return False

    def _in_workspace(self, qualname: str) -> bool:
        return _workspace_name(qualname, self._workspace_module)

    def _workspace_module(self, top: str) -> bool:
        """A cheap file-system check that `top` is a module of the workspace rather than an installed library."""
        cache = self.__dict__.setdefault("_workspace_cache", {})
        if top not in cache:
            path = self.model.source.path
            probe = getattr(self.resolver, "workspace_module", None)  # remembers the answers for a whole run
            cache[top] = bool(path) and (probe(path, top) if probe is not None else workspace_module(path, top))
        return cache[top]

    def forward(self, node, module: Provenance, arg_provs, event) -> Provenance | None:
        event.role = "forward"
        cls = module.module_class
        if isinstance(cls, ClassInfo) and "forward" not in cls.methods and not cls.bases:
            layers = cls.attribute(SEQUENTIAL_LAYERS, module)  # (an nn.Sequential subclass: nn.Sequential's forward)
            if layers is not None and layers.kind is Kind.MODULE and layers.module_class == "torch.nn.Sequential":
                module, cls = layers, layers.module_class
        inputs = [p for p in flatten(arg_provs) if p is not None and p.kind is Kind.TENSOR]
        name = cls.rsplit(".", 1)[-1] if isinstance(cls, str) else None
        if name == "Identity" and cls.startswith("torch.") and len(node.args) == 1 and not node.keywords and len(inputs) == 1 and arg_provs[0] is inputs[0]:
            return inputs[0]  # (nn.Identity's forward returns its input: the very tensor, kept or edited as it was)
        loss = name is not None and name.endswith("Loss")
        if isinstance(cls, ClassInfo) and not cls.is_module:
            # `criterion(pred, y)` of a plain class: its __call__; `self.forward(x)` in it: its forward
            named = "forward" if isinstance(node.func, ast.Attribute) and node.func.attr == "forward" else "__call__"
            call = inherited_method(cls, named)
            if any(kw.arg is None for kw in node.keywords):
                return None
            if call is None:
                return self._dispatched(cls, named, node, module, arg_provs, event)
            event.role = None
            return self.call_function(call, node, arg_provs, event, receiver=module)
        walked = None  # what the user forward, walked with these arguments, returns
        if isinstance(cls, ClassInfo):
            event.runs = inherited_method(cls, "forward")  # `model(x)` is the call that gives forward() its grad mode
            walked = self._forward_in_context(event.runs, node, module, arg_provs)
            # (a forward not walked for this call: its summary's graph, the nodes of its own body)
            self._note_forward_graph(node, walked if walked is not None or event.runs is None or not event.runs.walked else event.runs.returns)
        elif name == "Sequential" and module.elements and module.elements[0] is not None and isinstance(module.elements[0].module_class, ClassInfo):
            first_block = module.elements[0]  # nn.Sequential(Block(), ...): the first block's forward gets the input
            forward = first_block.module_class.methods.get("forward")
            self._forward_in_context(self._summary_of(forward) if forward is not None else None, node, first_block, arg_provs)
        cut = None
        if name is not None and (api.layer_parameters(name) == () or loss):
            requires_grad = True if any(p.requires_grad for p in inputs) else (False if inputs and len(inputs) == len(arg_provs) and all(p.requires_grad is False for p in inputs) else None)
            carriers = [p for p in inputs if p.requires_grad or p.composed_from or p.nondiff]
            cut = carriers[0].nondiff if carriers and all(p.nondiff for p in carriers) else None  # a loss of argmax outputs
        else:
            requires_grad = True
        if self.no_grad:
            requires_grad = False
        graph = frozenset().union(*(p.graph for p in inputs)) | ({id(node)} if requires_grad else frozenset())
        reduction = next((kw for kw in node.keywords if kw.arg == "reduction"), None)
        built = module.node if isinstance(module.node, ast.Call) else None
        if reduction is None and module.text is not None:
            reduction = ast.Constant(module.text)  # built with `reduction=<a name bound to a string>`
        if reduction is None and built is not None:
            reduction = _argument(built, "reduction", api.layer(name).get("reduction"))
            if reduction is None and loss and _const(_argument(built, "reduce", api.layer(name).get("reduce"))) is False:
                reduction = _NO_REDUCTION  # nn.MSELoss(reduce=False), the deprecated spelling of reduction="none"
        first, first_call = self._first_layer(name, built)  # nn.Sequential(nn.ReLU(inplace=True), ...) applies its first layer
        if first_call is not None and node.args and api.layer_op(first) is not None \
                and _const(_argument(first_call, "inplace", api.layer(first).get("inplace"))) is True \
                and _writes(first_call, api.layer_op(first), 0):
            self._inplace_call(node, node.args[0], arg_provs[0], f"{first}(inplace=True)", first_call)  # nn.ReLU(inplace=True)(x) writes x
        if requires_grad and name == "Sequential":
            for saving, saving_node, layer, layer_node in self._sequential_hazards(node, built):
                # the container's own forward applies `layer` to what `saving` returned and saved: report at the layer
                output = Provenance(Kind.TENSOR, node.lineno, leaf=False, requires_grad=True, origin=f"{saving}(...)", node=saving_node,
                                    saved_by=saving, saved_node=node, loop=self.loop, epoch=self.epoch)
                self.emit(InplaceEvent(layer_node, self.ctx(), target=saving_node, prov=output, op=f"{layer}(inplace=True)", form="call"))
        if requires_grad and node.args and api.layer_parameters(first):
            # nn.Conv2d / nn.Linear keep their input for the weight's gradient (derivatives.yaml of their op)
            grads = [bool(arg_provs and arg_provs[0] is not None and arg_provs[0].requires_grad), True]
            if 0 in api.saved_inputs(api.layer_op(first) or "", grads):
                self._mark(node.args[0], first, node)
        result = Provenance(Kind.TENSOR, node.lineno, leaf=not requires_grad if requires_grad is not None else None, requires_grad=requires_grad,
                            dtype=api.FLOAT if requires_grad else None, origin=f"{self.model.text(node.func)}(...)", graph=graph, no_grad=self.no_grad,
                            loop=self.loop, epoch=self.epoch, node=node, nondiff=cut,
                            scalar=(_reduction_scalar(reduction) if reduction is not None or module.node is not None else None) if loss else None,
                            composed_from=frozenset().union(*(p.composed_from for p in inputs)) | self._forward_sources(node, module, requires_grad),
                            param_deps=(deps := frozenset().union(*(p.param_deps for p in inputs))),
                            cut_deps=deps if requires_grad is False else cut_of(inputs))
        width = _layer_width(name, built) if name != "Sequential" else _last_width(module)
        if width is None and module.kind is Kind.MODULE and module.module_class == module.origin:
            width = module.value  # a torch.nn layer built with a name bound to an integer (_named_width)
        if width is not None and width > 1:
            result = result.but(scalar=False)  # nn.Linear(10, 5)(x): at least 5 elements
        elif isinstance(cls, ClassInfo) and event.runs is not None and node.args and not node.keywords and not self.no_grad:
            if self._forward_not_scalar(event.runs, arg_provs):
                result = result.but(scalar=False)  # a user loss module returning `(pred - target) ** 2`
        shape = None
        if isinstance(cls, ClassInfo):
            shape = walked.shape if walked is not None and walked.kind is Kind.TENSOR else None
        elif name is not None and not loss and len(node.args) == 1 and not node.keywords and arg_provs and arg_provs[0] is not None \
                and arg_provs[0].kind is Kind.TENSOR:
            shape = self._layer_shape(module, arg_provs[0].shape)
        if shape is not None:
            result = result.but(shape=shape, scalar=shapes.scalar_of(shape) if result.scalar is None else result.scalar)
        elif isinstance(cls, ClassInfo) and walked is not None and walked.kind is Kind.TENSOR and walked.scalar is False and result.scalar is None:
            result = result.but(scalar=False)  # (no shape, but several elements for these arguments: `self.beta * per_row`)
        last = _last_layer(module) if name == "Sequential" else name
        if requires_grad and last is not None and api.saves_output(last) \
                and not (type(node.func) is ast.Attribute and syntax.kept_on(self.model.tree, "_replaces_children", syntax.replaces_children)):
            # nn.Sigmoid()(x), nn.Sequential(..., nn.Tanh())(x): the output is kept for backward (AG006, AG008); not
            # known of a module's layer where this code swaps layers by name
            result = result.but(saved_by=last, saved_node=node)
        elif requires_grad and not self.no_grad and isinstance(cls, ClassInfo) and event.runs is not None and event.runs.walked:
            kept = event.runs.returns
            if kept is not None and kept.kind is Kind.TENSOR and kept.saved_by is not None:
                # a block whose forward ends in `self.act(...)` (nn.ReLU): what it returns is what that op kept for backward
                result = result.but(saved_by=kept.saved_by, saved_node=node)
        elif requires_grad and not self.no_grad and name == "Sequential" and (kept := self._last_block_kept(module)) is not None:
            result = result.but(saved_by=kept, saved_node=node)  # nn.Sequential(..., Block()): what that block returns
        if walked is not None and walked.kind is Kind.TENSOR and walked.nondiff is not None and walked.requires_grad is not None \
                and isinstance(cls, ClassInfo) and not self.no_grad:
            # a loss module's forward walked with what this call passes: every path to what it returns goes through a
            # cut (`(y_pred > 0.5)` of the prediction, a plain target beside it)
            result = result.but(nondiff=walked.nondiff, requires_grad=walked.requires_grad, leaf=walked.leaf,
                                graph=result.graph if walked.requires_grad else frozenset())
        if walked is not None and walked.kind is Kind.MAPPING and walked.elements and walked.keys and not self.no_grad:
            # a forward returning a dict (`{"out_map": logits, "loss": loss}`) walked with these arguments: each value is
            # this forward's output, with the sizes the walk found for it (`model(images, targets)["loss"]`)
            values = tuple(result.but(scalar=value.scalar, shape=value.shape, requires_grad=value.requires_grad or result.requires_grad)
                           if value is not None and value.kind is Kind.TENSOR and value.requires_grad else None
                           for value in walked.elements)
            return Provenance(Kind.MAPPING, node.lineno, elements=values, keys=walked.keys, node=node)
        if walked is not None and walked.kind is Kind.SEQUENCE and walked.origin == _TUPLE and walked.elements and not self.no_grad \
                and any(value is not None and value.kind is Kind.TENSOR and value.requires_grad for value in walked.elements):
            # a forward returning a tuple (`return (loss,) + out`) walked with these arguments: each element this
            # forward's output, with the sizes the walk found for it (`model(ids, labels)[0]`)
            return self._kept_elements(_walked_output(walked, result, node), walked, node)
        if walked is None and isinstance(cls, ClassInfo) and event.runs is not None and event.runs.walked and not self.no_grad:
            kept = event.runs.returns
            if kept is not None and kept.kind is Kind.SEQUENCE and kept.origin == _TUPLE and kept.elements:
                # a forward returning a tuple display (`return loss, n, {"loss": loss.detach()}`) whose summary says
                # which elements are tensors: those are this call's output, the others (counts, logs) not known here
                return self._kept_elements(Provenance(Kind.SEQUENCE, node.lineno, elements=tuple(_as_output(value, result) for value in kept.elements),
                                                      origin=_TUPLE, node=node), kept, node)
        listed = walked if walked is not None or not isinstance(cls, ClassInfo) or event.runs is None or not event.runs.walked else event.runs.returns
        if listed is not None and listed.kind is Kind.SEQUENCE and not listed.elements and listed.graph and not self.no_grad:
            # a forward returning the list it appended its outputs to (`return tuple(outs)`): each element is this
            # forward's output (`for f in self.neck(x)`)
            return Provenance(Kind.SEQUENCE, node.lineno, elements=(result,), origin=_EACH, node=node)
        return result

    def _kept_elements(self, out: Provenance, returned: Provenance, node: ast.Call) -> Provenance:
        """A forward returning a tuple whose element is the output of an op that kept it for backward (`return c2, c3`,
        `return self.act(a), b`): that element of this call's output is kept too (saved by this call: AG006 asks for a
        loss computed from the edited element itself, _through_edit)."""
        if len(returned.elements) != len(out.elements):
            return out
        elements = list(out.elements)
        for index, value in enumerate(returned.elements):
            element = elements[index]
            if value is not None and value.kind is Kind.TENSOR and value.saved_node is not None and not value.detached \
                    and id(value.saved_node) in value.graph and element is not None and element.kind is Kind.TENSOR and element.requires_grad:
                elements[index] = element.but(saved_by=value.saved_by, saved_node=node)
        return out.but(elements=tuple(elements))

    def _last_block_kept(self, module: Provenance) -> str | None:
        """The op that kept for backward what the last block of an nn.Sequential returns (its forward's summary), when
        that block is a module of this workspace."""
        block = _last_element(module)
        info = block.module_class.methods.get("forward") if block is not None and isinstance(block.module_class, ClassInfo) else None
        if info is None or self.summary_only:
            return None
        if not info.walked and info.owner is self and not info.walking and not self._is_static(info.node):
            self.walk_function(info)
        kept = self._summary_of(info).returns if info.walked else None
        return kept.saved_by if kept is not None and kept.kind is Kind.TENSOR else None

    def _note_forward_graph(self, node: ast.Call, walked: Provenance | None):
        """The graph inside a user forward walked for this call (model.forward_graphs): a tuple's tensors' too."""
        values = walked.elements if walked is not None and walked.kind is Kind.SEQUENCE else [walked]
        graph = frozenset().union(*(v.graph for v in values if v is not None and v.kind is Kind.TENSOR))
        if walked is not None and walked.kind is Kind.SEQUENCE:
            graph |= walked.graph  # (a list the forward appended its tensors to)
        if graph and not self.summary_only:
            self.model.forward_graphs[id(node)] = self.model.forward_graphs.get(id(node), frozenset()) | graph

    def _forward_sources(self, node: ast.Call, module: Provenance, requires_grad) -> frozenset:
        """A forward of a trainable module composes its parameters (`self.embedding(ids)` -> "self.embedding.*"): the
        output computed once, kept and reused after a step, holds their old values and a freed graph (AG002)."""
        if not requires_grad or self.no_grad or not _trainable_module(module):
            return frozenset()
        target = node.func.value if isinstance(node.func, ast.Attribute) and node.func.attr == "forward" else node.func
        name = label(target) or (syntax.dotted(target) if type(target) is ast.Attribute else None)  # (`self.net.enc(x)`)
        return frozenset({name + ".*"}) if name else frozenset()

    def _forward_in_context(self, info: FunctionInfo | None, node: ast.Call, module: Provenance, arg_provs):
        """`self.block(x)` whose forward changes its input in place (`x = self.act(x)`, an nn.ReLU(inplace=True)): walked
        with what this call passes, so the change is judged against what the caller's `x` is (saved, a leaf). One whose
        ops keep its input for backward (`self.conv(x)`) marks the caller's `x` saved."""
        if info is None or self.no_grad or self.summary_only:
            return
        keywords = self._keywords  # (this call's: the first walk of the body makes calls of its own)
        try:
            return self._forward_walk(info, node, module, arg_provs, keywords)
        finally:
            self._keywords = keywords

    def _forward_walk(self, info: FunctionInfo, node: ast.Call, module: Provenance, arg_provs, keywords):
        self._keywords = None
        if not info.walked and info.owner is self and not info.walking and not self._is_static(info.node):
            self.walk_function(info)  # (a forward is summarised where it is first called, as a called function is)
        if not info.walked:
            return
        # (an input the forward keeps on every run is kept whatever keywords the call adds: `self.head(x, infer=True)`)
        for index, op in info.__dict__.get("saved_inputs", {}).items():
            if 1 <= index <= len(node.args) and not isinstance(node.args[index - 1], ast.Starred):
                self._mark(node.args[index - 1], op, node)
        if node.keywords and not (_optional_tuple(info) and (all(kw.arg is not None for kw in node.keywords)
                                                              or isinstance(keywords, callsite.Expanded))):
            return  # (keywords: only for a forward whose returned tuple depends on the optional arguments passed)
        shaped = any(_shaped(p) for p in [*arg_provs, *(keywords or {}).values()])
        if info.__dict__.get("cuts_graph"):
            self._note_cut()  # (a loss module's cut, `Dice(threshold=0.5)`: what its callers pass decides it too)
        if not info.uses_arguments and not ((_shaped_by_arguments(info) or _optional_tuple(info)) and shaped) \
                and not _cut_by_arguments(info, [*arg_provs, *(keywords or {}).values()], own_graph=_returns_cut(info)):
            return None
        ret = self.call_in_context(info, node, arg_provs, (keywords or {}) if node.keywords else {}, module)
        return None if ret is _NOT_WALKED else ret

    def _layer_shape(self, module: Provenance, shape, depth: int = 0):
        """The output shape of a torch.nn layer given its input's: its functional op's kind (pointwise, or the JIT
        shape function: linear, convolutions, pooling) with the width it was built with; an nn.Sequential of such
        layers, one after the other. None where a layer's effect is not known."""
        if shape is None or module is None or module.kind is not Kind.MODULE or not isinstance(module.module_class, str) or depth > 8:
            return None
        name = module.module_class.rsplit(".", 1)[-1]
        built = module.node if isinstance(module.node, ast.Call) else None
        if name == "Sequential":
            if not module.elements or built is None or len(module.elements) != len(built.args):
                return None  # (layers added later, or given as an OrderedDict)
            for layer in module.elements:
                shape = self._layer_shape(layer, shape, depth + 1)
                if shape is None:
                    return None
            return shape
        op = api.layer_op(name)
        method = api.layer(name).get("method")
        if op is None and method is not None and built is not None:
            # nn.Flatten(): `input.flatten(self.start_dim, self.end_dim)` with what it was built with
            values = [_argument(built, keyword, position) for keyword, position, _ in method["arguments"]]
            arguments = [value if value is not None else ast.Constant(default) for value, (_, _, default) in zip(values, method["arguments"])]
            return self._op_shape(method["name"], Provenance(Kind.TENSOR, 0, shape=shape), arguments, [])
        if op is None or api.layer_parameters(name) is None:
            return None
        if op in api.SAME_SHAPE:
            return shape  # nn.ReLU, nn.Sigmoid
        if built is not None and any(kw.arg == "return_indices" for kw in built.keywords):
            return None  # nn.MaxPool2d(2, return_indices=True): a pair
        width = _layer_width(name, built)
        if width is None and module.module_class == module.origin:
            width = module.value  # built with a name bound to an integer
        output_size = None  # (an adaptive pool's first argument)
        if built is not None and built.args:
            first = built.args[0]
            if isinstance(first, ast.Tuple):
                output_size = tuple(v if isinstance(v, int) else None for v in (_number(e) for e in first.elts))
            elif isinstance(_number(first), int):
                output_size = _number(first)
        functions = api.shape_functions(op)
        count = shapes.spatial(next(iter(functions))) if len(functions) == 1 else None
        geometry = self._geometry(name, built, count) if count else None
        return shapes.layer(functions, shape, width, output_size, geometry)

    @staticmethod
    def _geometry(name: str, built: ast.Call | None, count: int) -> dict | None:
        """What a conv/pool layer was built with that sets its output sizes (torch_ops' `geometry` positions and
        defaults), each as a tuple of `count` ints ("same"/"valid" for a padding string); None where one is not a
        literal, or the call is not the layer's own constructor."""
        spec = api.layer(name).get("geometry")
        func = built.func if built is not None else None
        if not spec or (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) != name \
                or any(isinstance(a, ast.Starred) for a in built.args) or any(kw.arg is None for kw in built.keywords):
            return None
        found = {}
        for argument, (position, default) in spec.items():
            node = _argument(built, argument, position)
            if node is None:
                value = default
            elif argument == "ceil_mode":
                value = _const(node) if isinstance(_const(node), bool) else True  # (not known False: maybe ceil)
            elif isinstance(node, ast.Tuple):
                value = tuple(_number(e) for e in node.elts)
            elif argument == "padding" and _const(node) in ("same", "valid"):
                value = _const(node)
            else:
                value = _number(node)  # (literals only: a name would be read in the forward's scope, not __init__'s)
            if isinstance(value, int) and not isinstance(value, bool) and argument != "ceil_mode":
                value = (value,) * count
            if isinstance(value, tuple) and not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
                return None
            if value is not None and not isinstance(value, (tuple, str, bool)):
                return None
            found[argument] = value
        return found

    def _forward_not_scalar(self, info: FunctionInfo, arg_provs) -> bool:
        """A user module's forward() known to return several elements for these inputs: its summary says so (a wide
        layer's output), or it returns an elementwise function of its inputs and one of them has several. Another
        module's forward is walked only for calls with such an input."""
        wide_input = any(p is not None and p.kind is Kind.TENSOR and p.scalar is False for p in arg_provs)
        if not (wide_input or info.owner is self) or self._is_static(info.node):
            return False
        if not info.walked:
            self.walk_function(info)
        ret = self._summary_of(info).returns
        if ret is None or ret.kind is not Kind.TENSOR or not self._summarised(info) or not ret.param_deps:
            return False
        deps = []
        for index in sorted(ret.param_deps):  # (index 0 is `self`)
            if not 1 <= index <= len(arg_provs):
                return False
            deps.append((arg_provs[index - 1], None))
        if any(p.scalar is False for p in _covered(info, ret, arg_provs, 1)):
            return True  # `return F.softmax(a, 1).gather(1, target.view(-1, 1)).view(-1)` given a wide target
        return ret.scalar is False or wide_input and _elementwise_scalar(info, ret, deps) is False

    def method_call(self, node, event, method, receiver, recv: Provenance | None, arg_provs) -> Provenance | None:
        # (an instance of a workspace class that defines the method itself: its body says what it does, below)
        own = recv is not None and recv.kind is Kind.MODULE and isinstance(recv.module_class, ClassInfo) and method in recv.module_class.methods
        if method == "__init__" and recv is None and type(receiver) is ast.Call and type(receiver.func) is ast.Name \
                and receiver.func.id == "super" and self._builtin(receiver.func):
            return self._base_init(node, arg_provs)
        if method == "backward" and not own:
            event.role = "backward"
            self._note_backward(node, recv)
            return None
        if method == "zero_grad" and not own:
            event.role = "zero_grad"
            return None
        if method == "register_forward_hook" and len(node.args) == 1:
            self._forward_hook(node, recv)
        if method == "step" and self._is_optimizer(receiver, recv):
            event.role = "step"
            self._walk_closure(node)
            return None
        if method == "requires_grad_":
            event.role = "requires_grad_"
            if recv is not None and recv.kind is Kind.TENSOR:
                value = _const(node.args[0]) if node.args else True
                kw = event.keyword("requires_grad")
                if kw is not None:
                    value = _const(kw.value)
                after = recv.but(requires_grad=value if isinstance(value, bool) else None)
                self.rebind(receiver, after)
                return after
            return None
        if recv is None:
            if api.is_inplace_method(method):
                self._note_unknown_write(receiver)
            if method == "optimizers" and isinstance(receiver, ast.Name) and receiver.id == "self":
                return Provenance(Kind.OPTIMIZER, node.lineno, origin="self.optimizers()", node=node)
            above = self._super_method(receiver, method)
            if above is not None:  # `super().err(pred, y)`: the base's method, for this instance
                return self.call_function(above[0], node, arg_provs, event, receiver=above[1])
            static = self._static_method(receiver, method)
            if static is not None:  # `Table.build(n)`: a staticmethod of a class of this module, called on the class
                if not static.walked:
                    self._pass_modules(static, node, arg_provs, self._keywords)
                return self.call_function(static, node, arg_provs, event)
            return None
        if recv.kind is Kind.MODULE:
            if method in ("parameters", "named_parameters"):
                # (a submodule's, `self.critic.q1.parameters()`: named by its whole path)
                named = label(receiver) or syntax.dotted(receiver)
                return Provenance(Kind.PARAMS, node.lineno, origin=f"{named or 'module'}.parameters()",
                                  params=frozenset({f"{named}.*"}) if named else frozenset(), node=node)
            if method == "apply" and len(node.args) == 1 and isinstance(node.args[0], ast.Name) \
                    and not (isinstance(recv.module_class, ClassInfo) and "apply" in recv.module_class.methods):  # (its own apply())
                function = self.lookup_def(node.args[0].id)  # `model.apply(init_weights)` runs it here, in this grad mode
                if isinstance(function, FunctionInfo):
                    event.runs = function
                return recv
            cls = recv.module_class
            plain = isinstance(cls, ClassInfo) and not cls.is_module and method in cls.methods  # a trainer's own train()
            if method in ("to", "cuda", "cpu", "train", "eval", "double", "float", "half", "requires_grad_") and not plain:
                return recv
            if method == "forward":
                return self.forward(node, recv, arg_provs, event)
            if method in ("add_module", "register_module") and recv.origin == "self" and len(node.args) == 2 \
                    and (attr := syntax.attribute_name(node.args[0])) is not None:
                self._store_self_attribute(attr, arg_provs[1], self.stmt)  # self.add_module("conv", nn.Conv2d(...)), f"block{i}" too
                return None
            if method == "register_buffer" and recv.origin == "self" and len(node.args) >= 2 and isinstance(_const(node.args[0]), str) and not own:
                self._store_self_attribute(_const(node.args[0]), arg_provs[1], self.stmt)  # the buffer is the tensor given, as it is
                return None
            if method in ("add_module", "append") and isinstance(recv.module_class, str) and api.layer_parameters(recv.module_class.rsplit(".", 1)[-1]) is None:
                self._grow_container(receiver, recv, arg_provs[-1] if len(node.args) == (2 if method == "add_module" else 1) else None, node)
                return None
            cls = recv.module_class
            info = inherited_method(cls, method) if isinstance(cls, ClassInfo) else None
            if info is None and isinstance(cls, ClassInfo) and not cls.is_module and method not in cls.methods \
                    and (found := self._dispatched(cls, method, node, recv, arg_provs, event)) is not None:
                return found
            if info is not None:
                if not cls.is_module and info.owner is not self and not info.walked and \
                        not callsite.worth_walking(info, [*arg_provs, *(self._keywords or {}).values()]):
                    return None  # another module's plain class (a config, a container): walked only for calls that pass facts
                result = self.call_function(info, node, arg_provs, event, receiver=recv)
                if info.__dict__.get("moves_parameters"):
                    event.role = "step"  # a torch.optim.Optimizer subclass's own step (SAM's `first_step()`)
                return result
            # `self.fc(x)`: the submodule's forward, whichever method set `self.fc` (a trainer's `train()` builds `self.G`)
            submodule = self._module_attribute(node.func, recv) if isinstance(cls, ClassInfo) or self.is_bound(label(node.func) or "") else None
            if submodule is None and isinstance(cls, ClassInfo) and recv.origin == "self":
                submodule = self._optional_layer(cls, method) or self._defaulted_layer(cls, method)
            if submodule is not None and submodule.kind is Kind.MODULE:
                return self.forward(node, submodule, arg_provs, event)  # `self.fc(x)`: the submodule's forward
            if submodule is not None and submodule.kind is Kind.FUNCTION:
                return self.call_value(node, submodule, arg_provs, event)  # `self.objective(x)`: the function it was given
            return None
        if recv.kind is Kind.SEQUENCE and method == "append" and len(node.args) == 1 and (arg_provs[0] is None or arg_provs[0].kind is not Kind.MODULE) \
                and (default := self._default_layer(node.args[0])) is not None:
            arg_provs = [default]  # `layers.append(activation_layer(**params))`, `activation_layer=nn.ReLU` left by every construction
        if recv.kind is Kind.SEQUENCE and method == "append" and len(node.args) == 1 and arg_provs[0] is not None \
                and recv.origin != _SOME_ITEMS and arg_provs[0].kind is Kind.MODULE \
                and _layer_list(recv) and label(receiver):
            # `blocks.append(Block(c))` before `nn.Sequential(*blocks)`: the layers, in order (None: one not known)
            self.update(label(receiver), recv.but(elements=recv.elements + (arg_provs[0],), origin=""))
            return None
        if recv.kind is Kind.SEQUENCE and recv.origin == _SOME_ITEMS and method in uses.ADDS_ITEMS and label(receiver):
            # `if norm is not None: layers.append(norm(c))`, then `layers.append(nn.ReLU())`: the items before are not
            # known, the layers appended from here on end the list in order (a container built from it keeps them as
            # neighbours); anything else added leaves no known end
            added = arg_provs[0] if method == "append" and len(node.args) == 1 and not node.keywords else None
            if added is not None and added.kind is Kind.MODULE and not recv.elements and (recv.tail or _layer_list(recv)):
                self.update(label(receiver), recv.but(tail=recv.tail + (added,)))
                return None
            if recv.tail:
                recv = recv.but(tail=())
                self.update(label(receiver), recv)
        if recv.kind is Kind.SEQUENCE and method in uses.ADDS_ITEMS and recv.elements and recv.origin != _SOME_ITEMS \
                and _layer_list(recv) and label(receiver):
            # a layer list given what is not known to be one layer: the layers around it are no longer neighbours
            pieces = tuple(piece for layer in recv.elements for piece in (None, layer)) if method == "insert" else recv.elements
            self.update(label(receiver), recv.but(elements=pieces + (None,), origin=""))
            return None
        if recv.kind is Kind.SEQUENCE and method in uses.ADDS_ITEMS and node.args and label(receiver):
            # `outs.append(y)`: the list holds the tensors' graphs, which `torch.cat(outs)` joins and a forward returning
            # the list (or `tuple(outs)`) hands its caller (the elements stay as they were: how many is not known)
            added = arg_provs[-1]
            graph = _graphs_in(added)
            composed = added.composed_from if added is not None and added.kind is Kind.TENSOR else frozenset()
            if graph and not (graph <= recv.graph and composed <= recv.composed_from):
                self.update(label(receiver), recv.but(graph=recv.graph | graph, composed_from=recv.composed_from | composed))
            return None
        if recv.kind is Kind.MAPPING and not node.args and method in ("items", "values"):
            value = _merged_values(recv)  # `for name, value in losses.items()`: each value is one of the dict's
            if value is None:
                return None
            element = Provenance(Kind.SEQUENCE, node.lineno, elements=(None, value)) if method == "items" else value
            return Provenance(Kind.SEQUENCE, node.lineno, elements=(element,))
        if recv.kind is not Kind.TENSOR:
            return None
        if api.is_inplace_method(method) or api.is_inplace_view(method):
            recv = self._saved_since(receiver, recv)
            self.emit(InplaceEvent(node, self.ctx(), target=receiver, prov=recv, op=method, form="method", reshape=api.is_inplace_view(method)))
            after = self._through_edit(node, recv, self._after_inplace(recv, arg_provs))
            if after.shape is not None and api.out_of_place(method) not in api.SAME_SHAPE:
                after = after.but(shape=None)  # unsqueeze_, t_, resize_: its dims change
            if after is not recv:
                self.rebind(receiver, after)
            return after
        if uses.is_metadata(method) or (uses.is_cut(method) and method not in ("detach", "detach_")):  # x.size(), x.item()
            if method == "size" and len(node.args) == 1 and not node.keywords:
                # `x.size(-1)`: one dimension, an int (its value where that dim's size is known)
                return _dim_size(recv, self._int_value(node.args[0])) or Provenance(Kind.NUMBER, node.lineno, dtype=api.INT)
            return Provenance(Kind.NUMBER, node.lineno, dtype=api.FLOAT if method == "item" and recv.dtype == api.FLOAT else None) if method in ("item", "numel", "dim") else None
        if method == "detach":
            return recv.but(leaf=True, requires_grad=False, detached=True, data_of=label(receiver) or recv.origin, composed_from=frozenset(), cut_deps=recv.param_deps,
                            graph=frozenset(), nondiff=None, line=node.lineno, node=node)
        if method in api.FLOAT_RESULT_METHODS and uses.keeps_values(method):  # x.float(), x.double()
            return self.derive(node, recv, [(recv, receiver)], dtype=api.FLOAT)
        if method == "to" or (method == "type" and (node.args or event.keyword("dtype"))):  # x.type() alone is a type name
            dtype = None
            for arg in [*node.args, *(kw.value for kw in node.keywords if kw.arg == "dtype")]:
                dtype = dtype or api.dtype_class(self.imports.qualname(arg))
                if method == "type" and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    dtype = dtype or api.tensor_type_class(arg.value)  # x.type("torch.LongTensor")
            if dtype == api.INT:
                return self.derive(node, recv, [(recv, receiver)], dtype=api.INT, nondiff="to")
            if method == "type":  # always a dtype change: unknown unless the argument names it
                return self.derive(node, recv, [(recv, receiver)], dtype=dtype, keep_dtype=False)
            return self.derive(node, recv, [(recv, receiver)], dtype=dtype or recv.dtype)
        if method == "type_as" and len(node.args) == 1:  # `(a >= b).type_as(x)`: x's dtype (unknown when x's is), not a's
            other = arg_provs[0] if arg_provs else None
            dtype = other.dtype if other is not None and other.kind is Kind.TENSOR else None
            return self.derive(node, recv, [(recv, receiver)], dtype=dtype, keep_dtype=False,
                               nondiff="to" if dtype == api.INT else None)
        if method in api.NONDIFFERENTIABLE:
            dtype = api.INT if method in api.INT_RESULT_METHODS else recv.dtype
            scalar = True if method in api.REDUCTIONS and not node.args and not node.keywords else ("propagate" if method in api.SAME_SHAPE else None)
            shape = self._op_shape(method, recv, node.args, node.keywords)
            if shape == "propagate":  # x.eq(y), x.sign(): the broadcast of the operands
                shape = _broadcast_shape([(recv, receiver), *zip(arg_provs, node.args)])
            if method in api.DEVICE_MOVES:  # `loss.new_ones(n)`: a new tensor; the receiver gives its dtype and device only
                return self.derive(node, recv, [], dtype=dtype, scalar=None, shape=shape)
            return self.derive(node, recv, [(recv, receiver)], dtype=dtype, nondiff=method, scalar=scalar, shape=shape)
        if recv.origin.startswith("torch.distributions.") and recv.origin.rsplit(".", 1)[-1] in api.DISTRIBUTIONS \
                and (method in api.DISTRIBUTION_GRAD_METHODS or method in api.DISTRIBUTION_SHAPED_METHODS):
            shape, scalar = self._sampled_shape(node, method, recv, arg_provs)
            if method not in api.DISTRIBUTION_GRAD_METHODS:  # `dist.sample()`: drawn without a graph
                return Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=False, no_grad=self.no_grad, loop=self.loop,
                                  epoch=self.epoch, origin=self._origin(node), node=node, shape=shape, scalar=scalar)
            # `dist.log_prob(a)`, `dist.entropy()`: a new tensor with the graph of what the distribution was built from
            return self.derive(node, recv, [(recv, receiver), *zip(arg_provs, node.args)], scalar=scalar, shape=shape)
        if method in api.TENSOR_OPS or method in api.FLOAT_RESULT_METHODS or method in api.INT_RESULT_METHODS:
            # (`x.view(size[0], -1)`: an op whose only tensor is its receiver meets no other, whatever its arguments are)
            inputs = [(recv, receiver)] + ([] if method in api.SHAPE_OPERANDS or api.one_tensor(method) else
                                           [(p, a) for p, a in zip(arg_provs, node.args)])
            dtype = api.INT if method in api.INT_RESULT_METHODS else (api.FLOAT if method in api.FLOAT_RESULT_METHODS else None)
            if method in api.REDUCTIONS:
                scalar = not node.args and not any(kw.arg == "dim" for kw in node.keywords)
                scalar = True if scalar else None
            elif method in api.SAME_SHAPE:
                scalar = "propagate"
            else:
                scalar = False if recv.scalar is False and method in api.KEEPS_NUMEL else None  # `losses.view(-1)`
            large = recv.as_large_as if method in api.KEEPS_NUMEL else frozenset()
            shape = self._op_shape(method, recv, node.args, node.keywords)
            index = _index_argument(node, method, arg_provs, 1)
            if index is not None:  # `scores.gather(1, target.view(-1, 1))`: the index's shape
                scalar, large, shape = (False if index.scalar is False else scalar), index.as_large_as, index.shape
            result = self.derive(node, recv, inputs, dtype=dtype, scalar=scalar, as_large_as=large, shape=shape)
            if method in api.VIEWS:
                result = self._view(result, recv)
            if result is not None and result.requires_grad:
                result = self._note_saved(node, result, method, [receiver, *node.args])
            return result
        return None

    def _dispatched(self, cls: ClassInfo, name: str, node: ast.Call, instance: Provenance, arg_provs, event) -> Provenance | None:
        """A plain class's method defined by a base class and reaching a method the class overrides (`BaseCAM.__call__`
        calling `self.get_cam_weights` of `GradCAM`): walked for this call with the instance as `self`, whose own
        methods it then calls; unknown (None) where the call is not walked (the base's summary is not the class's)."""
        if instance.origin == "self" or instance.node is None or self.summary_only:
            return None
        info = _defined_above(cls, name)
        if info is None or info.walking or info.owner is not self:
            return None
        keywords, self._keywords = self._keywords, None
        if not info.walked:
            self.walk_function(info)
        # (the base's summary is not this class's: what the walk returns, even one walked for its shape alone)
        walked = self.call_in_context(info, node, arg_provs, keywords, instance, own_summary=False)
        if walked is _NOT_WALKED:
            return None
        event.role, event.function = None, info
        return _no_graph_if(self.no_grad, walked)

    def _super_method(self, receiver, method: str):
        """`super().<method>` in a method of a plain class of this module: (the method as the next class of the
        instance's MRO defines it, the instance); None where unknown (super with arguments, a base of another module)."""
        if not (type(receiver) is ast.Call and type(receiver.func) is ast.Name and receiver.func.id == "super"
                and not receiver.args and not receiver.keywords and method != "__init__"):
            return None
        function = self.function
        cls = function.cls if function is not None else None
        if cls is None or cls.is_module and method != "forward" or isinstance(function.node, ast.Lambda) \
                or self._is_static(function.node) or not self._builtin(receiver.func):
            return None
        positional = [*function.node.args.posonlyargs, *function.node.args.args]
        instance = self.lookup(positional[0].arg) if positional else None
        if instance is None or instance.kind is not Kind.MODULE or not isinstance(instance.module_class, ClassInfo):
            return None
        order = _module_chain(instance.module_class, self.imports.qualname) if cls.is_module else class_mro(instance.module_class)
        at = next((i for i, c in enumerate(order or ()) if c is cls), None)
        if at is None:
            return None
        info = next((c.methods[method] for c in order[at + 1:] if method in c.methods), None)
        return (info, instance) if info is not None else None

    def _base_init(self, node: ast.Call, arg_provs) -> None:
        """`super().__init__(model, layer)` in a constructor walked for one construction: the base's __init__ walked
        for that instance too, so the attributes it sets are this instance's (a base class's method reads them)."""
        keywords, self._keywords = self._keywords, None
        function = self.function
        if function is not None and function.name == "__init__" and function.context_of is None and any(
                p is not None and p.param_deps for p in [*arg_provs, *(keywords or {}).values()]):
            function.uses_arguments = True  # (what it is given reaches the base's attributes: walked per construction)
        instance = function.__dict__.get("instance") if function is not None and function.name == "__init__" else None
        if instance is None or instance.node is None or function.cls is None:
            return None
        init = next((found for base in function.cls.bases if (found := inherited_method(base, "__init__")) is not None), None)
        if init is not None and init.cls is not None and not init.cls.is_module and not init.walking:
            if not init.walked:
                self.walk_function(init)
            self.call_in_context(init, node, arg_provs, keywords, instance)
        return None

    def _forward_hook(self, node: ast.Call, layer: Provenance | None):
        """`layer.register_forward_hook(self.save_activation)` (a method of this object, or a function of this module)
        named nowhere but in its def and here: its third parameter (after `module, inputs`) is what `layer` outputs, a
        tensor autograd records when the layer has parameters, with as many elements as the layer's width at least.
        The hook's body is then walked with that value (`self.activation = output`, read by another method). A hook
        registered on a parameter marks the function for walking again with what its callers pass (the layer)."""
        if layer is None:
            return
        function = self.function
        if layer.kind is not Kind.MODULE:
            if self.via is None and function is not None and layer.origin == "param" and layer.param_deps:
                function.uses_arguments = True  # `target_layer.register_forward_hook(...)` of a module it is given
            return
        hook, argument = None, node.args[0]
        if isinstance(argument, ast.Attribute) and isinstance(argument.value, ast.Name):
            owner = self.lookup(argument.value.id)
            if owner is not None and owner.kind is Kind.MODULE and isinstance(owner.module_class, ClassInfo):
                hook = owner.module_class.methods.get(argument.attr)
        elif isinstance(argument, ast.Name):
            found = self.lookup_def(argument.id)
            hook = found if isinstance(found, FunctionInfo) and found.cls is None else None
        if hook is not None and (hook.walked or hook.walking) and "hook_outputs" in hook.__dict__ and hook.cls is not None:
            # registered again (another instance's layer) after its body was walked with the first layer's output:
            # what it keeps on `self` is no longer known
            for attr in setter_attributes(hook.node):
                hook.cls.late[attr] = None
            return
        if hook is None or hook.owner is not self or hook.walked or hook.walking or isinstance(hook.node, ast.Lambda) \
                or not self._only_registered(hook):
            return  # (walked already, or called some other way too: its parameters stay symbolic)
        args = hook.node.args
        positional = [*args.posonlyargs, *args.args]
        method = hook.cls is not None and not self._is_static(hook.node)
        if len(positional) != 3 + method or args.vararg is not None or args.kwonlyargs:
            return
        cls = layer.module_class
        if isinstance(cls, str):
            name = cls.rsplit(".", 1)[-1]
            width = _last_width(layer) if name == "Sequential" else (_width_of(layer) if name in _LAYER_WIDTH else None)
            trainable = api.layer_parameters(name) not in ((), None) or (name == "Sequential" and width is not None)
            wide = width is not None and width > 1
        elif isinstance(cls, ClassInfo) and cls.is_module and cls.methods.get("forward") is not None:
            forward = cls.methods["forward"]  # a user module: what its forward's summary knows whatever its input
            if not forward.walked and forward.owner is self and not forward.walking and not self._is_static(forward.node):
                self.walk_function(forward)
            ret = self._summary_of(forward).returns if forward.walked else None
            if ret is None or ret.kind is not Kind.TENSOR:
                return
            trainable, wide = ret.requires_grad is True and not ret.no_grad, ret.scalar is False
        else:
            return
        output = Provenance(Kind.TENSOR, node.lineno, leaf=False if trainable else None, requires_grad=True if trainable else None,
                            dtype=api.FLOAT if trainable else None, origin=f"{self.model.text(node.func.value)}(...)", node=node.func,
                            graph=frozenset({id(node)}) if trainable else frozenset(), scalar=False if wide else None)
        before = hook.__dict__.get("hook_outputs", {})
        hook.hook_outputs = {**before, positional[-1].arg: merge(before[positional[-1].arg], output) if before else output}  # type: ignore[attr-defined]

    def _only_registered(self, hook: FunctionInfo) -> bool:
        """The hook is named nowhere but in its def and its registration: a function named twice in the code; a method
        named once in its class after a dot, and after a dot nowhere outside the classes that define one of that name,
        never as a bare name but in the defs."""
        name = hook.name
        if hook.cls is None:
            return self.model.mentions(name) == 2
        owners = [cls for cls in self.model.classes.values() if name in cls.methods]
        if self.model.mentions(name) != len(owners):
            return False
        count = lambda tree: sum(1 for sub in ast.walk(tree) if type(sub) is ast.Attribute and sub.attr == name)  # noqa: E731
        inside = count(hook.cls.node)
        return inside == 1 and count(self.model.tree) == inside + sum(count(cls.node) for cls in owners if cls is not hook.cls)

    def _grow_container(self, receiver: ast.expr, container: Provenance, added: Provenance | None, call: ast.Call):
        """`self.body.add_module(f"block{i}", Block())`, `self.layers.append(Block())`: the container's layers, in order
        (a layer not known as a module: its layers from there on are unknown)."""
        if container.elements and container.elements[-1] is None:
            return
        after = container.but(elements=container.elements + ((added,) if added is not None and added.kind is Kind.MODULE else (None,)),
                              tail=(), grown=container.grown | {id(call)})  # (a known end of `*layers` is no longer the end)
        name = label(receiver)
        if name is None:
            return
        self.update(name, after)
        info = self.function
        if name.startswith("self.") and info is not None and info.cls is not None and info.name == "__init__" and info.context_of is None \
                and info.cls.attributes.get(name[5:]) is container:
            info.cls.attributes[name[5:]] = after  # (what __init__ leaves there is what the other methods see)

    def _note_backward(self, node: ast.Call, recv: Provenance | None, gradient: bool | None = None):
        """A helper's backward of a value made from its parameters is judged again at each call site passing a tensor
        known to have several elements (info.backward_of_arguments); there, a receiver known to have several elements
        and requiring grad is kept for AG005 (model.call_site_backwards). `torch.autograd.grad(outputs, inputs)` without
        grad_outputs too (`gradient`: False, its caller has looked)."""
        if gradient is None:
            gradient = bool(node.args) or any(kw.arg == "gradient" for kw in node.keywords)
        function = self.function
        if not gradient and self.via is None and function is not None:
            # (whatever the receiver is known to be here: a call passing tensors of known shape walks the body with them)
            function.backpropagates = True  # type: ignore[attr-defined]
        if recv is None or recv.kind is not Kind.TENSOR or gradient:
            return
        if self.via is None:
            if function is not None and recv.param_deps:
                function.backward_of_arguments = True  # type: ignore[attr-defined]
        elif recv.scalar is False and recv.requires_grad and not self.no_grad and not self.summary_only:
            self.model.call_site_backwards.setdefault(id(node), recv)
            if _backpropagates_parameter(function, node):
                # `strategy.backward(loss)` whose body is `loss.backward()`: the call that hands it over is the bug's too
                self.model.backward_handovers.setdefault(id(self.via.statement), (self.via.statement, recv, node))

    def _optimizer_class(self, cls: ClassInfo, depth: int = 0) -> bool:
        for base in cls.node.bases:
            qualname = self.imports.qualname(base) or ""
            if qualname.startswith(api.OPTIMIZER_PREFIXES) and not qualname.startswith(api.NOT_OPTIMIZERS_PREFIXES):
                return True
            inner = self.lookup_def(base.id) if isinstance(base, ast.Name) else None
            if isinstance(inner, ClassInfo) and inner is not cls and depth < 4 and self._optimizer_class(inner, depth + 1):
                return True
        return False

    def _is_optimizer(self, receiver: ast.expr | None, prov: Provenance | None) -> bool:
        if prov is not None and prov.origin != "param":  # a helper's parameter is symbolic: judge it by its name
            return prov.kind is Kind.OPTIMIZER
        name = label(receiver) if receiver is not None else None
        if name is None:
            return isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "optimizers"
        short = name.rsplit(".", 1)[-1]
        if "sched" in short.lower() or self.model.imports.other_framework:
            return False
        return api.looks_like_optimizer_name(short) or name in self._zero_grad_receivers()

    def _zero_grad_receivers(self) -> set[str]:
        if not self.zero_grad_receivers:
            names = set()
            for node in ast.walk(self.model.tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "zero_grad":
                    name = label(node.func.value)
                    if name:
                        names.add(name)
            self.zero_grad_receivers = names or {"\0"}
        return self.zero_grad_receivers

    def _note_saved(self, node, result: Provenance, op: str, operands: list[ast.expr]) -> Provenance:
        """What `op`'s backward keeps (torch's derivatives.yaml), given which operands require grad: its output on the
        result (only when kept: `(v - t).pow(2)` keeps `v - t`, not its result), its inputs on their names."""
        with_dim = type(node) is ast.Call and api.gives_dim(op, node, operands[1:], self.prov_of)  # (`x.max(1)`: its own form)
        grads = self._mark_saved(operands, op, node, with_dim)
        return result.but(saved_by=op, saved_node=node) if api.output_saved(op, grads, with_dim) else result

    def _view(self, result: Provenance | None, base: Provenance) -> Provenance | None:
        """A view shares its base's storage and version counter: writing it writes the base (AG001, AG006)."""
        if result is None or base is None or base.kind is not Kind.TENSOR:
            return result
        if not (base.is_trainable_leaf or base.base is not None or base.saved_by is not None):
            return result  # only a trainable leaf's or a saved tensor's views are worth following
        return result.but(base=base.base or base, saved_by=result.saved_by or base.saved_by, saved_node=result.saved_node or base.saved_node)

    def _inplace_call(self, node: ast.Call, target: ast.expr, prov: Provenance | None, op: str, layer: ast.Call | None = None):
        """`F.relu(x, inplace=True)`, `torch.relu_(x)`, `nn.ReLU(inplace=True)(x)`: x is written in place."""
        if prov is not None and prov.kind is Kind.TENSOR:
            self.emit(InplaceEvent(node, self.ctx(), target=target, prov=prov, op=op, form="call", layer=layer))

    def _out_write(self, node: ast.Call, short: str):
        """`torch.arange(n, out=w)` writes `w` in place; only a trainable leaf's write is recorded (AG001: with grad
        enabled, torch refuses an `out=` that requires grad)."""
        out = next((kw.value for kw in node.keywords if kw.arg == "out"), None)
        prov = self.prov_of(out) if out is not None else None
        if prov is not None and prov.is_trainable_leaf:
            self.emit(InplaceEvent(node, self.ctx(), target=out, prov=prov, op=f"{short}(out=...)", form="call"))

    def _mark_saved(self, operands: list[ast.expr], op: str, node: ast.AST | None = None, with_dim: bool = False):
        # Autograd keeps these inputs for backward: an in-place change before backward breaks it (AG006).
        grads = [bool(p is not None and p.kind is Kind.TENSOR and p.requires_grad) for p in map(self.prov_of, operands)]
        kept = api.saved_inputs(op, grads, with_dim)
        for index, operand in enumerate(operands):
            if index in kept:  # not `h` in `h * mask`, `h / 2`: the backward does not need it
                self._mark(operand, op, node)
        return grads

    def _mark(self, operand: ast.expr, op: str, node: ast.AST | None):
        # a view kept for backward shares its base's version counter: changing the base in place breaks it too
        name = label(uses.aliased_base(operand))
        prov = self.lookup(name) if name is not None else None
        # a function's tensor parameter (a forward's input) is saved too: the version check does not ask for a graph
        # (one already broken by an in-place change is saved anew, at its new version: a later change breaks this op's copy)
        if prov is not None and prov.kind is Kind.TENSOR and (prov.has_graph or prov.origin == "param") \
                and (prov.saved_by is None or id(prov.saved_node) in self.edited_saves):
            self.update(name, prov.but(saved_by=op, saved_node=node))
            function = self.function
            if prov.origin == "param" and function is not None and self.via is None and self.scope.node is function.node \
                    and not self.branching and not self.left_early:
                # a forward's input kept on every run, even if the name is rebound afterwards (`x = self.block(x) + x`)
                function.__dict__.setdefault("kept_params", {}).setdefault(name, (prov, op))

    def _note_sequential_order(self, node: ast.Call, layers: tuple):
        """`nn.Sequential(..., nn.ReLU(), nn.Dropout(0.5, inplace=True))`: an in-place layer right after a layer whose
        backward keeps its own output overwrites that output; each forward of the container is then an AG006 (forward())."""
        hazards = []
        for before, layer in zip(layers, layers[1:]):
            if before is None or layer is None or before.kind is not Kind.MODULE or layer.kind is not Kind.MODULE:
                continue
            defaulted = before.origin.startswith(_DEFAULT_LAYER) and before.module_class is None and before.text is not None
            if not (isinstance(before.module_class, str) or defaulted) or not isinstance(layer.module_class, str):
                continue
            if not isinstance(before.node, ast.Call) or not isinstance(layer.node, ast.Call):
                continue
            first, name = (before.text if defaulted else before.module_class).rsplit(".", 1)[-1], layer.module_class.rsplit(".", 1)[-1]
            if defaulted and not (self.function is not None and self.function.name == "__init__"):
                continue
            built = layer.node
            if not api.saves_output(first):
                continue
            inplace = self._inplace_flag(built, name)
            if inplace is None:
                continue
            needed = api.noop_unless_positive(api.layer_op(name))
            if needed is not None and not _writes(built, api.layer_op(name), 0):
                # `nn.Dropout(dropout, inplace=True)` with `dropout` a parameter of this constructor: its callers decide
                argument = _argument(built, needed, 0)
                if not (isinstance(argument, ast.Name) and self.function is not None and self.function.name == "__init__"):
                    continue
                hazards.append((first, before.node, name, built, (self.function.context_of or self.function, argument.id), inplace,
                                (self.function.context_of or self.function, before.origin[len(_DEFAULT_LAYER):]) if defaulted else None))
                continue
            hazards.append((first, before.node, name, built, None, inplace,
                            (self.function.context_of or self.function, before.origin[len(_DEFAULT_LAYER):]) if defaulted else None))
        if hazards:
            self.model.__dict__.setdefault("_sequential_hazards", {})[id(node)] = hazards
        else:  # (a container walked again, by the server's function walk, may have lost them)
            self.model.__dict__.get("_sequential_hazards", {}).pop(id(node), None)

    def _unpacked_end(self, node: ast.Call, short: str, arg_provs) -> tuple:
        """`nn.Sequential(*layers)`: (its last layer,) when the list's end is known (written out, or the appends that end
        it: `layers.append(nn.ReLU())` after `if norm: layers.append(...)`) and nothing moves its items; else ()."""
        if short != "Sequential" or len(node.args) != 1 or type(node.args[0]) is not ast.Starred or node.keywords or not arg_provs:
            return ()
        listed = arg_provs[0]
        if listed is None or listed.kind is not Kind.SEQUENCE or listed.origin == _EACH:
            return ()  # (a comprehension's one element stands for every item: none, maybe)
        end = listed.tail if listed.origin == _SOME_ITEMS else listed.elements
        if not end or end[-1] is None or end[-1].kind is not Kind.MODULE or self._order_changed(node) \
                or self._grown_in_loop(node.args[0].value, node) or self._container_grown(node):
            return ()
        return end[-1:]

    def _item_changes(self) -> syntax.ItemChanges:
        """syntax.item_changes of the module, asked name by name (kept on its tree), a call that _reads_only counted as
        reading its arguments only."""
        return syntax.kept_on(self.model.tree, "_item_changes",
                              lambda tree: syntax.ItemChanges(tree, self.model.source.text, functools.partial(_reads_only, self.imports),
                                                              functools.partial(_imported_defs, self.imports, self.resolver, self.model.source)))

    def _may_change_here(self, call: ast.Call, read: ast.expr) -> bool:
        """A change at `call` of a container may reach the one `read` names: not `self.stages.append(m)` in a class that
        neither this method's class nor any of its bases or subclasses in the module is (another class's `stages`)."""
        receiver = call.func.value if type(call.func) is ast.Attribute else None
        here = self.function.cls if self.function is not None else None
        if here is None or not (label(receiver) or "").startswith("self.") or not (label(read) or "").startswith("self."):
            return True
        owner = None
        for cls in self.model.classes.values():
            if cls.node.lineno <= call.lineno <= (cls.node.end_lineno or cls.node.lineno) and (owner is None or cls.node.lineno > owner.node.lineno):
                owner = cls
        return owner is None or owner is here or _derives(owner, here) or _derives(here, owner)

    def _container_grown(self, built: ast.Call, unbound: bool = True) -> bool:
        """The name or attribute the container is bound to is added to, changed by item or deleted from anywhere in the
        module (`net.append(...)`, `self.seq.add_module(...)`, `net[-1] = ...`, given to a call that may:
        syntax.item_changes), or (`unbound`) the container is not bound by this statement at all (returned, passed on:
        where it goes, that is not known): its last layer may be another."""
        stmt = self.ctx().statement
        value = getattr(stmt, "value", None)
        targets = stmt.targets if type(stmt) is ast.Assign and value is built else \
            [stmt.target] if type(stmt) is ast.AnnAssign and value is built else []
        if type(stmt) is ast.Assign and type(value) is ast.Tuple and any(element is built for element in value.elts):
            # `self.a, self.b = nn.Sequential(...), nn.Sequential(...)`: the target in its place
            position = next(i for i, element in enumerate(value.elts) if element is built)
            targets = [t.elts[position] if type(t) in (ast.Tuple, ast.List) and len(t.elts) == len(value.elts) else None for t in stmt.targets]
        elif not targets:
            # `(gate := nn.Sequential(...))`: the name it binds
            targets = [sub.target for sub in syntax.nodes(stmt) if type(sub) is ast.NamedExpr and sub.value is built]
        names = {label(target) if target is not None else None for target in targets}
        if not names or None in names:
            return unbound
        changed = self._item_changes()
        return any(changed.get(name.rsplit(".", 1)[-1]) for name in names)

    def _grown_in_loop(self, listed: ast.expr, built: ast.Call) -> bool:
        """The list `*listed` unpacks is added to in a loop that the container's construction is not in: a loop that may
        run no pass (`for _ in range(depth)` with depth 0) leaves the list without what its body appends."""
        if type(listed) in (ast.List, ast.Tuple):
            return False  # (`*[conv, nn.ReLU()]`: written out)
        name = label(listed)
        function = self.function.context_of or self.function if self.function is not None else None
        root = function.node if function is not None else self.model.tree
        if name is None:
            return True
        called, methods, loops = set(), [], []
        for sub in syntax.nodes(root):
            kind = type(sub)
            if kind is ast.Call:
                called.add(id(sub.func))
            elif kind is ast.Attribute and label(sub.value) == name:
                methods.append(sub)
            elif kind in (ast.For, ast.AsyncFor, ast.While):
                loops.append(sub)
        if any(id(method) not in called for method in methods):
            return True  # (`add = layers.append`: the list may grow where the name is not seen)
        for loop in loops:
            mentioned = rebound = False
            for sub in syntax.nodes(loop):
                if type(sub) in (ast.Name, ast.Attribute) and label(sub) == name:
                    mentioned = True
                elif type(sub) is ast.Assign and any(label(target) == name for target in sub.targets):
                    rebound = True
            if mentioned and not (rebound and loop.lineno <= built.lineno <= (loop.end_lineno or loop.lineno)):
                return True  # (not a list made afresh in each pass that builds its own container)
        return False

    def _order_changed(self, node: ast.Call) -> bool:
        """The layers of the container `node` builds may be in another order when it runs: the list it unpacks
        (`*layers`), the name it is bound to, or (an nn.Sequential subclass) `self` has items moved, dropped or
        replaced, or appended to where the walk may not follow, in this function or class (syntax.reordered_labels)."""
        function = self.function.context_of or self.function if self.function is not None else None
        here = function.node if function is not None else self.model.tree
        names = {arg.value.id: here for arg in node.args if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name)}
        cls = function.cls.node if function is not None and function.cls is not None else None
        if self._sequential_base_init(node.func.value if isinstance(node.func, ast.Attribute) else None) and cls is not None:
            names["self"] = cls
        stmt = self.ctx().statement
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        for target in targets:
            name = label(target)
            if name is not None:
                names[name] = cls if name.startswith("self.") and cls is not None else here
        cache = self.model.__dict__.setdefault("_reordered_labels", {})
        for name, root in names.items():
            if id(root) not in cache:
                cache[id(root)] = (root, syntax.reordered_labels(root))
            if name in cache[id(root)][1]:
                return True
        return False

    def _sequential_hazards(self, node: ast.Call, built: ast.Call | None):
        """(saving layer, its node, in-place layer, its node) of the container `built` that certainly write."""
        found = self.model.__dict__.get("_sequential_hazards", {}).get(id(built)) if built is not None else None
        for first, first_node, name, layer_node, parameter, inplace, defaulted in found or ():
            if parameter is not None and not self._constructed_positive(*parameter):
                continue
            if inplace is not True and not self._constructed_true(*inplace):
                continue
            if defaulted is not None and not self._constructed_default(*defaulted):
                continue
            yield first, first_node, name, layer_node

    def _default_layer(self, built: ast.expr) -> Provenance | None:
        """`activation_layer(...)` in a constructor, `activation_layer` one of its parameters, never rebound, whose default
        names a torch.nn layer class (`activation_layer=nn.ReLU`): a MODULE marked _DEFAULT_LAYER (no class known)."""
        function = self.function
        init = function and (function.context_of or function)
        if type(built) is not ast.Call or type(built.func) is not ast.Name or init is None or init.name != "__init__" \
                or init.node is not self.scope.node or self.via is not None:
            return None
        name = built.func.id
        args = init.node.args
        positional = [*args.posonlyargs, *args.args]
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        default = defaults.get(name)
        if default is None or _bound_names(init.node.body).get(name, 0):
            return None
        qualname = self.imports.qualname(default)
        short = qualname.rsplit(".", 1)[-1] if qualname else ""
        if not qualname or not qualname.startswith("torch.nn.") or qualname.startswith("torch.nn.functional") or not short[:1].isupper() \
                or api.layer_op(short) is None:
            return None
        return Provenance(Kind.MODULE, built.lineno, origin=_DEFAULT_LAYER + name, text=qualname, node=built)

    def _constructed_default(self, init: FunctionInfo, parameter: str) -> bool:
        """Every construction of `init`'s class seen in this module (at least one) leaves `parameter` at its default."""
        positional = [arg.arg for arg in [*init.node.args.posonlyargs, *init.node.args.args]][1:]
        seen = False
        for event in self._constructions(init):
            call = event.node
            if any(isinstance(arg, ast.Starred) for arg in call.args) or any(kw.arg is None or kw.arg == parameter for kw in call.keywords):
                return False
            if parameter in positional and positional.index(parameter) < len(call.args):
                return False
            seen = True
        return seen

    def _inplace_flag(self, built: ast.Call, name: str):
        """Whether the torch.nn layer `built` (of class `name`) works in place: True for `inplace=True`; in a constructor,
        for `inplace=flag` with `flag` one of its parameters, or `**params` of a dict display bound once in it
        (`params = {} if inplace is None else {"inplace": inplace}`), (init, test, parameters): asked when the container
        runs, of every construction seen (_constructed_true); None otherwise (an unknown flag is no in-place layer)."""
        given = _argument(built, "inplace", api.layer(name).get("inplace"))
        if given is not None or not any(kw.arg is None for kw in built.keywords):
            if _const(given) is True:
                return True
            value = given
        else:
            value = self._splatted_keyword(built, "inplace")
            if value is None:
                return None
        function = self.function
        init = function and (function.context_of or function)
        if init is None or init.name != "__init__" or init.node is not self.scope.node:
            return None
        params = {a.arg for a in [*init.node.args.posonlyargs, *init.node.args.args, *init.node.args.kwonlyargs]}
        stored = _bound_names(init.node.body)
        if isinstance(value, ast.Constant):
            test, truth = None, value.value
        elif isinstance(value, ast.Name) and value.id in params and stored.get(value.id, 0) == 0:
            test, truth = None, value.id
        elif isinstance(value, tuple):  # (a test of parameters, the flag in the branch it picks)
            test, truth = value
            if isinstance(truth, ast.Name) and truth.id in params and stored.get(truth.id, 0) == 0:
                truth = truth.id
            elif isinstance(truth, ast.Constant):
                truth = truth.value
            else:
                return None
        else:
            return None
        if test is None and truth is True:
            return True
        if test is None and not isinstance(truth, str):
            return None
        return (init, test, truth)

    def _splatted_keyword(self, built: ast.Call, keyword: str):
        """The value `**params` gives `keyword`, `params` a name this function binds once, at its top level, to a dict
        display (the node), or to `{...} if test else {...}` with the key in one branch: (test taken, value) / (test not
        taken, value) as a pair (test, value) with the test negated where needed; None where not known."""
        splats = [kw.value for kw in built.keywords if kw.arg is None]
        if len(splats) != 1 or not isinstance(splats[0], ast.Name) or any(kw.arg == keyword for kw in built.keywords):
            return None
        name = splats[0].id
        body = self.scope.node.body if isinstance(self.scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if body is None or _bound_names(body).get(name) != 1:
            return None
        stmt = next((st for st in body if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                     and st.targets[0].id == name), None)
        if stmt is None or stmt.lineno > built.lineno or self._mutated(body, name):
            return None

        def entry(display):
            if not isinstance(display, ast.Dict) or any(key is None for key in display.keys):
                return False, None  # (a `**` inside the display: its keys are not known)
            found = [value for key, value in zip(display.keys, display.values) if isinstance(key, ast.Constant) and key.value == keyword]
            return True, (found[-1] if found else None)

        value = stmt.value
        if isinstance(value, ast.Dict):
            known, found = entry(value)
            return found if known else None
        if isinstance(value, ast.IfExp):
            (known_a, a), (known_b, b) = entry(value.body), entry(value.orelse)
            if not (known_a and known_b) or (a is None) == (b is None):
                return None
            return (value.test, a) if a is not None else (ast.UnaryOp(op=ast.Not(), operand=value.test), b)
        return None

    @staticmethod
    def _mutated(body: list, name: str) -> bool:
        """`params[...] = ...`, `params.update(...)`, `params.pop(...)`, `del params[...]`, `params |= ...`, or `params`
        handed to a call (which may change it: `make_safe(params)`) anywhere in `body`."""
        for node in (n for stmt in body for n in ast.walk(stmt)):
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                return True
            if isinstance(node, ast.Call) and (any(isinstance(a, ast.Name) and a.id == name for a in node.args)
                                               or any(kw.arg is not None and isinstance(kw.value, ast.Name) and kw.value.id == name
                                                      for kw in node.keywords)):
                return True
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name \
                    and isinstance(node.ctx, (ast.Store, ast.Del)):
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id == name and node.func.attr in _DICT_MUTATORS:
                return True
        return False

    def _constructed_true(self, init: FunctionInfo, test, flag) -> bool:
        """Every construction of `init`'s class seen in this module (at least one) takes the branch `test` picks (None:
        no test) and passes `True` for the parameter `flag` (or leaves it to a default that is True)."""
        names = sorted({flag} | ({n.id for n in ast.walk(test) if isinstance(n, ast.Name)} if test is not None else set()))
        columns = [self._constructed_values(init, name) for name in names]
        if not columns or not columns[0] or any(len(column) != len(columns[0]) for column in columns):
            return False
        for row in zip(*columns):
            values = dict(zip(names, row))
            if test is not None and syntax.test_truth(test, values) is not True:
                return False
            if values[flag] is not True:
                return False
        return True

    def _constructed_positive(self, init: FunctionInfo, parameter: str) -> bool:
        """Every construction of `init`'s class seen in this module passes a literal > 0 for `parameter` (or leaves it to
        a default that is one), and there is at least one."""
        node = init.node
        positional = [arg.arg for arg in [*node.args.posonlyargs, *node.args.args]][1:]
        defaults = dict(zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults))
        defaults.update({arg.arg: default for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults) if default is not None})
        seen = False
        for event in self._constructions(init):
            call = event.node
            if any(isinstance(arg, ast.Starred) for arg in call.args) or any(kw.arg is None for kw in call.keywords):
                return False
            value = next((kw.value for kw in call.keywords if kw.arg == parameter), None)
            if value is None and parameter in positional and positional.index(parameter) < len(call.args):
                value = call.args[positional.index(parameter)]
            value = _number(value if value is not None else defaults.get(parameter))
            if value is None or value <= 0:
                return False
            seen = True
        return seen

    def _constructions(self, init: FunctionInfo) -> list:
        """The calls of `init`'s class seen so far, from an index grown with the events (the walk asks again and again:
        a scan of every event per question was quadratic on large files)."""
        events = self.model.events
        state = self.model.__dict__.get("_constructions_seen")
        if state is None or state[0] is not events or state[1] > len(events):
            state = self.model.__dict__["_constructions_seen"] = [events, 0, {}]
            for event in self.events_before:  # (a block walked again: the events before it are the module's too)
                if _constructs(event):
                    state[2].setdefault(id(event.function), []).append(event)
        found = state[2]
        for index in range(state[1], len(events)):
            event = events[index]
            if _constructs(event):
                found.setdefault(id(event.function), []).append(event)
        state[1] = len(events)
        return found.get(id(init), ())

    def _first_layer(self, name: str | None, built: ast.Call | None) -> tuple[str | None, ast.Call | None]:
        """The layer a module applies first to its input: itself, or a Sequential's first element (of `*layers`, the
        first append every construction of the class runs: `if pre_act: layers.append(nn.ReLU(inplace=True))`)."""
        first = built.args[0] if name == "Sequential" and built is not None and built.args else None
        if isinstance(first, ast.Starred):
            first = self._first_appended(built)
        elif isinstance(first, ast.Name):
            # `conv = nn.Conv1d(...)` (maybe `conv = weight_norm(conv)`), then `nn.Sequential(conv, ...)`: that torch layer
            layer = self.prov_of(first)
            first = layer.node if layer is not None and layer.kind is Kind.MODULE and isinstance(layer.module_class, str) else None
        if isinstance(first, ast.Call):
            inner = first.func
            return (inner.attr if isinstance(inner, ast.Attribute) else getattr(inner, "id", None)), first
        return name, built

    def _first_appended(self, built: ast.Call) -> ast.expr | None:
        """The first layer appended to the list `nn.Sequential(*layers)` unpacks, when each `if` around the appends
        tests a constructor parameter that every construction of the class in this module settles (a literal, or the
        default it leaves); None when any doubt remains (an append in a loop, the list used otherwise)."""
        found = self.model.__dict__.get("_starred_layers", {}).get(id(built))
        if found is None or found[0] is not built:  # (the node kept: an id freed by an edit may name another)
            return None
        _, init, name = found
        cache = self.model.__dict__.setdefault("_guarded_appends", {})  # (read at each run of the container)
        if id(built) not in cache or cache[id(built)][0] is not built:
            cache[id(built)] = (built, syntax.guarded_appends(init.node, name, built))
        appends = cache[id(built)][1]
        for layer, guards in appends or ():
            taken = self._guards_taken(init, guards)
            if taken is None:
                return None
            if taken:
                return layer
        return None

    def _guards_taken(self, init: FunctionInfo, guards: list) -> bool | None:
        """Whether every construction of `init`'s class runs the branch under `guards` ((parameter, test) pairs): True,
        False (none does), None (some may)."""
        for parameter, test in guards:
            verdicts = {test(value) for value in self._constructed_values(init, parameter)}
            if verdicts == {False}:
                return False
            if verdicts != {True}:
                return None
        return True

    def _constructed_values(self, init: FunctionInfo, parameter: str) -> list:
        """The literal each construction of `init`'s class in this module passes for `parameter` (or leaves to its
        default); empty when one passes anything else, or none is seen."""
        node = init.node
        positional = [arg.arg for arg in [*node.args.posonlyargs, *node.args.args]][1:]
        defaults = dict(zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults))
        defaults.update({arg.arg: default for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults) if default is not None})
        values = []
        for event in self.model.of_type(CallEvent):
            if event.function is not init or event.role is not None:
                continue
            call = event.node
            if any(isinstance(arg, ast.Starred) for arg in call.args) or any(kw.arg is None for kw in call.keywords):
                return []
            value = next((kw.value for kw in call.keywords if kw.arg == parameter), None)
            if value is None and parameter in positional and positional.index(parameter) < len(call.args):
                value = call.args[positional.index(parameter)]
            value = value if value is not None else defaults.get(parameter)
            if not isinstance(value, ast.Constant):
                return []
            values.append(value.value)
        return values

    def torch_call(self, node: ast.Call, qualname: str, arg_provs) -> Provenance | None:
        short = qualname.rsplit(".", 1)[-1]
        module = qualname[: -len(short) - 1]
        if qualname == "torch.autograd.grad":
            outputs = node.args[0] if node.args else _argument(node, "outputs", None)
            if outputs is not None and not isinstance(outputs, (ast.List, ast.Tuple, ast.Starred)) \
                    and len(node.args) <= 2 and _argument(node, "grad_outputs", None) is None:
                self._note_backward(node, self.prov_of(outputs) if not node.args else arg_provs[0], gradient=False)
            return self._graph_grads(node, arg_provs)
        if qualname in api.TENSOR_WRAPPERS:
            data = arg_provs[0] if arg_provs else None
            kw = next((k for k in node.keywords if k.arg == "requires_grad"), None)
            default = qualname in api.PARAMETER_CLASSES
            requires_grad = _const(kw.value) if kw is not None else (_const(node.args[1]) if len(node.args) > 1 else default)
            return Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=requires_grad if isinstance(requires_grad, bool) else None,
                              dtype=data.dtype if data is not None and data.kind is Kind.TENSOR else None,
                              origin="nn.Parameter" if default else "Variable",
                              no_grad=self.no_grad, loop=self.loop, epoch=self.epoch, scalar=data.scalar if data is not None else None, shape=data.shape if data is not None and data.kind is Kind.TENSOR else None,
                              uninitialised=bool(data is not None and data.uninitialised), node=node)
        if qualname in api.DATA_LOADERS:
            return self._loader(node)
        if qualname in api.MODULE_WRAPPERS:
            # `conv = weight_norm(conv)`: the same layer (its weight recomputed from parameters), with the same forward
            given = arg_provs[0] if arg_provs and node.args and not isinstance(node.args[0], ast.Starred) else None
            return given if given is not None and given.kind is Kind.MODULE else None
        if qualname.startswith(api.OPTIMIZER_PREFIXES) and short[:1].isupper():
            if qualname.startswith(api.NOT_OPTIMIZERS_PREFIXES):
                return None
            return Provenance(Kind.OPTIMIZER, node.lineno, origin=qualname, params=self._optimizer_params(node, arg_provs), node=node)
        if module.startswith("torch.nn") and short[:1].isupper() and module != "torch.nn.functional":
            # nn.ModuleList([Block() for _ in ...]), nn.Sequential(a, b): a container of the layers it was given
            layers = tuple(flatten(arg_provs)) if api.layer_parameters(short) is None and arg_provs else ()
            if short == "Sequential" and len(layers) > 1 and not self.summary_only and not self._order_changed(node):
                self._note_sequential_order(node, layers)
            elif short == "Sequential" and len(node.args) == 1 and isinstance(node.args[0], ast.Starred) and arg_provs \
                    and (listed := arg_provs[0]) is not None and listed.kind is Kind.SEQUENCE and listed.origin == _SOME_ITEMS \
                    and len(listed.tail) > 1 and not self.summary_only and not self._order_changed(node):
                self._note_sequential_order(node, listed.tail)  # (the known end of `*layers`: its neighbours there)
            if short == "Sequential" and len(node.args) == 1 and isinstance(node.args[0], ast.Starred) \
                    and isinstance(node.args[0].value, ast.Name) and self.function is not None and self.function.name == "__init__":
                # `nn.Sequential(*layers)`: its first layer is read from the appends when the container runs (_first_layer)
                self.model.__dict__.setdefault("_starred_layers", {})[id(node)] = (node, self.function.context_of or self.function,
                                                                                  node.args[0].value.id)
            end = self._unpacked_end(node, short, arg_provs)
            layers = layers if layers and all(p is not None and p.kind is Kind.MODULE for p in layers) else ()
            filled = self._holds_layers(node) if layers else None  # (its truth, as `if self.blocks:` reads it)
            if short == "Sequential" and layers and self._container_grown(node, unbound=False):
                end = (None,)  # (added to or changed where the walk may not follow: its last layer is not known)
            reduction = _argument(node, "reduction", api.layer(short).get("reduction")) if short.endswith("Loss") else None
            text = self._text_argument(reduction) if reduction is not None and not isinstance(reduction, ast.Constant) else None
            if reduction is not None and not isinstance(text, ast.Constant):
                self._note_configured(reduction)
            return Provenance(Kind.MODULE, node.lineno, module_class=qualname, origin=qualname, node=node, elements=layers,
                              text=text.value if isinstance(text, ast.Constant) else None, value=self._named_width(short, node),
                              truth=filled, tail=end)
        if module.startswith("torch.nn.init"):
            return None
        if module.startswith("torch.distributions") and short in api.DISTRIBUTIONS:
            return self._distribution(node, arg_provs)
        if node.keywords and module in _OUT_MODULES:
            self._out_write(node, short)
        if module == "torch" and short in api.TENSOR_FACTORIES:
            return self.factory(node, short, arg_provs)
        if module in ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft") or qualname == "torch.autograd.backward":
            return self.torch_op(node, short, arg_provs)
        return None

    def _holds_layers(self, node: ast.Call) -> bool | None:
        """True where a torch.nn container surely holds a layer: layers given one by one or as a display, or a
        comprehension over `range(n)` with n known here (per instance) to be at least 1."""
        args = node.args
        if any(type(arg) is ast.Starred for arg in args) or not args:
            return None
        if len(args) > 1:
            return True
        arg = args[0]
        if type(arg) in (ast.List, ast.Tuple):
            return True if arg.elts and not any(type(elt) is ast.Starred for elt in arg.elts) else None
        if type(arg) in (ast.ListComp, ast.GeneratorExp) and len(arg.generators) == 1 and not arg.generators[0].ifs:
            over = arg.generators[0].iter
            if type(over) is ast.Call and type(over.func) is ast.Name and over.func.id == "range" and self._builtin(over.func) \
                    and len(over.args) == 1 and not over.keywords:
                count = self._int_value(over.args[0])
                if type(count) is int:
                    return count >= 1 or None
                function = self.function and (self.function.context_of or self.function)
                if type(over.args[0]) is ast.Name and function is not None and function.name == "__init__" and not self.summary_only \
                        and over.args[0].id in {a.arg for a in [*function.node.args.args, *function.node.args.kwonlyargs]}:
                    # `range(depth)` of a constructor parameter: asked when the container runs, of every construction seen
                    self.model.__dict__.setdefault("_ranged_containers", {})[id(node)] = (node, function, over.args[0].id)
        return None

    def _iterated_container(self, over: ast.expr, prov: Provenance | None) -> Provenance | None:
        """The torch.nn container a loop runs through: itself, `enumerate(self.blocks)` or `range(len(self.blocks))`."""
        if prov is not None and prov.kind is Kind.MODULE:
            return prov
        if type(over) is ast.Call and type(over.func) is ast.Name and over.func.id in ("enumerate", "range") and len(over.args) == 1 \
                and not over.keywords and self._builtin(over.func):
            inner = over.args[0]
            if over.func.id == "range":
                if not (type(inner) is ast.Call and type(inner.func) is ast.Name and inner.func.id == "len" and len(inner.args) == 1
                        and self._builtin(inner.func)):
                    return None
                inner = inner.args[0]
            found = self.prov_of(inner)
            return found if found is not None and found.kind is Kind.MODULE else None
        return None

    def _runs_layers(self, container: Provenance) -> bool:
        """Whether iterating this torch.nn container surely gives a layer (_holds_layers, or a `range(depth)` that every
        construction of its class in this module makes positive)."""
        if container.truth is True:
            return True
        found = self.model.__dict__.get("_ranged_containers", {}).get(id(container.node))
        if found is None or found[0] is not container.node:
            return False
        cache, size = self.model.__dict__.setdefault("_ranged_positive", {}), len(self.model.events)
        known = cache.get(id(container.node))
        if known is None or known[0] != size or known[1] is not container.node:  # (asked again once more calls are seen)
            known = cache[id(container.node)] = (size, container.node, self._constructed_positive(found[1], found[2]))
        return known[2]

    def _loader(self, node: ast.Call) -> Provenance | None:
        """`DataLoader(ds, batch_size=32)`: each batch (and each field of one) has `batch_size` rows, the first batch at
        least (the last may be smaller); nothing else about them is known."""
        name, position = api.LOADER_BATCH_SIZE
        size = self._int_value(_argument(node, name, position))
        if not isinstance(size, int) or size < 2 or any(kw.arg in api.LOADER_OWN_BATCHES or kw.arg is None for kw in node.keywords):
            return None
        batch = Provenance(Kind.TENSOR, node.lineno, scalar=False, origin="batch", no_grad=self.no_grad, node=node)
        return Provenance(Kind.SEQUENCE, node.lineno, elements=(batch,), origin="DataLoader", node=node)

    @staticmethod
    def _sampled_shape(node: ast.Call, method: str, dist: Provenance, arg_provs) -> tuple:
        """(shape, scalar) of `dist.sample()` / `dist.entropy()` (the batch shape) or `dist.log_prob(x)` (x's broadcast
        with it: at least as many elements, whatever x is); (None, None) where not known."""
        kind, batch = api.DISTRIBUTION_SHAPED_METHODS.get(method), dist.shape
        if batch is None or node.keywords or kind is None:
            return None, None
        if kind == "batch" and not node.args:
            return batch, shapes.scalar_of(batch)
        if kind == "value" and len(node.args) == 1 and type(node.args[0]) is not ast.Starred:
            value = arg_provs[0]
            shape = _broadcast_shape([(value, None), (dist, None)]) if value is not None and value.kind is Kind.TENSOR else None
            return shape, shapes.scalar_of(shape) if shape is not None else (False if shapes.scalar_of(batch) is False else None)
        return None, None

    def _distribution(self, node: ast.Call, arg_provs) -> Provenance | None:
        """`Normal(mean, torch.exp(log_std))`: the distribution keeps its tensors, so it carries the graph of those built
        from trainable ones (a leaf or a view of one is kept live: only a computed argument can go stale)."""
        keywords = self._keywords or {}
        pairs = [*zip(arg_provs, node.args), *((keywords.get(kw.arg), kw.value) for kw in node.keywords if kw.arg)]
        computed = [(prov, arg) for prov, arg in pairs if prov is not None and prov.has_graph and prov.base is None]
        if not computed:
            return None
        # (its batch shape as its shape: what sample() and entropy() give, log_prob(x) broadcasts with)
        return self.derive(node, computed[0][0], computed, scalar=None).but(origin=self._origin(node), shape=self._batch_shape(node, arg_provs))

    def _batch_shape(self, node: ast.Call, arg_provs):
        """A distribution's batch shape: the broadcast of its parameters' shapes less their non-batch dims (Categorical's
        logits: all but the last); None where a parameter's shape is not known."""
        params = api.DISTRIBUTION_PARAMETERS.get(self._origin(node).rsplit(".", 1)[-1])
        if params is None or len(node.args) > len(params) or any(type(a) is ast.Starred for a in node.args) \
                or any(kw.arg is None for kw in node.keywords):
            return None
        keywords = self._keywords or {}
        given = [*((params[i], prov) for i, prov in enumerate(arg_provs)),
                 *(((kw.arg, dict(params).get(kw.arg, None)), keywords.get(kw.arg)) for kw in node.keywords)]
        found = []
        for (_, trailing), prov in given:
            if trailing is None:
                continue
            if prov is None or prov.kind not in (Kind.TENSOR, Kind.NUMBER) or prov.kind is Kind.TENSOR and (prov.shape is None or len(prov.shape) < trailing):
                return None
            found.append(() if prov.kind is Kind.NUMBER else prov.shape[:len(prov.shape) - trailing])
        return shapes.broadcast(found) if found else None

    @staticmethod
    def _chained_params(node: ast.Call, arg_provs) -> Provenance | None:
        """`itertools.chain(G.parameters(), D.parameters())`: the parameters of both, one iterable (known only when every
        chained iterable is; an optimizer built over it updates them all)."""
        if not arg_provs or node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            return None
        if not all(prov is not None and prov.kind is Kind.PARAMS for prov in arg_provs):
            return None
        known = all(prov.params for prov in arg_provs)
        params = frozenset().union(*(prov.params for prov in arg_provs)) if known else frozenset()
        return Provenance(Kind.PARAMS, node.lineno, origin=arg_provs[0].origin, params=params, node=node)

    def _optimizer_params(self, node, arg_provs) -> frozenset:
        if not arg_provs or arg_provs[0] is None:
            return frozenset()
        first = arg_provs[0]
        if first.kind is Kind.PARAMS:
            return first.params
        if first.kind is Kind.SEQUENCE and isinstance(node.args[0], (ast.List, ast.Tuple)):
            labels = [label(element) for element in node.args[0].elts]
            if all(labels):
                return frozenset(labels)
        return frozenset()

    def _graph_grads(self, node: ast.Call, arg_provs) -> Provenance | None:
        """`torch.autograd.grad(loss, inputs, create_graph=True)`: gradients that carry a graph of their own (this call's
        id in it), one per input: a sequence of that many, or of one representative when the inputs are not a literal."""
        if self.no_grad or _const(_argument(node, "create_graph", 4)) is not True:
            return None  # (plain gradients: nothing a rule needs)
        outputs, inputs = _argument(node, "outputs", 0), _argument(node, "inputs", 1)
        loss = self.prov_of(outputs) if outputs is not None else None
        # (a double backward's gradients are functions of the outputs and the inputs: a helper's parameters they came from
        # are the summary's, as for any op: the gradient penalty of a `fake` that was not detached carries its graph)
        given = [p for p in flatten([loss, self.prov_of(inputs) if inputs is not None else None]) if p is not None and p.kind is Kind.TENSOR]
        grad = Provenance(Kind.TENSOR, node.lineno, leaf=False, requires_grad=True, dtype=api.FLOAT, origin="torch.autograd.grad",
                          graph=(loss.graph if loss is not None and loss.kind is Kind.TENSOR else frozenset()) | {id(node)},
                          param_deps=frozenset().union(*(p.param_deps for p in given)), loop=self.loop, epoch=self.epoch, node=node)
        count = len(inputs.elts) if isinstance(inputs, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in inputs.elts) else 1
        return Provenance(Kind.SEQUENCE, node.lineno, elements=(grad,) * count, node=node)

    def factory(self, node: ast.Call, short: str, arg_provs) -> Provenance:
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        requires_grad = _const(keywords.get("requires_grad")) if "requires_grad" in keywords else False
        dtype = api.dtype_class(self.imports.qualname(keywords["dtype"])) if "dtype" in keywords else None
        scalar = None
        data = node.args[0] if node.args else keywords.get("data")
        uninitialised = False
        if dtype is None and "dtype" not in keywords and len(keywords) == len(node.keywords):  # (a `**options` may give dtype)
            if short in ("tensor", "as_tensor") and data is not None:
                dtype = _literal_dtype(data)
                if dtype is None and arg_provs and arg_provs[0] is not None and arg_provs[0].kind in (Kind.TENSOR, Kind.NUMBER):
                    dtype = arg_provs[0].dtype
                elif dtype is None and arg_provs and arg_provs[0] is not None and arg_provs[0].kind is Kind.SEQUENCE:
                    dtype = _numbers_dtype(arg_provs[0].elements)  # `values = [1, 2, 3]; torch.tensor(values)`
                if dtype is None:
                    self._note_dtype_from_arguments(arg_provs[:1])
                    self._note_dtype_passed_on(node.args[:1])
            elif short == "arange":
                kinds = [_literal_dtype(arg) or _numbers_dtype([p]) for arg, p in zip(node.args, arg_provs)] + \
                    [_literal_dtype(v) for k, v in keywords.items() if k in ("start", "end", "step")]
                dtype = api.FLOAT if api.FLOAT in kinds else (api.INT if kinds and all(k == api.INT for k in kinds) else None)
                if dtype is None:
                    self._note_dtype_from_arguments(arg_provs)
                    self._note_dtype_passed_on(node.args)
            elif short == "full" and len(node.args) > 1:
                dtype = _literal_dtype(node.args[1])
            elif short in api.LIKE_FACTORIES:
                like = arg_provs[0] if arg_provs else None
                dtype = like.dtype if like is not None and like.kind is Kind.TENSOR else None
            elif short in api.INT_FACTORIES:
                dtype = api.INT
            elif short in api.FLOAT_FACTORIES:
                dtype = api.FLOAT
        shape = None
        if short in ("tensor", "as_tensor") and data is not None:
            count = _literal_numel(data)
            scalar = None if count is None else count == 1
            shape = _literal_shape(data)
        elif short in ("zeros", "ones", "empty", "rand", "randn", "full") and node.args:
            count = _size_numel(node.args[:1] if short == "full" else node.args, self._int_value)
            scalar = None if count is None else count == 1
            shape = _size_shape(node.args[:1] if short == "full" else node.args, self._int_value)
        elif short in ("linspace", "logspace", "arange", "range", "eye"):
            count = _sequence_numel(short, node.args, keywords, self._int_value)
            scalar = None if count is None else count == 1
        elif len(node.args) in api.FACTORY_SIZES.get(short, {}) and not any(isinstance(a, ast.Starred) for a in node.args):
            count = _size_numel([node.args[api.FACTORY_SIZES[short][len(node.args)]]], self._int_value)  # randint(0, 5, (n,))
            scalar = None if count is None else count == 1
            size = node.args[api.FACTORY_SIZES[short][len(node.args)]]
            shape = _size_shape([size], self._int_value) if isinstance(size, (ast.Tuple, ast.List)) else None
        elif short in api.LIKE_FACTORIES and arg_provs and arg_provs[0] is not None and arg_provs[0].kind is Kind.TENSOR:
            scalar = arg_provs[0].scalar
            shape = arg_provs[0].shape
        elif short in api.LEGACY_CONSTRUCTORS:
            if data is not None and isinstance(data, (ast.List, ast.Tuple)):
                dtype = dtype or (api.INT if short in api.INT_FACTORIES else api.FLOAT)
                shape = _literal_shape(data) if len(node.args) == 1 else None  # (data, as torch.tensor's)
            else:
                uninitialised = bool(node.args) and all(isinstance(_const(a), int) or isinstance(a, ast.Name) for a in node.args)
                if node.args and all(type(_const(a)) is int for a in node.args):
                    shape = _size_shape(node.args, self._int_value)  # (sizes spelt out: `torch.FloatTensor(2, 3)`)
        if short in ("empty", "empty_like", "empty_strided"):
            uninitialised = not any(kw.arg == "out" for kw in node.keywords)
        if shape is not None and None in shape:
            self._note_sized_by_arguments(node.args)
        return Provenance(Kind.TENSOR, node.lineno, leaf=True, requires_grad=requires_grad if isinstance(requires_grad, bool) else None,
                          dtype=dtype, origin=f"torch.{short}", no_grad=self.no_grad, loop=self.loop, epoch=self.epoch,
                          scalar=shapes.scalar_of(shape) if scalar is None else scalar, shape=shape, uninitialised=uninitialised, node=node)

    def _note_sized_by_arguments(self, sizes: list):
        """`torch.zeros(count, 4)` with `count` a parameter: the size is the caller's to tell (`draw(count=16)`), so the
        body is worth walking again with the integers a call passes (call_in_context)."""
        function = self.function
        if function is None or function.context_of is not None or self.via is not None:
            return
        for size in sizes:
            for item in (size.elts if type(size) in (ast.Tuple, ast.List) else (size,)):
                prov = self.lookup(item.id) if type(item) is ast.Name else None
                if prov is not None and prov.origin == "param" and prov.kind is Kind.TENSOR:
                    function.sized_by_arguments = True  # type: ignore[attr-defined]
                    return

    def _note_dtype_from_arguments(self, arg_provs):
        """`torch.arange(n)` with `n` a parameter: the dtype is the caller's to tell (`points(32)`: int64), so the body
        is worth walking again with the numbers a call passes (call_in_context)."""
        function = self.function
        if function is not None and function.context_of is None and any(
                p is not None and p.origin == "param" and p.kind is Kind.TENSOR for p in arg_provs):
            function.dtype_from_arguments = True  # type: ignore[attr-defined]

    def _note_dtype_passed_on(self, arguments: list):
        """`torch.arange(cfg["n"])`, or `Bins(cfg["lo"], cfg["hi"])` of a body whose factory takes its dtype from its
        arguments, given a parameter of this body (or a key of one): this body's callers tell that dtype."""
        function = self.function
        if function is None or function.context_of is not None or self.via is not None or isinstance(function.node, ast.Lambda):
            return
        args = function.node.args
        params = {arg.arg for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        for argument in arguments:
            if type(argument) is ast.Subscript and type(argument.slice) is ast.Constant:
                argument = argument.value
            if type(argument) is ast.Name and argument.id in params:
                function.dtype_from_arguments = True  # type: ignore[attr-defined]
                return

    def _text_argument(self, argument: ast.expr | None) -> ast.expr | None:
        """An argument whose value is a known string (`red = "none"; F.l1_loss(a, b, reduction=red)`, a config's
        `cfg.reduction`, `self.reduction` set from a constructor's argument): that literal; any other as it is."""
        if argument is not None and not isinstance(argument, ast.Constant):
            prov = self.prov_of(argument)
            if prov is not None and prov.kind is Kind.TEXT:
                return ast.Constant(prov.text)
        return argument

    def _named_width(self, name: str, built: ast.Call) -> int | None:
        """`nn.Linear(hidden, n_classes)` with `n_classes = 10` bound where the layer is built: its width, kept on the
        layer's provenance (the call that runs it may be where that name is not visible)."""
        if name not in _LAYER_WIDTH:
            return None
        index, keyword = _LAYER_WIDTH[name]
        node = built.args[index] if len(built.args) > index else next((kw.value for kw in built.keywords if kw.arg == keyword), None)
        value = self._int_value(node) if isinstance(node, (ast.Name, ast.BinOp)) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def _int_value(self, node: ast.expr | None):
        """A literal number, or the integer a name was bound to (`n = 16` ... `torch.randn(n)`)."""
        if isinstance(node, ast.Name):
            prov = self.lookup(node.id)
            if node.id in self._declared_global():
                return None  # (`global k` in a function that rebinds it: the module's `k = 4` may no longer hold)
            return prov.value if prov is not None and prov.kind is Kind.NUMBER else None
        if isinstance(node, ast.BinOp):  # `3 * 8 * 8`, `2 * n`
            return _fold(node.op, self._int_value(node.left), self._int_value(node.right))
        if type(node) is ast.Attribute and not self._constructor_integer(node):
            return None
        if type(node) is ast.Subscript or type(node) is ast.Call or type(node) is ast.Attribute:
            # `x.shape[0]`, `x.size(0)` of a known dim; `self.d` kept from a constructor's integer
            prov = self.prov_of(node)
            return prov.value if prov is not None and prov.kind is Kind.NUMBER else None
        if type(node) is ast.UnaryOp and type(node.op) is ast.USub and not isinstance(node.operand, ast.Constant):
            value = self._int_value(node.operand)  # `-self.d`, `-n`
            return -value if type(value) is int else None
        return _number(node)

    def _constructor_integer(self, node: ast.Attribute) -> bool:
        """`self.d` in a method of a plain class (a loss or metric helper, not an nn.Module) whose constructor alone sets
        `d` (nothing else in the module stores a `.d`, nor sets attributes by name): the integer a construction gave it
        is what the method reads."""
        function = self.function
        cls = function.cls if function is not None else None
        init = cls.methods.get("__init__") if cls is not None and not cls.is_module else None
        return init is not None and type(node.value) is ast.Name and node.value.id == "self" \
            and not callsite.dims_changed(init, {node.attr})

    def _declared_global(self) -> frozenset:
        """The names a `global` or `nonlocal` statement of this module names (cached per tree; found in the text: no pass
        over the tree for them)."""
        tree = self.model.tree
        cached = self.__dict__.get("_globals")
        if cached is None or cached[0] is not tree:
            # (read from the text: a string holding such a line only adds names, which only makes an int unknown)
            text = self.model.source.text
            names = frozenset(name.strip() for names in _scope_statements(text) for name in names.split(","))
            cached = self._globals = (tree, names)
        return cached[1]

    def torch_op(self, node: ast.Call, short: str, arg_provs) -> Provenance | None:
        given, arg_provs = arg_provs, [_with_held(p) for p in arg_provs]
        inputs = [(p, a) for p, a in zip(arg_provs, node.args)]
        tensors = [p for p in flatten(arg_provs) if p is not None and p.kind is Kind.TENSOR]
        if not tensors:
            return None
        if node.args and (short in api.INPLACE or _const(_argument(node, "inplace", None)) is True) and _writes(node, short, 1):
            self._inplace_call(node, node.args[0], arg_provs[0], short if short in api.INPLACE else f"{short}(inplace=True)")
        dtype = api.INT if short in api.INT_RESULT_METHODS else (api.FLOAT if short in api.FLOAT_RESULT_METHODS or short in api.FUNCTIONAL_LOSSES else None)
        nondiff = short if short in api.NONDIFFERENTIABLE else None
        if short in api.FUNCTIONAL_LOSSES:
            reduction = self._text_argument(_argument(node, "reduction", api.FUNCTIONAL_LOSSES[short]))
            if reduction is not None and not isinstance(reduction, ast.Constant):
                self._note_configured(reduction)
            if reduction is None and short in api.LEGACY_REDUCE and _const(_argument(node, "reduce", api.LEGACY_REDUCE[short])) is False:
                reduction = _NO_REDUCTION
            scalar = _reduction_scalar(reduction)
        elif short in api.REDUCTIONS:
            scalar = True if len(node.args) <= 1 and not any(kw.arg == "dim" for kw in node.keywords) else None
        elif short in ("stack", "cat", "conv1d", "conv2d", "conv3d", "linear", "matmul", "mm", "bmm", "outer", "einsum"):
            scalar = None if short in ("matmul", "einsum", "mm", "bmm", "linear") else False
        elif short in api.SAME_SHAPE:
            scalar = "propagate"
        elif short in api.KEEPS_NUMEL and arg_provs[0] is not None and arg_provs[0].kind is Kind.TENSOR and arg_provs[0].scalar is False:
            scalar = False  # torch.flatten(x), torch.squeeze(x): as many elements as x
        else:
            scalar = None  # torch.dist, torch.linalg.det, F.cosine_similarity...: many functions reduce
        if scalar is False and any(p is not q for p, q in zip(given, arg_provs)):
            scalar = None  # (a list appended to: one element may be all it holds)
        first = arg_provs[0] if arg_provs else None
        large = first.as_large_as if short in api.KEEPS_NUMEL and first is not None and first.kind is Kind.TENSOR else frozenset()
        shape = None
        if short in api.POINTWISE:
            shape = "propagate"
        elif short in ("stack", "cat") and node.args:
            shape = self._joined_shape(short, node, arg_provs[0])
        elif first is not None and first.kind is Kind.TENSOR and node.args:
            shape = self._op_shape(short, first, node.args[1:], node.keywords)  # torch.flatten(x, 1), torch.sum(x, 0)
        index = _index_argument(node, short, arg_provs, 0)
        if index is not None:  # torch.gather(x, 1, idx): the index's shape
            scalar, large, shape = (False if index.scalar is False else scalar), index.as_large_as, index.shape
        result = self.derive(node, tensors[0], inputs, dtype=dtype, nondiff=nondiff, scalar=scalar, as_large_as=large,
                             shape=_broadcast_shape(inputs) if shape == "propagate" else shape)
        if short in api.VIEWS and arg_provs and arg_provs[0] is not None:
            result = self._view(result, arg_provs[0])
        if result is not None and result.requires_grad:
            result = self._note_saved(node, result, short, list(node.args))
        return result

    def _op_shape(self, op: str, recv: Provenance, args: list, keywords: list):
        """The shape of `recv.<op>(*args)` (or `torch.<op>(recv, *args)`) as far as known: "propagate" for a pointwise op
        (the broadcast of its operands), the receiver's for one that keeps it, and the dims of a reshape, flatten,
        (un)squeeze, permute, transpose or reduction whose sizes and dims are spelt out (literals, names bound to
        integers). The op's kind is torch's: its tags and its JIT shape function (torch_ops.SHAPE_FUNCTIONS)."""
        entry = api.TUPLE_RESULTS.get(op)
        if entry is not None and (args or keywords or not entry["dim"]):
            return None  # several tensors (x.max(1), x.frexp(), x.aminmax()): indexing picks one, not a row
        if op in api.POINTWISE:
            # (an operand given by keyword, `torch.add(x, other=y)`, is not among those broadcast)
            return "propagate" if all(self._plain_keyword(kw.value) for kw in keywords) else None
        shape = recv.shape
        if op in api.SAME_SHAPE:
            return shape
        if op in api.RESIZES:
            return self._resized(shape, args, keywords, api.RESIZES[op])
        if any(isinstance(arg, ast.Starred) for arg in args) or any(kw.arg is None for kw in keywords):
            return None
        named = {kw.arg: kw.value for kw in keywords}
        functions = api.shape_functions(op)
        if op in api.REDUCTIONS:
            if not args and not named:
                return ()
            # where torch's overloads taking a dim put it: x.sum(1), x.logsumexp(-1), x.norm(2, 1) (p first)
            entry = api.REDUCTION_DIMS.get(op)
            if entry is None or set(named) - {"dim", "keepdim", *entry["free"]}:
                return None
            at, kept = entry["dim"], entry["keepdim"]
            if len(args) > (at + 1 if kept is None else max(at, kept) + 1) or len(args) > at + 1 and kept != at + 1:
                return None
            dim = args[at] if len(args) > at else named.get("dim")
            keep = args[kept] if kept is not None and len(args) > kept else named.get("keepdim")
            keepdim = False if keep is None else _const(keep)
            if dim is None or isinstance(dim, (ast.Tuple, ast.List)) and not dim.elts:
                return None  # (`dim=()`: every dim for some reductions, none for others)
            dims = self._ints(dim.elts) if isinstance(dim, (ast.Tuple, ast.List)) else self._ints([dim])
            if dims is None or None in dims or not isinstance(keepdim, bool):
                return None
            return shapes.reduce(shape, dims, keepdim)
        if "view" in functions and not named:  # view, reshape: the sizes given, whatever the input's shape (-1 where it is unknown)
            if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
                return shapes.view(shape, self._ints(args[0].elts))
            sizes = self._ints(args)
            if len(args) == 1 and (sizes is None or sizes[0] is None):
                return None  # x.view(size): a name that may hold a tuple
            return shapes.view(shape, sizes)
        if shape is None:
            return None
        if functions == {"flatten"}:
            start = args[0] if args else named.get("start_dim")
            end = args[1] if len(args) > 1 else named.get("end_dim")
            bounds = self._ints([start if start is not None else ast.Constant(0), end if end is not None else ast.Constant(-1)])
            return None if bounds is None or None in bounds else shapes.flatten(shape, *bounds)
        if functions == {"unsqueeze"} and len(args) + len(named) == 1:
            dims = self._ints([args[0] if args else named.get("dim")])
            return None if dims is None or dims[0] is None else shapes.unsqueeze(shape, dims[0])
        if "squeeze_nodim" in functions:
            if not args and not named:
                return shapes.squeeze(shape)
            dim = args[0] if len(args) == 1 else named.get("dim")
            if dim is None or len(args) + len(named) != 1:
                return None
            dims = self._ints(dim.elts) if isinstance(dim, (ast.Tuple, ast.List)) else self._ints([dim])
            return None if dims is None or None in dims else shapes.squeeze(shape, dims)
        if functions == {"permute"} and not named:
            order = self._ints(args[0].elts) if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else self._ints(args)
            return None if order is None or None in order else shapes.permute(shape, order)
        if functions == {"transpose"} and len(args) == 2 and not named:
            dims = self._ints(args)
            return None if dims is None or None in dims else shapes.transpose(shape, *dims)
        if functions == {"t"} and not args and not named and len(shape) <= 2:
            return shape[::-1]
        return None

    def _resized(self, shape, args: list, keywords: list, position: int):
        """F.interpolate(x, size) (`args` after x): x's dims before the spatial ones, then `size` (an int for each spatial
        dim, or one per dim); with a scale_factor instead, spatial sizes unknown."""
        if shape is None or len(shape) < 3 or any(isinstance(arg, ast.Starred) for arg in args) or any(kw.arg is None for kw in keywords):
            return None
        named = {kw.arg: kw.value for kw in keywords}
        size = args[position - 1] if len(args) >= position else named.get("size")
        count = len(shape) - 2
        if size is None:
            scale = args[position] if len(args) > position else named.get("scale_factor")
            return shape[:2] + (None,) * count if scale is not None else None
        if isinstance(size, (ast.Tuple, ast.List)):
            sizes = self._ints(size.elts)
            return shape[:2] + tuple(sizes) if sizes is not None and len(sizes) == count else None
        sizes = self._ints([size])
        if sizes is None or sizes[0] is None:
            return None  # (a name that may hold a tuple)
        return shape[:2] + (sizes[0],) * count

    def _plain_keyword(self, value: ast.expr) -> bool:
        """A keyword argument that is surely no tensor: a literal, or a torch dtype."""
        return isinstance(value, ast.Constant) or api.dtype_class(self.imports.qualname(value)) is not None

    def _index_shape(self, base: Provenance, index: ast.expr):
        """`x[...]`: the result's shape (None: unknown) and whether a dim kept by a `:` is known to have several
        elements (then the result has too, wherever advanced indexing puts that dim)."""
        if base.shape is None:
            return None, False
        items = []
        for item in (index.elts if isinstance(index, ast.Tuple) else [index]):
            if isinstance(item, ast.Slice):
                items.append(shapes.FULL if item.lower is None and item.upper is None and item.step is None else self._slice_item(item))
            elif isinstance(item, ast.Constant) and item.value is None:
                items.append(shapes.NEW)
            elif isinstance(item, ast.Constant) and item.value is Ellipsis:
                items.append(shapes.ELLIPSIS)
            elif isinstance(item, ast.Starred):
                return None, False
            else:
                value = self._int_value(item)
                items.append(shapes.INT if isinstance(value, int) and not isinstance(value, bool) or self._some_int(item) else shapes.OTHER)
        shape, kept = shapes.index(base.shape, items)
        return shape, any(d is not None and d > 1 for d in kept)

    def _slice_item(self, item: ast.Slice):
        """A slice of known integer bounds, a Window `i:i + k` of a range counter `i`, or PART (size unknown)."""
        bounds = self._ints([b if b is not None else ast.Constant(None) for b in (item.lower, item.upper, item.step)])
        if bounds is not None and all(b is not None or part is None for b, part in zip(bounds, (item.lower, item.upper, item.step))):
            return slice(*bounds)
        lower, upper = item.lower, item.upper
        if item.step is None and type(lower) is ast.Name and type(upper) is ast.BinOp and type(upper.op) is ast.Add:
            counter = self.lookup(lower.id)
            if counter is not None and counter.kind is Kind.NUMBER and counter.counter is not None:
                left, right = upper.left, upper.right
                width = self._int_value(right) if type(left) is ast.Name and left.id == lower.id else \
                    self._int_value(left) if type(right) is ast.Name and right.id == lower.id else None
                if type(width) is int:
                    return shapes.Window(counter.counter, width)
        return shapes.PART

    def _some_int(self, item: ast.expr) -> bool:
        """A Python integer of unknown value (`for i in range(n)`: `x[i]` picks one row, as a literal does)."""
        prov = self.lookup(item.id) if isinstance(item, ast.Name) else self.prov_of(item) if type(item) is ast.Subscript else None
        return prov is not None and prov.kind is Kind.NUMBER and prov.dtype == api.INT and prov.truth is None

    def _ints(self, nodes) -> list | None:
        """The integer each node stands for (None: not known); None when one is surely not an integer (a starred one)."""
        out = []
        for node in nodes:
            if node is None or isinstance(node, ast.Starred):
                return None
            value = self._int_value(node)
            out.append(value if isinstance(value, int) and not isinstance(value, bool) else None)
        return out

    def _joined_shape(self, short: str, node: ast.Call, tensors: Provenance | None):
        """torch.stack / torch.cat of a list literal of tensors of known shapes, along a dim spelt out."""
        if tensors is None or tensors.kind is not Kind.SEQUENCE or not isinstance(node.args[0], (ast.List, ast.Tuple)):
            return None
        if any(isinstance(element, ast.Starred) for element in node.args[0].elts) or len(tensors.elements) != len(node.args[0].elts):
            return None
        if any(p is None or p.kind is not Kind.TENSOR for p in tensors.elements):
            return None
        dim = node.args[1] if len(node.args) > 1 else next((kw.value for kw in node.keywords if kw.arg == "dim"), ast.Constant(0))
        dims = self._ints([dim])
        if dims is None or dims[0] is None:
            return None
        found = [p.shape for p in tensors.elements]
        return shapes.stack(found, dims[0]) if short == "stack" else shapes.cat(found, dims[0])

    # -- combination ---------------------------------------------------------------------------------
    def _composed(self, inputs) -> frozenset:
        composed = set()
        for prov, node in inputs:
            if prov is not None and prov.kind is Kind.SEQUENCE:
                # `torch.stack([a, b])`: pair the elements with their expressions so the sources keep their names
                if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) == len(prov.elements):
                    elts = node.elts
                else:  # `torch.stack(prototypes)`: the elements are named after the list
                    elts = [node if label(node) else None] * len(prov.elements)
                composed |= self._composed(list(zip(prov.elements, elts)))
                continue
            if prov is None or prov.kind is not Kind.TENSOR:
                continue
            if prov.is_trainable_leaf:
                # an element of `model.parameters()` is named after its owner ("model.parameters()"), so that an
                # optimizer built from the same parameters is known to update it
                name = prov.origin if prov.origin.endswith(".parameters()") else (label(node) if node is not None else None)
                composed.add(name or prov.origin)
            else:
                composed |= prov.composed_from
        return frozenset(composed)

    @staticmethod
    def _common_dtype(provs) -> str | None:
        kinds = {p.dtype for p in provs if p is not None}
        if len(kinds) == 1:
            return kinds.pop()
        return api.FLOAT if api.FLOAT in kinds else None

    def combine(self, node, inputs, binop=None) -> Provenance | None:
        """Arithmetic on tensors and numbers (BinOp, UnaryOp, AugAssign)."""
        provs = [p for p, _ in inputs]
        if any(p is None for p in provs):
            tensors = [p for p in provs if p is not None and p.kind is Kind.TENSOR]
            if not tensors:
                return None
            # x * unknown: a tensor for sure, but what it requires is unknown unless x already requires grad
            if not any(t.requires_grad for t in tensors):
                return None
        if any(p is not None and p.kind not in (Kind.TENSOR, Kind.NUMBER) for p in provs):
            return None
        known = [p for p in provs if p is not None]
        dtypes = [p.dtype for p in known]
        if isinstance(binop, ast.Div):
            dtype = api.FLOAT if all(d is not None for d in dtypes) or api.FLOAT in dtypes else None
        elif api.FLOAT in dtypes:
            dtype = api.FLOAT
        elif dtypes and all(d == api.INT for d in dtypes) and len(known) == len(provs) and (
                not isinstance(binop, ast.Pow) or _non_negative_int(inputs[-1][1])):
            dtype = api.INT  # (int ** -1 is a float in Python, an error on an integer tensor)
        else:
            dtype = None
        if all(p.kind is Kind.NUMBER for p in known) and len(known) == len(provs):
            return Provenance(Kind.NUMBER, node.lineno, dtype=dtype)
        tensors = [p for p in known if p.kind is Kind.TENSOR]
        scalar = None if isinstance(binop, ast.MatMult) else "propagate"  # vector @ vector is 0-dim
        return self.derive(node, tensors[0], inputs, dtype=dtype, scalar=scalar, keep_dtype=False)

    def derive(self, node, base: Provenance, inputs, dtype=None, nondiff=None, scalar="propagate", keep_dtype=True,
               as_large_as=frozenset(), shape: object = "propagate") -> Provenance:
        """A new tensor computed from `inputs` [(prov, node)]: requires grad if any input does (outside no_grad).
        scalar="propagate": the result has the (broadcast) shape of the inputs, so at least as many elements as each.
        shape: the result's (analysis/shapes.py); "propagate" follows `scalar`: the broadcast shape, else unknown."""
        if shape == "propagate":
            shape = _broadcast_shape(inputs) if scalar == "propagate" else None
        # (one pass over the tensors: the hottest constructor of the walk, about one call per tensor op)
        tensors, unknown_inputs = [], False
        for prov, _ in inputs:
            if prov is None:
                unknown_inputs = True
            elif prov.kind is Kind.TENSOR:
                tensors.append(prov)
            elif prov.kind is Kind.SEQUENCE:
                tensors.extend(p for p in flatten(prov.elements) if p is not None and p.kind is Kind.TENSOR)
        any_grad, all_no_grad, same_dtype, any_composed, all_scalar, any_wide = False, True, True, False, bool(tensors), False
        carriers, base_dtype = [], base.dtype
        for t in tensors:
            grad = t.requires_grad
            if grad:
                any_grad = True
            if grad is not False:
                all_no_grad = False
            if t.dtype != base_dtype:
                same_dtype = False
            if t.composed_from:
                any_composed = True
            if grad or t.composed_from or t.nondiff or (t.param_deps and grad is None):
                carriers.append(t)
            if not t.scalar:
                all_scalar = False
                if t.scalar is False:
                    any_wide = True
        requires_grad = True if any_grad else (False if all_no_grad and not unknown_inputs else None)
        if nondiff is not None and (nondiff in api.INT_RESULT_METHODS or nondiff in ("to", "comparison")):
            requires_grad = False
        if self.no_grad:
            requires_grad = False
        if dtype is None and keep_dtype:
            dtype = base_dtype if same_dtype else None
        # A graph cut (argmax, round...) stays cut only while every graph-carrying input went through one.
        if nondiff is None and carriers and all(t.nondiff for t in carriers):
            nondiff = carriers[0].nondiff
        if nondiff is not None and not carriers:
            nondiff = None
        if nondiff is not None or carriers and any(t.nondiff for t in carriers) and all(t.nondiff or _open_parameter(t) for t in carriers):
            self._note_cut()  # (or cut but for a parameter that may not require grad: `l1_loss(rounded, target)`)
        if scalar == "propagate":
            scalar = True if all_scalar else (False if any_wide else None)
            as_large_as = _union([t.as_large_as for t in tensors])
        if scalar is None and shape is not None:
            scalar = shapes.scalar_of(shape)
        # (computed under no_grad, or through a cut (`.long()`, a comparison): no graph at all, whatever its inputs carry)
        graph = _union([t.graph for t in tensors]) if requires_grad is not False else frozenset()
        if requires_grad:
            graph = graph | {id(node)}
        deps = _union([t.param_deps for t in tensors])
        return Provenance(
            Kind.TENSOR, node.lineno,
            leaf=False if requires_grad else (True if requires_grad is False else None),
            requires_grad=requires_grad,
            dtype=dtype,
            composed_from=self._composed(inputs) if requires_grad or any_composed else frozenset(),
            no_grad=self.no_grad,
            loop=self.loop,
            epoch=self.epoch,
            origin=self._origin(node),
            graph=graph,
            scalar=scalar,
            shape=shape,
            nondiff=nondiff,
            param_deps=deps,
            cut_deps=deps if requires_grad is False else cut_of(tensors),  # (no graph at all: every dependency is through a cut)
            as_large_as=as_large_as,
            uninitialised=False,
            node=node,
        )

    def _origin(self, node) -> str:
        if isinstance(node, ast.Call):
            qualname = self.imports.qualname(node.func)
            if qualname:
                return qualname
            if isinstance(node.func, ast.Attribute):
                return f".{node.func.attr}()"
        if isinstance(node, ast.BinOp):
            return _OPS.get(type(node.op), "?")
        return type(node).__name__


# torch.nn layers whose output has at least `width` elements: (position, keyword) of that argument.
_LAYER_WIDTH = {"Linear": (1, "out_features"), "Bilinear": (2, "out_features"), "Conv1d": (1, "out_channels"),
                "Conv2d": (1, "out_channels"), "Conv3d": (1, "out_channels"), "ConvTranspose1d": (1, "out_channels"),
                "ConvTranspose2d": (1, "out_channels"), "ConvTranspose3d": (1, "out_channels"), "Embedding": (1, "embedding_dim"),
                "LazyLinear": (0, "out_features"),
                # normalisations: the input's shape, whose channel (or last) dim has that size
                "BatchNorm1d": (0, "num_features"), "BatchNorm2d": (0, "num_features"), "BatchNorm3d": (0, "num_features"),
                "SyncBatchNorm": (0, "num_features"), "InstanceNorm1d": (0, "num_features"), "InstanceNorm2d": (0, "num_features"),
                "InstanceNorm3d": (0, "num_features"), "GroupNorm": (1, "num_channels"), "LayerNorm": (0, "normalized_shape"),
                "RMSNorm": (0, "normalized_shape")}


def _bind_defaults(function, call: ast.Call, bound: dict, method: bool, imports=None):
    """The parameters a call leaves at a number literal default (`scale=2.0`, `k=3`, `-1`) are that number in a walk
    for that call (an integer with its value, which sizes what the body makes from it). Returns the names it leaves at
    a None default (Walker._known_none)."""
    args = function.args
    if not args.defaults and not any(args.kw_defaults):
        return frozenset()
    positional = [*args.posonlyargs, *args.args]
    left_none = set()
    skip = 1 if method else 0
    given = {arg.arg for arg in positional[skip:skip + len(call.args)]} | {kw.arg for kw in call.keywords}
    for arg, default in [*zip(positional[len(positional) - len(args.defaults):], args.defaults), *zip(args.kwonlyargs, args.kw_defaults)]:
        if arg.arg in given or bound.get(arg.arg) is not None or default is None:
            continue
        if type(default) is ast.Constant and default.value is None:
            left_none.add(arg.arg)
            continue
        if type(default) is ast.Lambda:  # `preprocess=lambda img: F.interpolate(img, (16, 16))`: that function
            bound[arg.arg] = Provenance(Kind.FUNCTION, default.lineno, module_class=default, origin="lambda", node=default)
            continue
        if type(default) is ast.Constant and type(default.value) is bool:  # `backward=True`: a flag an `if` of the body tests
            bound[arg.arg] = _TRUE if default.value else _FALSE
            continue
        if type(default) is ast.Constant and type(default.value) is str:  # `activation="Tanh"`: a layer's name, a reduction
            if (text := _text(default.value)) is not None:
                bound[arg.arg] = text
            continue
        qualname = imports.qualname(default) if imports is not None and type(default) in (ast.Attribute, ast.Name) else None
        if qualname is not None and imports.is_torch(qualname) and qualname.rsplit(".", 1)[-1][:1].isupper():
            # `optimizer_class=optim.Adam`: calling the parameter constructs that class
            bound[arg.arg] = Provenance(Kind.FUNCTION, default.lineno, module_class=qualname, origin="class", node=default)
            continue
        value = _number(default)
        if isinstance(value, int):
            bound[arg.arg] = _int_number(value)
        elif isinstance(value, float):
            bound[arg.arg] = _FLOAT_NUMBER
    return frozenset(left_none)


def _leaves_text(function, call: ast.Call) -> bool:
    """The call leaves a parameter at a string default (`Block(64)` of `def __init__(self, c, act="GELU")`): a body
    configured by its arguments is walked with that string (_bind_defaults)."""
    args = function.args
    given = {kw.arg for kw in call.keywords}
    if None in given or any(type(arg) is ast.Starred for arg in call.args):
        return False  # (`Block(*sizes)`, `Block(**cfg)`: what is left is not known)
    positional = [*args.posonlyargs, *args.args]
    defaulted = [*zip(positional[len(positional) - len(args.defaults):], args.defaults), *zip(args.kwonlyargs, args.kw_defaults)]
    # (a positional argument may fill a defaulted slot: counted from the end, only those past what the call gives)
    skip = len(call.args) + (1 if positional and positional[0].arg in ("self", "cls") else 0)
    return any(type(default) is ast.Constant and type(default.value) is str and arg.arg not in given
               and (arg in args.kwonlyargs or positional.index(arg) >= skip) for arg, default in defaulted)


def _merge_branches(a: Provenance | None, b: Provenance | None) -> Provenance | None:
    """What a name holds after an if: provenance.merge, but a dict display whose branches set different keys keeps
    every key (`out["loss"] = ...` in one branch), each value what both branches agree on (unknown where one lacks it)."""
    if a is not None and b is not None and a.kind is Kind.MAPPING and b.kind is Kind.MAPPING and a.keys and b.keys \
            and None not in a.keys and None not in b.keys and a.node is b.node:
        values_a, values_b = dict(zip(a.keys, a.elements)), dict(zip(b.keys, b.elements))
        keys = tuple(dict.fromkeys([*a.keys, *b.keys]))
        return a.but(keys=keys, elements=tuple(merge(values_a[k], values_b[k]) if k in values_a and k in values_b else None for k in keys))
    merged = merge(a, b)
    if merged is None and a is not None and b is not None and {a.kind, b.kind} == {Kind.NUMBER, Kind.TENSOR}:
        # `total = 0`, then `total += term` in one branch: a number or that tensor; what is built on it keeps the tensor's
        # graph (whether it requires grad, its dtype or size are not known)
        tensor = a if a.kind is Kind.TENSOR else b
        return tensor.but(leaf=None, requires_grad=None, dtype=None, scalar=None, shape=None, saved_by=None, saved_node=None,
                          base=None, uninitialised=False, node=None)
    if merged is not None and merged.kind is Kind.SEQUENCE and a.elements != b.elements:
        # `if pre_act: layers.append(nn.ReLU())`: which items the list holds is unknown now, not "none": what is
        # appended after it is not its first item
        return merged.but(origin=_SOME_ITEMS)
    return merged


def _none_outside(function, loop: ast.AST, name: str) -> bool:
    """`name` is a local of `function` that every statement outside `loop` binds to None (`acc = None`), and one does."""
    args = function.args
    if any(arg.arg == name for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if arg is not None):
        return False
    inside = syntax.kept_on(loop, "_names_stored", lambda node: {
        id(sub) for sub in syntax.nodes(node) if type(sub) is ast.Name and type(sub.ctx) is not ast.Load})
    stores = [to_none for store, to_none in syntax.kept_on(function, "_store_index", _store_index).get(name, ()) if store not in inside]
    return bool(stores) and all(stores)


def _store_index(function) -> dict:
    """Name -> [(id of a Name the function binds it with, whether that statement is `name = None`)], one pass."""
    to_none, index = set(), {}
    for sub in syntax.nodes(function):
        if type(sub) is ast.Assign and len(sub.targets) == 1 and type(sub.targets[0]) is ast.Name \
                and type(sub.value) is ast.Constant and sub.value.value is None:
            to_none.add(id(sub.targets[0]))
        elif type(sub) is ast.Name and type(sub.ctx) is not ast.Load:
            index.setdefault(sub.id, []).append(id(sub))
    return {name: [(store, store in to_none) for store in stores] for name, stores in index.items()}


def _bound_names(roots: list) -> Counter:
    """How often each name is bound under `roots`: stores, deletions, defs and classes (an augmented assignment to a
    name is not counted: it keeps its tensor)."""
    found: Counter = Counter()
    pending = list(roots)
    pop, push, push_all, child_fields, AST = pending.pop, pending.append, pending.extend, syntax.child_fields, ast.AST
    while pending:
        child = pending.pop()
        kind = type(child)
        if kind is ast.Name:
            if type(child.ctx) is not ast.Load:
                found[child.id] += 1
            continue
        if kind is ast.AugAssign and type(child.target) is ast.Name:
            push(child.value)
            continue
        if kind in _DEFS:
            found[child.name] += 1
        for field in child_fields(kind):
            value = getattr(child, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        push(item)
            elif isinstance(value, AST):
                push(value)
    return found


def _first_stores(function) -> dict:
    """Name -> the line of the first statement of a function's body (nested defs aside) that assigns it."""
    def compute(node) -> dict:
        found: dict = {}
        for sub in syntax.nodes(node):
            if type(sub) is ast.Name and type(sub.ctx) is ast.Store:
                found[sub.id] = min(found.get(sub.id, sub.lineno), sub.lineno)
        return found
    return syntax.kept_on(function, "_first_stores", compute)


def _width_of(layer: Provenance | None) -> int | None:
    """The width a torch.nn layer was built with (a literal, or a name bound to an integer where it was built)."""
    name = layer.module_class.rsplit(".", 1)[-1]
    width = _layer_width(name, layer.node if isinstance(layer.node, ast.Call) else None)
    return layer.value if width is None and layer.module_class == layer.origin else width


def _last_width(module: Provenance | None, depth: int = 0) -> int | None:
    """An nn.Sequential's output has at least this many elements whatever its input's shape: the width of its last
    layer that sets one (nn.Linear's out_features, a convolution's out_channels), when every layer after it keeps the
    dims before the spatial ones (activations, dropout, batch/layer norm, pooling, nn.Flatten, nn.Identity)."""
    if module is None or module.kind is not Kind.MODULE or not isinstance(module.module_class, str) or depth > 8:
        return None
    built = module.node if isinstance(module.node, ast.Call) else None
    if not module.elements or built is None or len(module.elements) != len(built.args):
        return None  # (layers added later, or given as an OrderedDict)
    for layer in reversed(module.elements):
        if layer is None or layer.kind is not Kind.MODULE or not isinstance(layer.module_class, str):
            return None
        name = layer.module_class.rsplit(".", 1)[-1]
        width = _width_of(layer) if name in _LAYER_WIDTH else None
        if width is not None:
            return width
        if name == "Sequential":
            width = _last_width(layer, depth + 1)
            if width is None:
                return None
            return width
        if name in ("Identity", "Flatten"):
            continue
        op = api.layer_op(name)
        functions = api.shape_functions(op)
        if op is None or not (op in api.SAME_SHAPE or functions & {"unary", "batch_norm", "native_batch_norm"}
                              or any(f.startswith(("max_pool", "adaptive_avg_pool")) for f in functions)):
            return None
    return None


def _last_layer(module: Provenance) -> str | None:
    """The torch.nn layer an nn.Sequential built from its arguments applies last (its output is the container's), by
    class name; None when the layers are not all known torch.nn layers given in the call."""
    layer = _last_element(module)
    return layer.module_class.rsplit(".", 1)[-1] if layer is not None and isinstance(layer.module_class, str) else None


def _last_element(module: Provenance, depth: int = 0) -> Provenance | None:
    """The module an nn.Sequential built from its arguments applies last (inside nested Sequentials): a torch.nn
    layer or a block of the workspace; None when unknown."""
    built = module.node if isinstance(module.node, ast.Call) else None
    if depth > 3 or built is None:
        return None
    if module.tail:
        layer = module.tail[-1]  # `nn.Sequential(*layers)` whose list's end is known (_unpacked_end)
    elif not module.elements or len(module.elements) != len(built.args):
        return None
    else:
        layer = module.elements[-1]
    if layer is None or layer.kind is not Kind.MODULE:
        return None
    if isinstance(layer.module_class, str) and layer.module_class.rsplit(".", 1)[-1] == "Sequential":
        return _last_element(layer, depth + 1)
    return layer


def _with_held(prov: Provenance | None) -> Provenance | None:
    """A list that graphs were appended to, given to a torch op: one more element standing for them (a non-leaf that
    requires grad, with their graph), so that the result joins it."""
    if prov is None or prov.kind is not Kind.SEQUENCE or not prov.graph:
        return prov
    held = Provenance(Kind.TENSOR, prov.line, leaf=False, requires_grad=True, graph=prov.graph, composed_from=prov.composed_from,
                      origin="appended")
    return prov.but(elements=prov.elements + (held,))


def _item_of(sequence: Provenance, index: ast.expr) -> Provenance | None:
    """`xs[0]`: that element; `xs[i - 1]` (a computed index, not a slice) of a list whose elements all agree (a
    comprehension's): that element. None otherwise."""
    elements = sequence.elements
    if not elements:
        return None
    position = _number(index)
    if isinstance(position, int) and sequence.origin == _EACH:
        return elements[0]  # `outs[2]` of `[conv(x) for conv in self.convs]`: one of its items, all alike
    if isinstance(position, int):
        return elements[position] if -len(elements) <= position < len(elements) else None
    if position is not None or isinstance(index, (ast.Slice, ast.Constant, ast.Tuple)):
        return None
    first = elements[0]
    return first if all(element == first for element in elements) else None


def _value_of(mapping: Provenance, key: ast.expr) -> Provenance | None:
    """`out["loss"]`: the value stored under a literal key; under any other key (`out[name]` in `for name in out`) one
    of the values, so what all of them agree on. Unknown when a key is not a literal or the literal is not there."""
    values, keys = mapping.elements, mapping.keys
    if None in keys or not values:
        return None
    wanted = _const(key)
    if isinstance(wanted, str):
        found = [value for name, value in zip(keys, values) if name == wanted]
        return found[-1] if found else None
    if isinstance(key, ast.Constant):
        return None
    return _merged_values(mapping)


def _merged_values(mapping: Provenance) -> Provenance | None:
    """What every value of a dict display agrees on (None when a key is not a literal: `**rest` may add others)."""
    values = mapping.elements
    if None in mapping.keys or not values:
        return None
    agreed = values[0]
    for value in values[1:]:
        agreed = merge(agreed, value)
    return agreed

def _covered(info: FunctionInfo, ret: Provenance, arg_provs, offset: int) -> list:
    """The tensors a call passes (by position) to the parameters the function's result is at least as large as."""
    if not ret.as_large_as:
        return []
    params = [*info.node.args.posonlyargs, *info.node.args.args]
    provs = [arg_provs[i - offset] for i, arg in enumerate(params) if id(arg) in ret.as_large_as and 0 <= i - offset < len(arg_provs)]
    return [p for p in provs if p is not None and p.kind is Kind.TENSOR]


def _index_argument(call: ast.Call, op: str, arg_provs, shift: int) -> Provenance | None:
    """The index tensor, passed by position, of an op whose result has its shape (generated INDEX_SHAPED; shift 1: a
    method call, whose receiver is position 0)."""
    position = api.INDEX_SHAPED.get(op)
    if position is None or any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    position -= shift
    prov = arg_provs[position] if 0 <= position < min(len(call.args), len(arg_provs)) else None
    return prov if prov is not None and prov.kind is Kind.TENSOR else None


def _no_graph_if(no_grad: bool, prov: Provenance | None) -> Provenance | None:
    """A summary's result for a call made under no_grad: whatever the body computes there records no graph."""
    if not no_grad or prov is None:
        return prov
    if prov.kind is Kind.SEQUENCE and prov.elements:
        return prov.but(elements=tuple(_no_graph_if(True, e) for e in prov.elements))
    if prov.kind is not Kind.TENSOR or prov.leaf is True and prov.requires_grad is True or (prov.requires_grad is not True and not prov.graph):
        return prov  # (a parameter handed back is still one that requires grad)
    return prov.but(requires_grad=False, graph=frozenset(), no_grad=True, leaf=True, cut_deps=prov.param_deps)


def _left_at_default(init: FunctionInfo | None, stored: Provenance, built) -> Provenance | None:
    """`self.eps = eps` of the symbolic __init__, read on an instance whose construction (`built`, the call) leaves `eps` at
    its number or True/False literal default: that literal. None where the construction passes it or may."""
    if init is None or not isinstance(built, ast.Call) or stored.origin != "param" or len(stored.param_deps) != 1 \
            or any(isinstance(arg, ast.Starred) for arg in built.args) or any(kw.arg is None for kw in built.keywords):
        return None
    args = init.node.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    index = next(iter(stored.param_deps))
    if not 0 < index < len(params) or stored.node is not params[index]:
        return None  # (the parameter itself, not a value made from it)
    bound: dict = {}
    _bind_defaults(init.node, built, bound, True)
    found = bound.get(params[index].arg)
    return found if found is not None and found.kind is Kind.NUMBER else None


def _cut_or_number(a: Provenance | None, b: Provenance | None) -> Provenance | None:
    """`loss if loss > 0 else 0` of a tensor every path to which went through a cut (argmax, a comparison): neither
    branch has a gradient, whichever is taken (AG010); the tensor's facts otherwise stay unknown."""
    for tensor, other in ((a, b), (b, a)):
        if tensor is not None and other is not None and tensor.kind is Kind.TENSOR and other.kind is Kind.NUMBER \
                and tensor.nondiff is not None and tensor.requires_grad is False:
            return tensor.but(scalar=None, shape=None)
    return None


def _switches_option(info: FunctionInfo, node: ast.Call, keyword_provs) -> bool:
    """A constructor given a number by keyword for a parameter that defaults to None (`Dice(threshold=0.5)`): an option its
    methods may test (`if threshold is not None:`), so what this instance holds is worth knowing."""
    if info.name != "__init__" or info.cls is None or not node.keywords or not keyword_provs:
        return False
    args = info.node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = {a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)}
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return any(prov is not None and prov.kind is Kind.NUMBER and type(default := defaults.get(name)) is ast.Constant and default.value is None
               for name, prov in keyword_provs.items())


def _cut_by_arguments(info: FunctionInfo, passed, own_graph: bool = False) -> bool:
    """A body that cuts a graph somewhere (FunctionInfo.cuts_graph) called with a tensor that requires grad and one known
    to have no graph: walked with them, its result is cut or not by what it does to each. A body that backpropagates
    makes its own graph (`self.model(x)`), as does a forward whose layers' output it returns cut (`own_graph`): one known
    to have no graph is enough (the target of a rounded prediction, the batch of a model that rounds)."""
    if not info.__dict__.get("cuts_graph") and not (info.calls_backward and any(map(_cutting_module, passed))):
        return False
    tensors = [p for p in flatten(passed) if p is not None and p.kind is Kind.TENSOR]
    if not (info.calls_backward or own_graph or any(p.requires_grad for p in tensors)):
        return False
    # (or given a number or string, which may decide a test that guards the cut: `if threshold is not None:`)
    return any(p.requires_grad is False and not p.param_deps for p in tensors) or any(
        p is not None and p.kind in (Kind.NUMBER, Kind.TEXT) and not p.param_deps for p in passed)


def _cutting_module(prov: Provenance | None) -> bool:
    """A workspace module whose forward cuts a graph somewhere (a loss given to a training function: `fit(net, Dice(0.5))`)."""
    cls = prov.module_class if prov is not None and prov.kind is Kind.MODULE else None
    forward = cls.methods.get("forward") if isinstance(cls, ClassInfo) else None
    return forward is not None and bool(forward.__dict__.get("cuts_graph"))


def _returns_cut(info: FunctionInfo) -> bool:
    """Its summary returns a tensor cut on every path (`self.lin(x).round()`)."""
    ret = info.returns
    return ret is not None and ret.kind is Kind.TENSOR and ret.nondiff is not None


def _non_negative_int(node) -> bool:
    """A literal int exponent of at least 0 (`n ** 2`): only then is an int power an int."""
    return isinstance(node, ast.Constant) and type(node.value) in (int, bool) and node.value >= 0


def _open_parameter(prov: Provenance) -> bool:
    """A symbolic parameter with no graph of its own: whether it requires grad is each call's to say."""
    return bool(prov.param_deps) and prov.requires_grad is None and not prov.composed_from and not prov.graph and prov.origin == "param"


def _with_shape(summary: Provenance | None, walked: Provenance | None) -> Provenance | None:
    """The summary's value with the shape a walk for these arguments found (element by element for a tuple)."""
    if summary is None or walked is None or summary.kind is not walked.kind:
        return summary
    if summary.kind is Kind.SEQUENCE and len(summary.elements) == len(walked.elements):
        return summary.but(elements=tuple(_with_shape(a, b) for a, b in zip(summary.elements, walked.elements)))
    if summary.kind is Kind.SEQUENCE and not summary.elements and walked.origin == _TUPLE and walked.elements:
        # (a tuple whose elements the summary lost in a branch, `out = (loss,) + out` under `if labels is not None`,
        # that this call took: what the walk found, as for a dict's keys)
        return summary.but(elements=walked.elements, origin=_TUPLE)
    if summary.kind is Kind.MAPPING and summary.keys and summary.keys == walked.keys and len(summary.elements) == len(walked.elements):
        # (by key; a key the summary has no value for, set in a branch this call took, is what the walk found)
        return summary.but(elements=tuple(_with_shape(a, b) if a is not None else b for a, b in zip(summary.elements, walked.elements)))
    if summary.kind is not Kind.TENSOR:
        return summary
    if walked.shape is None or summary.shape is not None and None not in summary.shape:
        # (no shape, but known to have several elements for these arguments: `cce.sum(1) / lengths`)
        return summary.but(scalar=False) if summary.scalar is None and walked.scalar is False else summary
    return summary.but(shape=walked.shape, scalar=shapes.scalar_of(walked.shape) if summary.scalar is None else summary.scalar)


def _constructs(event) -> bool:
    """A call event that runs a class's own __init__ (a construction)."""
    return type(event) is CallEvent and event.role is None and event.function is not None and event.function.name == "__init__"


def _optional_tuple(info: FunctionInfo) -> bool:
    """Its summary returns a tuple whose elements it lost where the body tests a parameter against None (`if labels is
    not None: out = (loss,) + out`): a call passing that argument or not takes one branch, so its walk knows them."""
    ret = info.returns
    return info.walked and ret is not None and ret.kind is Kind.SEQUENCE and not ret.elements and info.__dict__.get("tests_none", False)


def _shaped_by_arguments(info: FunctionInfo) -> bool:
    """Its summary returns a tensor (or a tuple holding one) of unknown shape, or unknown dims, made from its parameters."""
    ret = info.returns
    if ret is None or not info.walked:
        return False
    if _optional_tuple(info):
        return True
    returned = [ret, *ret.elements] if ret.kind in (Kind.SEQUENCE, Kind.MAPPING) else [ret]  # (a dict's values too)
    return any(p is not None and p.kind is Kind.TENSOR and p.param_deps and (p.shape is None or None in p.shape) for p in returned)


def _shaped(prov: Provenance | None) -> bool:
    """A tensor whose shape is known and says something (a dim of several elements)."""
    return prov is not None and prov.kind is Kind.TENSOR and prov.shape is not None and prov.scalar is False


def _pair(prov: Provenance | None) -> bool:
    """A short tuple of values (a batch's `(inputs, targets)`), not a list of batches."""
    return prov is not None and prov.kind is Kind.SEQUENCE and 1 < len(prov.elements) <= 3 and all(
        element is None or element.kind is not Kind.SEQUENCE for element in prov.elements)


def _shaped_deeply(prov: Provenance | None, depth: int = 0) -> bool:
    """_shaped, or a sequence holding such a tensor (a constructor given a list of batches)."""
    if prov is None or depth > 3:
        return False
    if prov.kind is Kind.SEQUENCE:
        return any(_shaped_deeply(element, depth + 1) for element in prov.elements)
    return _shaped(prov)


def _sized_deeply(prov: Provenance | None, depth: int = 0) -> bool:
    """A tensor known to have several elements, or a sequence holding one (a list of (inputs, labels) batches, or of
    dicts of them)."""
    if prov is None or depth > 3:
        return False
    if prov.kind is Kind.SEQUENCE or prov.kind is Kind.MAPPING:
        return any(_sized_deeply(element, depth + 1) for element in prov.elements)
    return _sized(prov)


def _backpropagates_parameter(function: FunctionInfo | None, node: ast.Call) -> bool:
    """`loss.backward()` where `loss` is a parameter of the function that the body never binds again."""
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    if function is None or not isinstance(receiver, ast.Name) or isinstance(function.node, ast.Lambda):
        return False
    args = function.node.args
    if not any(arg.arg == receiver.id for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]):
        return False
    return not any(isinstance(sub, ast.Name) and sub.id == receiver.id and not isinstance(sub.ctx, ast.Load)
                   for sub in ast.walk(function.node))


def _instance_sized(info: FunctionInfo, receiver: Provenance | None) -> bool:
    """A method of an instance whose constructor kept tensors known to have several elements, or batches of them
    (`Trainer(model, batches).fit()`): what it backpropagates is made from them."""
    if info.cls is None or receiver is None or receiver.node is None or receiver.origin == "self":
        return False
    return any(_sized_deeply(p) for p in info.cls.instances.get(id(receiver.node), {}).values())


def _sized(prov: Provenance | None) -> bool:
    """A tensor known to have several elements, or a DataLoader's batches (what a single-call helper is walked with)."""
    return prov is not None and (prov.kind is Kind.TENSOR and prov.scalar is False or prov.kind is Kind.SEQUENCE and prov.origin == "DataLoader")


def _trainable_module(prov: Provenance) -> bool:
    """A user nn.Module, or a torch.nn layer that has parameters (not a loss, not ReLU)."""
    cls = prov.module_class
    if isinstance(cls, ClassInfo):
        return cls.is_module
    if isinstance(cls, str):
        short = cls.rsplit(".", 1)[-1]
        return not short.endswith("Loss") and api.layer_parameters(short) != ()
    return False


def _union(sets: list) -> frozenset:
    """The union of frozensets, without a new set when at most one is not empty (most ops' case)."""
    found = None
    for one in sets:
        if one:
            if found is None:
                found = one
            else:
                return frozenset().union(*sets)
    return found if found is not None else frozenset()


def _broadcast_shape(inputs):
    """The broadcast shape of an op's operands: a Python number is 0-dim; any other operand not a tensor of known
    shape makes it unknown."""
    found = []
    for prov, _ in inputs:
        if prov is None:
            return None
        if prov.kind is Kind.NUMBER:
            found.append(())
        elif prov.kind is Kind.TENSOR and prov.shape is not None:
            found.append(prov.shape)
        else:
            return None
    return shapes.broadcast(found)


def _before_star(args: list) -> list:
    """The positional arguments up to the first `*t` (past it, which parameter an argument fills is not its index)."""
    for index, arg in enumerate(args):
        if type(arg) is ast.Starred:
            return args[:index]
    return args


def _fold(op: ast.operator, left, right) -> int | None:
    """Integer arithmetic of two known integers (sizes written `3 * 8 * 8`, `hidden // 2`)."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (left, right)):
        return None
    if isinstance(op, ast.Mult):
        return left * right
    if isinstance(op, ast.Add):
        return left + right
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.FloorDiv) and right:
        return left // right
    return None


def _literal_int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.BinOp):
        return _fold(node.op, _literal_int(node.left), _literal_int(node.right))
    value = _const(node)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _layer_width(name: str | None, built: ast.Call | None) -> int | None:
    if name not in _LAYER_WIDTH or built is None:
        return None
    index, keyword = _LAYER_WIDTH[name]
    node = built.args[index] if len(built.args) > index else next((kw.value for kw in built.keywords if kw.arg == keyword), None)
    value = _literal_int(node)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def inherited_method(cls: ClassInfo, name: str, depth: int = 0) -> FunctionInfo | None:
    """`cls`'s method `name`, its own or one it inherits from a base class of this module, walked as the base's: only
    when nothing the inherited code touches on `self` (attributes, the methods it calls, theirs in turn) is something
    `cls` or a class before the base in its MRO defines or sets itself; otherwise unknown (None)."""
    found = cls.methods.get(name)
    if found is not None or not cls.bases:
        return found
    order = _defining_order(cls, name)
    if order is None:
        return None
    info, before = order
    own = frozenset().union(*(_own_self_names(c) for c in before))
    if _self_names_reached(info) & own:
        return None
    if name != "__init__" and info.cls is not None and "__init__" not in own:
        # what it reads on `self` the base's constructor built: with a hook `cls` overrides (`self.gate = self.make_gate()`,
        # `make_gate` redefined), built otherwise than the base's walk knows
        init = _defined_above(info.cls, "__init__")
        if init is not None and _self_names_reached(init) & own:
            return None
    return info


def _defined_above(cls: ClassInfo, name: str, depth: int = 0) -> FunctionInfo | None:
    """The method `name` as the first class of `cls`'s MRO (itself first) defines it, whatever it reaches."""
    found = cls.methods.get(name)
    if found is not None:
        return found
    order = _defining_order(cls, name)
    return order[0] if order is not None else None


def _defining_order(cls: ClassInfo, name: str):
    """(the method `name` as `cls`'s MRO finds it, the classes of that order before its class); None where none of
    this module defines it, or where the order is unknown (a base of another module) and two bases define it."""
    order = class_mro(cls)
    if order is not None:
        at = next((i for i, c in enumerate(order) if name in c.methods), None)
        return (order[at].methods[name], order[:at]) if at is not None else None
    found, seen, todo = [], [], [cls]
    while todo and len(seen) < 32:  # (the bases of this module, whatever their order: one definition or none)
        c = todo.pop()
        if any(c is s for s in seen):
            continue
        seen.append(c)
        if name in c.methods and c is not cls:
            found.append(c)
        else:
            todo.extend(c.bases)
    if len({id(c.methods[name]) for c in found}) != 1:
        return None
    return found[0].methods[name], [c for c in seen if c is not found[0] and name not in c.methods]


def class_mro(cls: ClassInfo) -> list | None:
    """`cls`'s method resolution order as Python computes it (C3): None where a class up its hierarchy has a base of
    another module (where that one goes is unknown) or the bases admit no order."""
    return _linearized(cls, 0)


def _linearized(c: ClassInfo, depth: int) -> list | None:
    named = [b for b in c.node.bases if not (type(b) is ast.Name and b.id == "object")]
    if depth > 8 or len(named) != len(c.bases):
        return None
    if not c.bases:
        return [c]
    lists = []
    for base in c.bases:
        found = _linearized(base, depth + 1)
        if found is None:
            return None
        lists.append(list(found))
    lists.append(list(c.bases))
    order = [c]
    while any(lists):
        head = next((l[0] for l in lists if l and not any(any(x is l[0] for x in m[1:]) for m in lists)), None)
        if head is None:
            return None
        order.append(head)
        lists = [l[1:] if l and l[0] is head else l for l in lists]
    return order


def _module_chain(cls: ClassInfo, qualname) -> list | None:
    """The workspace classes of an nn.Module subclass's single-inheritance chain, itself first, up to the one derived from
    `nn.Module` itself (`class GenB(BaseModel)`, `class BaseModel(nn.Module)`): the order `super().forward(...)` looks in.
    None where a class has several bases or a base of another module or library (where its forward comes from is unknown)."""
    order, c = [], cls
    while len(order) < 8:
        order.append(c)
        if len(c.node.bases) != 1:
            return None
        if not c.bases:
            base = c.node.bases[0]
            return order if qualname(base) == "torch.nn.Module" else None
        c = c.bases[0]
    return None


def _inherits_attribute(cls: ClassInfo, attr: str) -> bool:
    """`self.<attr>` of `cls` is what a base class's __init__ set: `cls` has no __init__ of its own or calls
    the base's (`super().__init__(...)`), and none of its methods touches `self.<attr>` otherwise."""
    runs_base = cls.__dict__.get("_runs_base_init")
    if runs_base is None:
        init = cls.methods.get("__init__")
        runs_base = cls._runs_base_init = init is None or any(  # type: ignore[attr-defined]
            type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "__init__" for node in syntax.nodes(init.node))
    return runs_base and attr not in _own_self_names(cls, stores_only=True)


def _own_self_names(cls: ClassInfo, stores_only: bool = False) -> frozenset:
    """The names `cls`'s own body defines as methods and sets on `self` (with stores_only: only those it sets)."""
    key = "_own_self_stores" if stores_only else "_own_self_names"
    found = cls.__dict__.get(key)
    if found is None:
        names = set() if stores_only else set(cls.methods)
        for method in cls.methods.values():
            names |= _self_names(method.node, stores_only=True)
        found = frozenset(names)
        setattr(cls, key, found)
    return found


def _self_names_reached(info: FunctionInfo) -> frozenset:
    """The attributes and methods an inherited method uses on `self`, with those of its class's methods it calls."""
    found = info.__dict__.get("_self_reached")
    if found is None:
        names, todo, seen = set(), [info], set()
        while todo:
            method = todo.pop()
            if id(method) in seen:
                continue
            seen.add(id(method))
            used = _self_names(method.node)
            names |= used
            todo.extend(m for m in (inherited_method(method.cls, n) for n in used if method.cls is not None) if m is not None)
        found = info._self_reached = frozenset(names)  # type: ignore[attr-defined]
    return found


def _stored_names(cls: ClassInfo) -> frozenset:
    """The attributes `cls`'s __init__ stores on `self`."""
    init = cls.methods.get("__init__")
    return frozenset(_self_names(init.node, stores_only=True)) if init is not None else frozenset()


def _self_names(node, stores_only: bool = False) -> set[str]:
    args = getattr(node.args, "args", None) if hasattr(node, "args") else None
    if not args:
        return set()
    me = args[0].arg
    return {n.attr for n in syntax.nodes(node) if type(n) is ast.Attribute and type(n.value) is ast.Name and n.value.id == me
            and (not stores_only or type(n.ctx) is not ast.Load)}


def setter_attributes(node) -> list[str]:
    """The attributes a method sets on its `self` the way a setup method does: at the top of its body or in an
    if/with/try there, not in loops (Walker._late_attribute walks it first when one of them is read)."""
    if not node.args.args:
        return []
    me = node.args.args[0].arg
    found = []
    stack = list(node.body)
    while stack:
        stmt = stack.pop()
        kind = type(stmt)
        if kind is ast.Assign or kind is ast.AnnAssign:
            for target in (stmt.targets if kind is ast.Assign else [stmt.target]):
                for item in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
                    if isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name) and item.value.id == me:
                        found.append(item.attr)
        elif kind is ast.If or kind is ast.With or kind is ast.Try:
            stack.extend(stmt.body)
            stack.extend(getattr(stmt, "orelse", ()))
    return found


def _class_constant(cls: ClassInfo, attr: str, line: int) -> Provenance | None:
    """A plain class-body number (`class Cfg: bins = 8`), short string (`reduction = "none"`) or nested class (`class network: ...`) read as an attribute,
    when no method of the class stores that attribute; None otherwise. Computed once per class."""
    table = cls.__dict__.get("_body_constants")
    if table is None:
        bound = cls.__dict__.get("_body_names")
        if bound is None:
            bound = cls._body_names = {name for stmt in cls.node.body for name in _body_names(stmt)}  # type: ignore[attr-defined]
        if attr not in bound:  # (the usual case: not a class-body name; the class's tree is walked only for one)
            return None
        stored = _stored_attributes(cls.node)
        table, seen = {}, set()
        for stmt in cls.node.body:
            for name in _body_names(stmt):
                if name in seen or name in stored:
                    table[name] = None  # bound twice, or also stored on an instance: not one known value
                    continue
                seen.add(name)
                if isinstance(stmt, ast.ClassDef):
                    table[name] = Provenance(Kind.MODULE, stmt.lineno, module_class=ClassInfo(stmt, stmt.name, False), origin=stmt.name)
                elif isinstance(getattr(stmt, "value", None), ast.Constant) and type(stmt.value.value) is str:
                    table[name] = _text(stmt.value.value)  # `class Cfg: reduction = "none"`
                else:
                    value = _number(stmt.value)
                    table[name] = None if value is None or isinstance(value, bool) else (_INT_NUMBER if isinstance(value, int) else _FLOAT_NUMBER)
        cls._body_constants = table  # type: ignore[attr-defined]
    return table.get(attr)


def _stored_attributes(node: ast.ClassDef) -> frozenset:
    """The attribute names a class's code stores (`self.x = ...`): a walk of the whole class, kept on its tree."""
    return syntax.kept_on(node, "_stored_attributes", lambda cls: frozenset(
        child.attr for child in syntax.nodes(cls) if type(child) is ast.Attribute and type(child.ctx) is ast.Store))


def _body_names(stmt: ast.stmt) -> list[str]:
    """The plain names a class-body statement binds that _class_constant knows: `x = ...`, `x: T = ...`, `class x`."""
    if isinstance(stmt, ast.ClassDef):
        return [stmt.name]
    if isinstance(stmt, ast.AnnAssign):
        return [stmt.target.id] if isinstance(stmt.target, ast.Name) else []
    return [t.id for t in getattr(stmt, "targets", ()) if isinstance(t, ast.Name)]


def _writes(call: ast.Call, op: str | None, position: int) -> bool:
    """An in-place op that certainly writes: a dropout only with a literal p > 0 (`p` at `position` or by keyword)."""
    needed = api.noop_unless_positive(op)
    if needed is None:
        return True
    value = _number(_argument(call, needed, position))
    return value is not None and value > 0


def _argument(call: ast.Call, name: str, position: int | None) -> ast.expr | None:
    """The expression passed as `name=` or at `position` (-1 or None: keyword only)."""
    keyword = next((kw.value for kw in call.keywords if kw.arg == name), None)
    if keyword is None and position is not None and 0 <= position < len(call.args):
        return call.args[position]
    return keyword


_NO_REDUCTION = ast.Constant("none")
_OUT_MODULES = ("torch", "torch.special", "torch.linalg", "torch.fft")  # the namespaces whose functions take `out=`


def _reduction_scalar(argument: ast.expr | ast.keyword | None) -> bool | None:
    """A loss's `reduction=`: "mean"/"sum" (the default) give one element, "none" keeps the shape, a variable is unknown."""
    if argument is None:
        return True
    value = _const(argument.value if isinstance(argument, ast.keyword) else argument)
    if value == "none":
        return False
    return True if isinstance(value, str) else None


def _elementwise_scalar(info: FunctionInfo, ret: Provenance, deps) -> bool | None:
    """A helper returning an elementwise function of its parameters (`return (pred - target) ** 2`, `torch.abs(a - b)`):
    its result has at least as many elements as each argument, so one known to have several makes it non-scalar."""
    if not any(prov is not None and prov.kind is Kind.TENSOR and prov.scalar is False for prov, _ in deps):
        return None
    function, expr = info.node, ret.node
    params = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    imports = getattr(info.owner, "imports", None)
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            if node.id not in params:
                return None
        elif kind is ast.Constant:
            if not isinstance(node.value, (int, float)):
                return None
        elif kind is ast.BinOp:
            if isinstance(node.op, ast.MatMult):
                return None
            stack.extend((node.left, node.right))
        elif kind is ast.UnaryOp:
            stack.append(node.operand)
        elif kind is ast.Call and not node.keywords:
            func = node.func
            qualname = imports.qualname(func) if imports is not None else None
            if qualname is not None:
                if not (qualname.startswith(("torch.", "torch.nn.functional.")) and qualname.rsplit(".", 1)[-1] in api.POINTWISE):
                    return None
            elif isinstance(func, ast.Attribute) and func.attr in api.POINTWISE:
                stack.append(func.value)
            else:
                return None
            stack.extend(node.args)
        else:
            return None
    return False


# Literal numbers carry no position worth keeping: two shared values instead of one per literal.
_ITERATOR_CALL = re.compile(r"\.(?:" + "|".join(sorted(map(re.escape, api.MODULE_ITERATORS))) + r")\(")
_INT_NUMBER = Provenance(Kind.NUMBER, 0, dtype=api.INT)
_FLOAT_NUMBER = Provenance(Kind.NUMBER, 0, dtype=api.FLOAT)
_MATH_CONSTANTS = frozenset({"pi", "e", "tau", "inf"})  # the math module's float constants
# kinds of value that are never None: `p is not None` holds of a parameter a call gives one of them
_NEVER_NONE = frozenset({Kind.TENSOR, Kind.MODULE, Kind.OPTIMIZER, Kind.NUMBER, Kind.TEXT})
_TRUE = Provenance(Kind.NUMBER, 0, dtype=api.INT, truth=True)  # (a bool is an int, as before: its truth is what is new)
_FALSE = Provenance(Kind.NUMBER, 0, dtype=api.INT, truth=False)
_NAMED_INTS: dict = {}


def _is_enum(cls: ClassInfo) -> bool:
    """A class deriving from enum.Enum (or StrEnum, IntEnum, Flag), by the names of its bases."""
    return any((label(base) or "").rsplit(".", 1)[-1] in ("Enum", "StrEnum", "IntEnum", "Flag", "IntFlag") for base in cls.node.bases)


def _member_values(cls: ClassInfo) -> set:
    """The string values an Enum's class body gives its members (`NONE = "none"`)."""
    return {stmt.value.value for stmt in cls.node.body if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
            and type(stmt.value.value) is str}


def _is_dataclass(cls: ClassInfo) -> bool:
    """@dataclass (not `init=False`: its constructor is then the class's own, or none)."""
    for decorator in cls.node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (label(target) or "").rsplit(".", 1)[-1] == "dataclass":
            return not (isinstance(decorator, ast.Call) and any(kw.arg == "init" and _const(kw.value) is False for kw in decorator.keywords))
    return False


def _dataclass_fields(cls: ClassInfo, node: ast.Call, arg_provs: list, keywords, is_enum) -> dict:
    """field name -> what a dataclass's generated __init__ stores: the argument passed (positionally in field order, or
    by keyword), else a literal default. A field its __post_init__ stores again is unknown, unless it converts it to
    an Enum member (`self.reduction = Reduction(self.reduction)`, known by the same value)."""
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(kw.arg is None for kw in node.keywords):
        return {}
    names, defaults, rebound = _dataclass_layout(cls, is_enum)
    if len(arg_provs) > len(names) or arg_provs and cls.node.bases:
        return {}  # (a base class's fields come first: which one a positional argument fills is not known here)
    fields = dict(zip(names, arg_provs))
    for name in names[len(arg_provs):]:
        if keywords and name in keywords:
            fields[name] = keywords[name]
        elif name in defaults:
            fields[name] = _text(defaults[name])
    for name in rebound:
        fields.pop(name, None)
    return {name: prov for name, prov in fields.items() if prov is not None}


def _dataclass_layout(cls: ClassInfo, is_enum) -> tuple[list, dict, set]:
    """A dataclass's fields in order, their string defaults, and the fields its __post_init__ stores again (not as an
    Enum member of themselves): facts of the class, found once per class."""
    found = cls.__dict__.get("_dataclass_layout")
    if found is None:
        body = [stmt for stmt in cls.node.body if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)]
        names = [stmt.target.id for stmt in body if "ClassVar" not in ast.unparse(stmt.annotation)]
        defaults = {stmt.target.id: stmt.value.value for stmt in body
                    if isinstance(stmt.value, ast.Constant) and type(stmt.value.value) is str}
        rebound = set()
        post = cls.methods.get("__post_init__")
        if post is not None:
            for stmt in ast.walk(post.node):
                for target in getattr(stmt, "targets", [getattr(stmt, "target", None)]):
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self" \
                            and not _enum_of_itself(stmt, target.attr, is_enum):
                        rebound.add(target.attr)
        found = cls._dataclass_layout = (names, defaults, rebound)  # type: ignore[attr-defined]
    return found


def _enum_of_itself(stmt: ast.AST, attr: str, is_enum) -> bool:
    """`self.x = SomeEnum(self.x)`, SomeEnum a class deriving from Enum (`is_enum(name)`)."""
    value = getattr(stmt, "value", None)
    return (isinstance(stmt, ast.Assign) and isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and len(value.args) == 1
            and not value.keywords and isinstance(value.args[0], ast.Attribute) and value.args[0].attr == attr
            and isinstance(value.args[0].value, ast.Name) and value.args[0].value.id == "self" and is_enum(value.func.id))


def _built_or(ret: Provenance, call: ast.Call) -> ast.AST:
    """The node a helper's returned value is known by at its call: a torch.nn layer keeps its construction call (its
    `reduction=`, its width are read from it); anything else is the call's value."""
    if ret.kind is Kind.MODULE and isinstance(ret.module_class, str) and isinstance(ret.node, ast.Call):
        return ret.node
    return call


_TEXTS: dict = {}


def _text(value: str) -> Provenance | None:
    """A short str literal (`"none"`, `"mean"`): passed to a helper or a constructor, kept on an attribute, it reaches a
    loss's `reduction=` as that string (shared, as the numbers are: a literal's provenance is its value alone)."""
    if len(value) > 16:
        return None
    prov = _TEXTS.get(value)
    if prov is None:
        if len(_TEXTS) > 4096:
            _TEXTS.clear()
        prov = _TEXTS[value] = Provenance(Kind.TEXT, 0, text=value)
    return prov


def _as_output(value: Provenance | None, output: Provenance) -> Provenance | None:
    """What an element of a forward's returned tuple is at a call: a tensor cut from the graph (`loss.detach()`), a
    number or a string as the summary has it, a dict display of those (a logging output); anything else the call's
    output, as before."""
    if value is None:
        return output  # (not known: what every element was before, the call's output)
    if value.kind is Kind.TENSOR:
        return value if not value.graph and (value.detached or value.requires_grad is False) else output
    if value.kind is Kind.MAPPING and value.keys and value.elements \
            or value.kind is Kind.SEQUENCE and value.origin == _TUPLE and value.elements:  # (`return y, (h, c)`)
        return value.but(elements=tuple(_as_output(element, output) for element in value.elements))
    return value if value.kind in (Kind.NUMBER, Kind.TEXT) else output


_SWAPPING_LAYERS = ("torch.ao.", "torch.quantization.", "torch.fx.")  # (fuse_modules, prepare/convert with inplace=True)
_LOGGER_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical"})


def _text_comparison(node: ast.Compare, provs: list) -> Provenance | None:
    """`act == "relu"`, `act not in KEEPS_OUTPUT` of a string known here against strings written out (a tuple display, or
    a name bound to one): a bool, whose truth an `if` on a flag kept from it reads (Walker._flag_test); else unknown."""
    if len(node.ops) != 1 or provs[0] is None or provs[0].kind is not Kind.TEXT or provs[0].text is None or provs[1] is None:
        return None
    op, left, right = type(node.ops[0]), provs[0].text, provs[1]
    if op in (ast.Eq, ast.NotEq) and right.kind is Kind.TEXT and right.text is not None:
        found = left == right.text
    elif op in (ast.In, ast.NotIn) and right.kind is Kind.SEQUENCE and right.origin == _TUPLE \
            and all(e is not None and e.kind is Kind.TEXT and e.text is not None for e in right.elements):
        found = any(left == e.text for e in right.elements)
    else:
        return None
    return _TRUE if found is (op in (ast.Eq, ast.In)) else _FALSE


_FOLLOWED_CHANGES = syntax.ADDED_AT_END  # (a walk adds these in order: _grow_container)
_FOLLOWED_OR_PASSED = _FOLLOWED_CHANGES | {"passed"}


def _reads_only(imports, func: ast.expr) -> bool:
    """A call of torch (but its quantization and fx passes, which swap layers), of the copy module or of a logger's
    method: it reads the containers it is given, never changes their items."""
    qualname = imports.qualname(func)
    if qualname is not None:
        return (imports.is_torch(qualname) and not qualname.startswith(_SWAPPING_LAYERS)) or qualname.startswith(("copy.", "logging."))
    return type(func) is ast.Attribute and func.attr in _LOGGER_METHODS  # (`log.info("%s", self.head)`)


def _workspace_name(qualname: str, module_of_workspace) -> bool:
    """A name imported from the user's own modules: a relative import, or a top package `module_of_workspace(top)` says
    is one of the workspace's."""
    top = qualname.lstrip(".").split(".", 1)[0]
    return top not in _NEVER_WORKSPACE and (qualname.startswith(".") or module_of_workspace(top))


def _imported_defs(imports, resolver, source, func: ast.expr) -> list | None:
    """The def of another module of the workspace that a call of `func` runs (`harden(self.layers)` after `from utils
    import harden`), for what it does to the containers it is given; None when that is not known (no resolver, a
    library's name, a class, not resolved)."""
    qualname = imports.qualname(func)
    probe = getattr(resolver, "workspace_module", None)
    if probe is None or not source.path or qualname is None or imports.is_torch(qualname) \
            or not _workspace_name(qualname, lambda top: probe(source.path, top)):
        return None
    definition = resolver.resolve(source, func, qualname=qualname)
    return [definition.node] if isinstance(definition, FunctionInfo) and isinstance(definition.node, ast.FunctionDef | ast.AsyncFunctionDef) else None


def _layer_list(sequence: Provenance) -> bool:
    """A list of layers being built: empty, or layers and unknown items, at least one a layer."""
    found = False
    for element in sequence.elements:
        if element is not None:
            if element.kind is not Kind.MODULE:
                return False
            found = True
    return found or not sequence.elements


def _walked_output(walked: Provenance, result: Provenance, node: ast.Call) -> Provenance:
    """The tuple display a forward walked for this call returns, as the call's output: each tensor that requires grad is
    the output with its sizes, a nested tuple display (`return y, (h, c)`) likewise, anything else unknown."""
    values = tuple(result.but(scalar=value.scalar, shape=value.shape, requires_grad=value.requires_grad or result.requires_grad)
                   if value is not None and value.kind is Kind.TENSOR and value.requires_grad
                   else _walked_output(value, result, node) if value is not None and value.kind is Kind.SEQUENCE and value.origin == _TUPLE
                   and value.elements else None
                   for value in walked.elements)
    return Provenance(Kind.SEQUENCE, node.lineno, elements=values, origin=_TUPLE, node=node)


def _dim_size(prov: Provenance | None, position) -> Provenance | None:
    """`x.size(i)` / `x.shape[i]` of a tensor whose dim i has a known size: that integer (reshapes built from it keep
    it); None where unknown."""
    if prov is None or prov.kind is not Kind.TENSOR or prov.shape is None or not isinstance(position, int) or isinstance(position, bool):
        return None
    dim = shapes._dim(position, len(prov.shape))
    size = prov.shape[dim] if dim is not None else None
    return _int_number(size) if isinstance(size, int) else None


def _int_number(value: int) -> Provenance:
    """An integer literal bound to a name, with its value (shared per value, like the literals)."""
    prov = _NAMED_INTS.get(value)
    if prov is None:
        prov = Provenance(Kind.NUMBER, 0, dtype=api.INT, value=value)
        if len(_NAMED_INTS) < 4096:
            _NAMED_INTS[value] = prov
    return prov

_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@",
        ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_GRAD_TYPOS = {"require_grad", "requires_grads", "requiers_grad", "reguires_grad", "requires_gard", "require_grads", "requries_grad",
               "requiresgrad", "requires_grad_true", "reqires_grad", "requires_Grad", "required_grad"}
# Modules that are never part of the user's workspace: no point asking jedi.
_NEVER_WORKSPACE = {"torch", "numpy", "np", "os", "sys", "math", "random", "time", "json", "re", "typing", "collections", "functools",
                    "itertools", "pathlib", "logging", "torchvision", "torchaudio", "einops", "timm", "transformers", "scipy", "pandas",
                    "matplotlib", "tqdm", "dataclasses", "abc", "copy", "warnings", "argparse", "pytorch_lightning", "lightning"}


def _modules_by_key(prov: Provenance | None) -> bool:
    """`{"backbone": net, "head": head}`, `{"net": SGD(...)}`: a dict of modules or optimizers under literal keys (what
    `models["backbone"](x)`, `optimizers["net"].step()` then reach)."""
    return prov is not None and prov.kind is Kind.MAPPING and bool(prov.keys) and None not in prov.keys and all(
        value is not None and (value.kind is Kind.MODULE and value.module_class is not None or value.kind is Kind.OPTIMIZER)
        for value in prov.elements)


def _writes_parameters(function: ast.AST) -> bool:
    """The body writes in place a name bound by `for p in <x>["params"]` (an optimizer's parameter groups)."""
    params = {loop.target.id for loop in syntax.nodes(function) if type(loop) is ast.For and type(loop.target) is ast.Name
              and type(loop.iter) is ast.Subscript and _const(loop.iter.slice) == "params"}
    if not params:
        return False
    for node in syntax.nodes(function):
        target = None
        if type(node) is ast.Call and type(node.func) is ast.Attribute and api.is_inplace_method(node.func.attr):
            target = node.func.value
        elif type(node) is ast.AugAssign:
            target = node.target
        if type(target) is ast.Attribute and target.attr == "data":
            target = target.value
        if type(target) is ast.Name and target.id in params:
            return True
    return False


def _none_defaulted(value) -> tuple:
    """`p if p is not None else D`, `D if p is None else p`, `p or D`: (p, D); else (None, None)."""
    if type(value) is ast.BoolOp and type(value.op) is ast.Or and len(value.values) == 2 and type(value.values[0]) is ast.Name:
        return value.values[0].id, value.values[1]
    if type(value) is not ast.IfExp:
        return None, None
    test = value.test
    if not (type(test) is ast.Compare and len(test.ops) == 1 and type(test.left) is ast.Name and type(test.ops[0]) in (ast.Is, ast.IsNot)
            and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None):
        return None, None
    kept, default = (value.orelse, value.body) if type(test.ops[0]) is ast.Is else (value.body, value.orelse)
    return (test.left.id, default) if type(kept) is ast.Name and kept.id == test.left.id else (None, None)


def _derives(cls: ClassInfo, base: ClassInfo, depth: int = 0) -> bool:
    return depth < 8 and any(b is base or isinstance(b, ClassInfo) and _derives(b, base, depth + 1) for b in cls.bases or ())


def _output_marked(call: ast.Call, target: ast.Tuple | ast.List, elements: list) -> list:
    """`a, v = model(x)`: each unpacked output of a call whose graph holds the call also holds its own target's node
    (`a`'s, `v`'s), so that a graph tells which outputs of that call it was built from (AG003: two losses of the two
    disjoint heads of one forward backpropagate two graphs). Where the target is bound, the output's graph is the call's
    plus that one id: no other graph holds it unless it holds that very output. (ModuleModel.output_marks: those ids.)"""
    marked = []
    for element_target, (element_value, element_prov) in zip(target.elts, elements):
        if element_value is None and element_prov is not None and element_prov.kind is Kind.TENSOR and id(call) in element_prov.graph:
            element_prov = element_prov.but(graph=element_prov.graph | {id(element_target)})
        marked.append((element_value, element_prov))
    return marked
