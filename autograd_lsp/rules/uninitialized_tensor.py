"""## What it does
Flags `torch.empty(...)`, `torch.empty_like(...)`, `torch.Tensor(n, ...)` / `torch.FloatTensor(n)` (sizes, not
data; a parameter is a size when some call in the module passes it an integer, `Gain(2 * hidden)`), also through
`nn.Parameter(...)` / `Variable(...)`, whose values are read — used in arithmetic, a torch
function or a module's forward (directly or as an element of a list, `torch.cat([a, w])`; not, in test code, a module
built around a test double, `ExpectedImprovement(model=MockModel(...))`, which may ignore its input), printed,
indexed, accumulated into with `+=`, or bound to a name and returned (alone or in a tuple, `return h0, c0`) — before anything writes them (an element of a
tuple assignment, `self.a, self.b = nn.Parameter(torch.Tensor(n)), ...`, is followed from its own target). Writes are `fill_`, `zero_`, `copy_`, `uniform_`,
`normal_`, any `nn.init.*`, index assignment `x[i] = …`, and `out=`. A module attribute
`self.w = nn.Parameter(torch.Tensor(n, m))` is flagged only when nothing in the file ever initialises
`w` (also one registered by name, `self.register_parameter("w", nn.Parameter(torch.Tensor(n)))` or `register_buffer`,
through nn.Module's method or an override of this file that hands both on to `super()`'s; `reset_parameters()`, `nn.init.*(self.w)`, `self.w.data.uniform_()`, a loop over `parameters()`…; not a write of
another nn.Module class's own `self.w` when no class here relates the two, nor of a torch layer's (`self.fc.bias.zero_()`),
nor a fill of a local a factory just made; `self.w = None` in the branch without it writes nothing; `apply(fn)` of a def
of this file initialises what `fn` writes)
and a method reads it (also by handing it to a function of this file that computes with it and never writes, rebinds,
returns or hands it to unknown code: `affine(x, self.gain, self.shift)`), or when its only initialiser is a method nothing
runs (a `reset_parameters()` that `__init__` never calls, its name used nowhere else in a file that builds the module and hands nothing to torch.distributed); a method that assigns the attribute its real value only after reading it (a running
statistic replaced at the end of `train()`) reads the garbage on its first call, when any `if` around the read is
about the tensor itself or true with the values `__init__` set (a guard on other state may be what delays it).
Not reads: `x.new(...)` and `new_*` (dtype and device only), `x.backward(...)` (it runs x's graph, never its values), a buffer whose element views went, as a list, first to
what writes them (a foreach in-place op, a function of the workspace whose body writes that list's elements; not
print, logging, `len`, `dict`), and a "size" whose items are tuples (itertools permutations / combinations / product,
through `set`/`list`/`sorted`: torch raises TypeError before allocating; a set of ints is a valid shape).
Storage handed back as a bare item of a tuple (`return x, out`) is followed into the callers of this module that
unpack it (reported at the first that computes with that item before writing it; silent when every caller writes it
or hands it on first); with no such caller, or a bundle kept whole, the return is a read as before, and so is a tuple
that computes with it itself (`return running, running.mean()`).
`return torch.empty(...)` itself (an allocator handing storage to its caller) and anything passed to an unknown function (which may fill it) are left alone, unless the helper is not named as an
allocator and a caller in the same module computes with what it returns before writing it (`h = self.init_state(n)`
then `self.cell(x, h)`): that is reported at the allocation. A script's top-level allocation (one tensor, or a list of
them from a comprehension, `ema = [torch.empty(p.shape) for p in params]`) is also followed into the functions the script
then calls (`update_ema()` reading `e.mul_(decay)`); a list handed as a whole to anything first is left alone.

## Why is this bad?
These constructors allocate memory and leave whatever bytes were there: the values are garbage — zeros
on one run, `1e-38` or `nan` on the next (`torch.FloatTensor(2)` is two uninitialised
floats; `torch.FloatTensor([2])` is the value 2).
Nothing raises; results are silently wrong and not reproducible.

## Example
```python
counts = torch.Tensor(num_classes)
for c in range(num_classes):
    counts[c] += (labels == c).sum()
```

## Use instead
```python
counts = torch.zeros(num_classes)
for c in range(num_classes):
    counts[c] += (labels == c).sum()
```
or write every value before reading (`torch.empty(n).uniform_()`, `nn.init.kaiming_uniform_(w)`).

## Fix safety
Unsafe: `torch.zeros(...)` gives defined values, which changes what the program computes (that is the
point, but the intended initial values may not be zeros).

## Runtime signature
silent: garbage values (NaN under `torch.utils.deterministic.fill_uninitialized_memory`)
"""
from __future__ import annotations

import ast
import heapq
import operator
import sys

from ..analysis import callsite
from ..analysis import doubles
from ..analysis import torch_api as api
from ..analysis import torch_ops as ops
from ..analysis import uses
from ..analysis.model import AttrStoreEvent, BindEvent, CallEvent, ClassInfo, InplaceEvent, ModuleModel, UseEvent
from ..analysis.toggles import literal_bool, requires_grad_changes
from ..analysis.provenance import Kind
from ..analysis.syntax import basic_index, body_statement, bound_names, dotted, nodes, parents
from ..findings import Edit, Fix, Safety, Severity, Span
from .tree_order import breadth_first, children

CODE = "AG012"
NAME = "uninitialized-tensor"
SEVERITY = Severity.WARNING
SUMMARY = "Uninitialised tensor (torch.empty / torch.Tensor(n)) read before it is written"
RUNTIME_SIGNATURE = "silent: garbage values (NaN under torch.utils.deterministic.fill_uninitialized_memory)"
RULE = sys.modules[__name__]

# Names that hold one integer. Not `size`, `out_size`, `dims`: those are as often tuples, and a legacy constructor
# given a tuple or list makes a tensor OF it (`torch.Tensor((2, 3))` is tensor([2., 3.])).
SIZE_NAMES = ("n", "k", "m", "d", "num", "dim", "len", "length", "count", "width", "height", "depth", "channels", "features",
              "classes", "units", "hidden")

WRITE, READ, ESCAPE, NEUTRAL, BOUND = "write", "read", "escape", "neutral", "bound"


def check(model: ModuleModel):
    for event in model.of_type(CallEvent):
        if event.result is None or event.result.kind is not Kind.TENSOR or event.result.node is not event.node:
            continue
        short = _uninitialised_factory(model, event)
        if short is None:
            continue
        finding = _check_creation(model, event, short)
        if finding is not None:
            yield finding


# -- what allocates without initialising --------------------------------------------------------------
def _uninitialised_factory(model: ModuleModel, event: CallEvent) -> str | None:
    qualname = event.qualname or ""
    module, _, short = qualname.rpartition(".")
    if module != "torch":
        return None
    call = event.node
    if short in api.UNINITIALISED_FACTORIES:
        if event.keyword("out") is not None or _zero_sized(call, event.ctx.scope) or _unordered_size(model, call):
            return None
        return short if call.args or event.keyword("size") is not None else None
    if short in api.LEGACY_CONSTRUCTORS and call.args and not _zero_sized(call, event.ctx.scope):
        if len(call.args) > 1 or _size_like(model, call.args[0], event.ctx.scope, event.seq):
            return short
    return None


def _unordered_size(model: ModuleModel, call: ast.Call) -> bool:
    """`torch.empty(list(set(permutations(rows, 4))))`: a "size" whose items are tuples, from itertools' permutations /
    combinations / product (through `set`, `list`, `tuple`, `sorted`) or a set of tuple literals, is no shape: torch
    raises TypeError ("size must be tuple of ints") before anything is allocated, let alone read. A set of ints
    (`sorted(set(dims))`, `list({n, m})`) is a valid shape: not this."""
    if len(call.args) != 1 or call.keywords and any(kw.arg == "size" for kw in call.keywords):
        return False
    arg = call.args[0]
    while isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) \
            and arg.func.id in ("list", "tuple", "sorted", "set", "frozenset") \
            and len(arg.args) == 1 and model.imports.qualname(arg.func) is None:
        arg = arg.args[0]
    if isinstance(arg, ast.Set):
        return bool(arg.elts) and all(isinstance(elt, ast.Tuple) for elt in arg.elts)
    if isinstance(arg, ast.SetComp):
        return isinstance(arg.elt, ast.Tuple)
    if not isinstance(arg, ast.Call):
        return False
    return model.imports.qualname(arg.func) in ("itertools.permutations", "itertools.combinations", "itertools.product",
                                                "itertools.combinations_with_replacement")


def _zero_sized(call: ast.Call, scope=None) -> bool:
    """A size with a literal 0 (`torch.empty(0, d)`, `torch.empty(())`... an empty shape), also through the one
    binding of a local shape (`shape = x.shape[:-1] + (0,)`): no element, so nothing uninitialised to read."""
    args = call.args or [kw.value for kw in call.keywords if kw.arg == "size"]  # (`torch.empty(size=(0,))`)
    sizes = args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args
    if len(args) == 1 and isinstance(args[0], ast.Name) and scope is not None and scope.function is not None:
        sizes = _bound_shape(scope.function.node, args[0].id)
    return any(isinstance(size, ast.Constant) and size.value == 0 for size in sizes) or (
        len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) and not args[0].elts)


def _bound_shape(function: ast.AST, name: str) -> list:
    """The literal sizes of the shape a function binds to `name` once (`(n, 0)`, `x.shape[:-1] + (0,)`: their elements);
    none where it binds it otherwise or more than once."""
    binds = [node for node in nodes(function) if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr))
             and name in bound_names(node)]
    if len(binds) != 1 or not isinstance(binds[0], ast.Assign):
        return []
    value, parts = binds[0].value, []
    while isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        parts.append(value.right)
        value = value.left
    parts.append(value)
    return [element for part in parts if isinstance(part, (ast.Tuple, ast.List)) for element in part.elts]


def _size_like(model: ModuleModel, arg: ast.expr, scope, before: int, depth: int = 0) -> bool:
    """A single argument of a legacy constructor is a size (not data) when it is an int, `*shape`, `.size()`/`.shape`,
    a parameter some call of this module passes an int (`Gain(2 * hidden)`), or a name that says so (`d`, `num_units`)
    and is not a local bound, before the call (`before`: its event's place), to a value the walk could not type or to
    a sequence."""
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, int) and not isinstance(arg.value, bool)
    if isinstance(arg, ast.Starred):
        # `*shape`; not a wrapper's own `*args` handed on (`def FloatTensor(*args): return torch.FloatTensor(*args)`):
        # its callers may pass data as well as sizes
        function = scope.function.node if scope is not None and scope.function is not None else None
        vararg = getattr(getattr(function, "args", None), "vararg", None)
        handed_on = vararg is not None and isinstance(arg.value, ast.Name) and arg.value.id == vararg.arg
        return not handed_on or vararg.arg in ("shape", "sizes", "size", "dims")
    prov = model.prov(arg)
    if prov is not None and prov.kind is Kind.NUMBER and prov.dtype == api.INT:
        return True
    if prov is not None and (prov.kind is Kind.SEQUENCE or prov.kind is Kind.TENSOR and not prov.param_deps):
        return False  # `lengths = [len(tokens)]`, a tensor (not a parameter's symbol): data, whatever the name says
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "size":
        return True
    if isinstance(arg, ast.Attribute) and arg.attr == "shape":
        # a tensor's `.shape` is a torch.Size, which the constructor takes as sizes; a NumPy array's or a gym space's
        # is a plain tuple, which it takes as data (`torch.Tensor(space.shape)` holds the dimensions themselves)
        owner = model.prov(arg.value)
        return owner is not None and owner.kind is Kind.TENSOR and owner.origin != "param"  # (a parameter's is a guess)
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, (ast.Mult, ast.Add, ast.FloorDiv, ast.Sub)):
        if _sequence(model, arg.left) or _sequence(model, arg.right):
            return False  # `[0] + counts`, `[w, h] * 2`: a list, which is data
        sides = [side for side in (arg.left, arg.right) if not (isinstance(side, ast.Constant) and type(side.value) is int)]
        if len(sides) == 1:
            return _size_like(model, sides[0], scope, before, depth)  # `n - 1` is a size as much as `n` is: `1 - done` is data
        return any(_size_like(model, side, scope, before, depth) for side in sides)
    if isinstance(arg, ast.Name) and _bound_untyped(model, arg.id, scope, before):
        return False  # `x, y, d = buffer.sample(n)`: the name is all we know, and here it names data
    if isinstance(arg, ast.Name) and prov is not None and prov.origin == "param" and depth < 2 and _passed_int(model, arg.id, scope, depth):
        return True
    name = arg.id if isinstance(arg, ast.Name) else (arg.attr if isinstance(arg, ast.Attribute) else None)
    if name is None:
        return False
    words = name.lower().strip("_").split("_")
    return name.lower() in SIZE_NAMES or words[0] in ("n", "num", "nb") or words[-1] in SIZE_NAMES


def _passed_int(model: ModuleModel, name: str, scope, depth: int) -> bool:
    """Some call of this module passes an integer as the parameter `name` of the function `scope` belongs to: that
    call's tensor is allocated, whatever other calls pass."""
    function = scope.function
    for call in model.callers(function) if function is not None else ():
        argument = callsite.argument_for(call, {name}) if call.ctx.scope.function is not function else None
        if argument is not None and _size_like(model, argument, call.ctx.scope, call.seq, depth + 1):
            return True
    return False


def _bound_untyped(model: ModuleModel, name: str, scope, before: int) -> bool:
    """`name` is bound in `scope` (not a parameter or a global) before the call, and no binding of it there is a
    known integer, or one is a sequence (`k = (k, k)`: a constructor given a tuple makes a tensor of it). A binding
    after the call (`k = torch.prod(torch.Tensor(k)).item()` rebinds `k` to a number) says nothing of the argument."""
    binds = [bind for bind in model.of_type(BindEvent) if bind.name == name and bind.ctx.scope is scope]
    earlier = [bind for bind in binds if bind.seq < before]
    if any(bind.prov is not None and bind.prov.kind is Kind.SEQUENCE for bind in earlier):
        return True
    binds = earlier or binds  # (none before it: a parameter, which an untyped binding later may still be like)
    return bool(binds) and not any(bind.prov is not None and bind.prov.kind is Kind.NUMBER for bind in binds)


def _sequence(model: ModuleModel, node: ast.expr) -> bool:
    if isinstance(node, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    if isinstance(node, ast.BinOp):
        return _sequence(model, node.left) or _sequence(model, node.right)
    prov = model.prov(node)
    return prov is not None and prov.kind is Kind.SEQUENCE


# -- following the value ----------------------------------------------------------------------------
def _check_creation(model: ModuleModel, creation: CallEvent, short: str):
    stmt = creation.ctx.statement
    values = {id(creation.node)}
    kind, where = _classify(model, creation.node, parents(model, stmt), values)
    if kind == READ and (not isinstance(where, ast.Return) or short in api.LEGACY_CONSTRUCTORS):
        # `return torch.empty(...)` asks for storage on purpose: an allocator, the caller fills it. `return torch.Tensor(n)`
        # is the constructor mistaken for "make a tensor of n".
        return _finding(model, creation, short, where)
    if kind == READ:
        if isinstance(where.value, ast.Tuple):
            index = next((i for i, elt in enumerate(where.value.elts) if elt is creation.node), None)
            return _tuple_returned(model, creation, short, index, None) if index is not None else None
        return _read_by_caller(model, creation, short)
    if kind != BOUND:
        return None
    if isinstance(where, ast.Attribute):  # self.w = nn.Parameter(torch.Tensor(n, m))
        function = creation.ctx.scope.function
        if function is None or function.cls is None:
            return None
        if _frozen_slot(model, function, creation, where, stmt):
            return None
        read = _class_attribute_read(model, function.cls, where, stmt)
        if read is None:
            return None
        initialiser = model.__dict__.get("_ag012_uncalled", {}).get(id(where))
        return _finding(model, creation, short, read, attribute=where.attr, target=model.text(where), initialiser=initialiser)
    if isinstance(parent_list := parents(model, stmt).get(id(where)), ast.Assign) and isinstance(parent_list.value, ast.ListComp):
        return _check_references(model, creation, short, values, target=model.text(where), container=where)
    return _check_references(model, creation, short, values, target=model.text(where))


def _frozen_slot(model: ModuleModel, function, creation: CallEvent, where: ast.Attribute, stmt: ast.stmt) -> bool:
    """`self.weight = nn.Parameter(torch.empty(d, k), requires_grad=False)`, or one the constructor freezes right after
    (`self.weight.requires_grad = False`), in a module this file never runs: a frozen parameter left empty in library
    code is a slot for weights a checkpoint fills (LoRA's pre-trained W0, quantised kernels). Not when the constructor
    reads it, the freeze may not run (another block's `if`), the file turns any requires_grad on again, or runs the
    module itself (a "fixed random projection" made with torch.empty: garbage)."""
    parent_of = parents(model, stmt)
    wrapper, node = None, parent_of.get(id(creation.node))
    while node is not None and node is not stmt:
        if type(node) is ast.Call and model.imports.qualname(node.func) in api.PARAMETER_CLASSES:
            wrapper = node
        node = parent_of.get(id(node))
    if wrapper is None or function.name != "__init__" or function.cls is None:
        return False
    target = model.text(where)
    frozen = any(keyword.arg == "requires_grad" and literal_bool(keyword.value) is False for keyword in wrapper.keywords)
    toggles = requires_grad_changes(model)
    if any(toggle.value is not False for toggle in toggles):
        return False  # (turned on again somewhere, or set from a flag)
    block = next((body for body in _blocks(function.node) if any(s is stmt for s in body)), ())
    freezes = set()
    for toggle in toggles:  # (a freeze in a later statement of the creation's own block: it runs whenever the creation does)
        if target in toggle.targets and toggle.inner is None and any(toggle.event.ctx.statement is s for s in block) \
                and toggle.event.ctx.statement.lineno > stmt.lineno:
            frozen = True
            event = toggle.event
            freezes.add(id(event.target.value if isinstance(event, AttrStoreEvent) else event.receiver))
    forward = function.cls.methods.get("forward")
    if not frozen or forward is not None and model.callers(forward):
        return False  # (built and run here: its values are what this file gives it)
    return not any(type(node) is ast.Attribute and node.attr == where.attr and type(node.ctx) is ast.Load
                   and id(node) not in freezes and model.text(node) == target for node in nodes(function.node))


def _blocks(function: ast.AST):
    """The statement lists of a function's body, its own and those of its compound statements (not nested defs)."""
    pending = [function.body]
    while pending:
        body = pending.pop()
        yield body
        for stmt in body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                pending.extend(value for name in ("body", "orelse", "finalbody") if isinstance(value := getattr(stmt, name, None), list))
                pending.extend(handler.body for handler in getattr(stmt, "handlers", ()))


def _read_by_caller(model: ModuleModel, creation: CallEvent, short: str):
    """`def init_state(self, n): return torch.empty(n, self.hidden)` whose caller computes with the result before writing
    it (`h = self.init_state(b); h = self.cell(x, h)`): a helper not named as an allocator that hands out garbage its
    own caller then reads. Reported at the allocation (where `zeros` goes), pointing at the caller's read; silent when
    a caller may fill it first, passes it on, or lies in another module."""
    owner = creation.ctx.scope.function
    if owner is None or _allocator(owner) or _allocator(owner.context_of):
        return None
    for call in model.callers(owner.context_of or owner):
        if call.ctx.scope.function is owner or call.result is None or call.result.node is not call.node:
            continue
        read = _first_read(model, call, short, {id(call.node)})
        if read is not None and not isinstance(read, ast.Return):
            return _finding(model, creation, short, read, via=call.node)
    return None


def _tuple_returned(model: ModuleModel, creation: CallEvent, short: str, element: int, read: ast.AST | None):
    """Storage handed back as the `element`-th item of a tuple (`return x, out`, `return x, torch.empty(n)`). Each
    caller of this module that unpacks the tuple (`src, dst = pair(n)`) is followed through that one name: reported
    at the first that computes with it before writing it; silent when every caller writes it or hands it on first
    (`torch.mul(src, 2, out=dst)`, `h.zero_()`). Otherwise (no caller here, a caller that keeps the bundle, a use the
    walk did not tie to the call): `read`, the return itself, as before (None: silent)."""
    owner = creation.ctx.scope.function
    if owner is None or _allocator(owner) or _allocator(owner.context_of):
        return None
    calls = [call for call in model.callers(owner.context_of or owner) if call.ctx.scope.function is not owner
             and call.result is not None and call.result.node is call.node]
    filled = bool(calls)
    for call in calls:
        stmt = call.ctx.statement
        name = None
        if isinstance(stmt, ast.Assign) and stmt.value is call.node and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], (ast.Tuple, ast.List)) and element < len(stmt.targets[0].elts) \
                and isinstance(stmt.targets[0].elts[element], ast.Name) \
                and not any(isinstance(n, ast.Starred) for n in stmt.targets[0].elts):
            name = stmt.targets[0].elts[element].id
        first = _first_use(model, call, name) if name is not None else None
        if first is None:
            filled = False
            if name is None and read is None:  # (`pair = make(n); pair[1].sum()`: the bundle, followed whole)
                found = _first_read(model, call, short, {id(call.node)}, caller=True)
                if found is not None and not isinstance(found, ast.Return):
                    return _finding(model, creation, short, found, via=call.node)
            continue
        kind, node = first
        if kind == READ:
            return _finding(model, creation, short, node, via=call.node)
        if kind not in (WRITE, ESCAPE):
            filled = False
    return None if filled or read is None else _finding(model, creation, short, read)


def _first_use(model: ModuleModel, call: CallEvent, name: str):
    """(kind, node) of the first use of `name`, one item of the tuple `call` returned and unpacked, in the caller's
    body (the same body walked again at a script's call of it is the same code); None when the walk tied none to it."""
    function = call.ctx.scope.function
    uses = [event for event in _references_by_node(model).get(id(call.node), ()) if event.seq > call.seq
            and _base_name(event.node) == name
            and (event.ctx.scope.function is function or function is not None and event.ctx.scope.function is not None
                 and event.ctx.scope.function.node is function.node)]
    if not uses:
        return None
    event = min(uses, key=lambda event: event.seq)
    if isinstance(event, InplaceEvent):
        return (WRITE, None) if event.form == "setitem" else ((NEUTRAL, None) if event.reshape else (READ, event.node))
    kind, node = _classify(model, event.node, parents(model, event.ctx.statement), {id(call.node)})
    if kind == BOUND:
        kind = NEUTRAL if isinstance(node, ast.Name) else ESCAPE
    return kind, (node or event.node)


def _tuple_element(read: ast.Return, target: str | None) -> int | None:
    """`return x, out` with `target` ("out") a bare item of the tuple, read nowhere else in it: its index; None when
    the tuple itself computes with it (`return running, running.mean()`) or it is not there as a bare name."""
    if target is None:
        return None
    index = None
    for i, elt in enumerate(read.value.elts):
        if isinstance(elt, ast.Name) and elt.id == target:
            if index is not None:
                return None
            index = i
        elif any(isinstance(node, ast.Name) and node.id == target for node in ast.walk(elt)):
            return None
    return index


def _base_name(node: ast.AST) -> str | None:
    """The name a use or write is of (`acc` in `acc.sum()`, `acc += x`, `acc[0] = 1`)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            node = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            node = node.targets[0]
        elif isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
            node = node.value
        else:
            return None


def _check_references(model: ModuleModel, creation: CallEvent, short: str, values: set[int], target: str | None = None,
                      container: ast.Name | None = None):
    detail: dict = {}
    read = _first_read(model, creation, short, values, detail)
    if read is None or container is not None and _list_escapes(model, creation, container, detail["seq"]):
        return None
    if isinstance(read, ast.Return) and isinstance(read.value, ast.Tuple) and short in api.UNINITIALISED_FACTORIES \
            and container is None and (index := _tuple_element(read, target)) is not None:
        # `out = torch.empty(n, d); return x, w, out`: storage handed back in a bundle: what the callers that unpack it
        # do with that item first (`x, w, out = make(n); torch.mul(x, w, out=out)`)
        return _tuple_returned(model, creation, short, index, read)
    return _finding(model, creation, short, read, target=target)


def _list_escapes(model: ModuleModel, creation: CallEvent, name: ast.Name, read_seq: int) -> bool:
    """A list of the tensors (`bufs = [torch.empty(...) for ...]`) handed, as a list, to something before the read
    (`dist.all_gather(bufs, x)`, a loader): what it does to the elements is unseen. Iterating it (`for b in bufs`,
    `zip(bufs, params)`) or indexing it hands out the elements themselves, which the references follow."""
    events = _call_events(model)
    parent_of = parents(model, model.tree)  # (once per module, for the few lists of uninitialised tensors)
    owner = creation.ctx.scope.function
    for node in _name_loads(model).get(name.id, ()):
        if owner is not None and not _inside(owner.node, node):
            continue  # (a list of the same name in another function is another list)
        parent = parent_of.get(id(node))
        if isinstance(parent, ast.Subscript) and parent.value is node or isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
            continue
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in ("zip", "enumerate", "len"):
            outer = parent_of.get(id(parent))
            if parent.func.id == "len" or isinstance(outer, (ast.For, ast.comprehension)) and outer.iter is parent:
                continue
        call = parent
        while call is not None and not (isinstance(call, ast.Call) and id(call) in events):
            call = parent_of.get(id(call))
        if call is None or not creation.seq < read_seq < events[id(call)].seq:
            return True  # (a use the walk did not order, or one between the allocation and the read)
    return False


def _views_comprehension(loop: ast.AST, current: ast.AST, parent_of) -> ast.Name | None:
    """`chunks = [c.view(-1) for c in flat.split(sizes)]`: the pieces of a split (a view op of torch's table) kept, as
    views, in a named list: the name (its list is followed as a list of views, as `[flat[i] for i ...]` is); None
    for any other iteration (which may read)."""
    if not (isinstance(loop, ast.comprehension) and isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute)
            and current.func.attr in ops.VIEWS and isinstance(loop.target, ast.Name) and not loop.ifs):
        return None
    comp = parent_of.get(id(loop))
    stmt = parent_of.get(id(comp))
    if not (isinstance(comp, ast.ListComp) and len(comp.generators) == 1 and isinstance(stmt, ast.Assign)
            and stmt.value is comp and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    elt, var = comp.elt, loop.target.id
    while isinstance(elt, ast.Call) and isinstance(elt.func, ast.Attribute) and elt.func.attr in ops.VIEWS:
        elt = elt.func.value
    return stmt.targets[0] if isinstance(elt, ast.Name) and elt.id == var else None


def _views_filled(model: ModuleModel, creation: CallEvent, name: ast.Name, read_seq: int) -> bool:
    """`views = [flat[i].view(1) for i in ...]` handed, between the allocation and the read, as an argument to a call
    that writes a list's elements: a foreach in-place op of torch's table (`torch._foreach_copy_(views, src)`) or a
    function of the workspace whose body writes the elements of that parameter (`for t, s in zip(dst, src):
    t.copy_(s)`). Printing, logging, `len`, `dict(...)` and unknown callables write nothing: not this."""
    events = _call_events(model)
    parent_of = parents(model, model.tree)
    owner = creation.ctx.scope.function
    for node in _name_loads(model).get(name.id, ()):
        if owner is not None and not _inside(owner.node, node):
            continue
        parent = parent_of.get(id(node))
        keyword = None
        if isinstance(parent, ast.keyword):
            keyword, parent = parent.arg, parent_of.get(id(parent))
        if not isinstance(parent, ast.Call) or node is parent.func or id(parent) not in events:
            continue
        event = events[id(parent)]
        if not creation.seq < event.seq < read_seq:
            continue
        qualname = model.imports.qualname(parent.func) or ""
        short = qualname.rpartition(".")[2]
        if qualname.startswith("torch.") and _foreach_inplace(short):
            return True
        function = event.function
        fn = getattr(function, "node", None)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        if getattr(function, "cls", None) is not None and isinstance(parent.func, ast.Attribute) and params:
            params = params[1:]  # (a method called on its instance: `self` is bound)
        if keyword is not None:
            param = keyword
        else:
            index = next((i for i, arg in enumerate(parent.args) if arg is node), None)
            param = params[index] if index is not None and index < len(params) else None
        if param is not None and _writes_elements(fn, param):
            return True
    return False


def _foreach_inplace(name: str) -> bool:
    """torch's in-place foreach ops (`_foreach_copy_`, `_foreach_zero_`...), which write every tensor of their lists."""
    return name.startswith("_foreach_") and name.endswith("_")


def _writes_elements(fn: ast.AST, param: str) -> bool:
    """The body writes the elements of its list parameter `param`: an in-place write of a loop variable drawn from it
    (`for dst, src in zip(param, other): dst.copy_(src)`, `dst[...] = src`), of `param[i]`, or a foreach in-place op
    given it (rebinding an item, `param[i] = x`, writes no tensor)."""
    drawn = {param}
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.comprehension)) \
                and any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(node.iter)):
            drawn |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    element = lambda t: isinstance(t, ast.Name) and t.id in drawn - {param} \
        or isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == param  # noqa: E731
    for node in ast.walk(fn):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        if any(isinstance(t, ast.Subscript) and element(t.value) for t in targets):
            return True  # (`dst[...] = src`, `param[i][:] = src`)
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        attr = node.func.attr
        if _foreach_inplace(attr) and any(isinstance(arg, ast.Name) and arg.id == param for arg in node.args):
            return True
        if attr in ops.OVERWRITES or attr in ops.PARTIAL_WRITES:
            if element(node.func.value):
                return True
    return False


def _name_loads(model: ModuleModel) -> dict[str, list[ast.Name]]:
    found = model.__dict__.get("_ag012_name_loads")
    if found is None:
        found = model.__dict__["_ag012_name_loads"] = {}
        for node in nodes(model.tree):
            if type(node) is ast.Name and type(node.ctx) is ast.Load:
                found.setdefault(node.id, []).append(node)
    return found


def _first_read(model: ModuleModel, creation: CallEvent, short: str, values: set[int], detail: dict | None = None,
                caller: bool = False) -> ast.AST | None:
    """Where the values `creation` made are first read in its own function before anything writes them, or None. A
    script's top level also sees the functions it calls itself (walked at that call, in order: `update_ema()`)."""
    owner = creation.ctx.scope.function
    index = _references_by_node(model)
    references, pending, followed, crossed, lists = [], [], set(), [], []

    def follow(after: int) -> bool:
        """Queue the references of values not followed yet (a view bound to a name: `rows = x[a:b]`); False when
        one lies in another function."""
        for value in values - followed:
            followed.add(value)
            for event in index.get(value, ()):
                if event.seq <= after:
                    continue
                function = event.ctx.scope.function
                if caller and function is not owner and function is not None and owner is not None \
                        and function.node is owner.node:
                    continue  # (the caller's body walked again, at the script's call of it: the same code)
                if function is not owner:
                    if owner is not None or not _run_by_script(model, function, event.seq, creation):
                        return False  # read or written in another function: beyond what order within one body can tell
                    crossed.append(event)
                heapq.heappush(pending, (event.seq, id(event), event))
        return True

    if not follow(creation.seq):
        return None
    first_read = None
    while pending:
        _, _, event = heapq.heappop(pending)
        references.append(event)
        if isinstance(event, InplaceEvent):
            kind, node = (WRITE, None) if event.form == "setitem" else ((NEUTRAL, None) if event.reshape else (READ, event.node))
        else:
            kind, node = _classify(model, event.node, parents(model, event.ctx.statement), values)
            if kind == BOUND:
                stmt = event.ctx.statement
                if isinstance(node, ast.Name) and isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.ListComp):
                    lists.append(node)  # `views = [buf[i].view(1) for i in ...]`: views of it, kept in a list
                kind = NEUTRAL if isinstance(node, ast.Name) else ESCAPE
        if kind == NEUTRAL:
            if not follow(event.seq):
                return None
            continue
        if kind != READ:
            return None
        first_read = (event, node)
        break
    references.extend(event for _, _, event in sorted(pending, key=lambda item: item[0]))
    if first_read is None:
        return None
    read_event, node = first_read
    if any(_views_filled(model, creation, name, read_event.seq) for name in lists):
        return None  # the list of its views handed first to what writes them (`copy_into(views, sources)`)
    if isinstance(node, ast.Return) and short in api.UNINITIALISED_FACTORIES and (_allocator(owner) or _empty_there(owner, creation.node, node)):
        return None
    # A read inside a loop that also writes the tensor may only happen after an earlier iteration wrote it.
    for loop in read_event.ctx.loops():
        for event in references:
            if event is read_event or not any(l is loop for l in event.ctx.loops()):
                continue
            if isinstance(event, InplaceEvent):
                if event.form == "setitem":
                    return None
            elif _classify(model, event.node, parents(model, event.ctx.statement), values)[0] in (WRITE, ESCAPE, BOUND):
                return None
    if crossed:
        # read by a function the script calls: a later write, by it or another function called in the same loop of the
        # script, may be what an earlier iteration did first (the loops of a function's events are its call's, too)
        first_calls = model.__dict__["_ag012_first_calls"]
        loops = lambda event: [*event.ctx.loops(), *(first_calls[f].ctx.loops() if (f := event.ctx.scope.function) else ())]  # noqa: E731
        read_loops = loops(read_event)
        for event in references:
            if event is read_event or not any(a is b for a in loops(event) for b in read_loops):
                continue
            if isinstance(event, InplaceEvent):
                if event.form == "setitem":
                    return None
            else:
                kind, where = _classify(model, event.node, parents(model, event.ctx.statement), set(values))
                if kind in (WRITE, ESCAPE) or kind == BOUND and not isinstance(where, ast.Name):
                    return None
    if detail is not None:
        detail["seq"] = read_event.seq
    return node or read_event.node


def _run_by_script(model: ModuleModel, function, seq: int, creation: CallEvent) -> bool:
    """`function` (whose event at `seq` refers to a value the script's top level made) was walked for a call the top
    level makes after that event (a function is walked at its first call: its events lie just before it), and no
    function the script ran before the allocation names what it is bound to (walked then, a later call of it that
    writes the value leaves no event)."""
    if function is None or function.context_of is not None:
        return False
    cache = model.__dict__.setdefault("_ag012_first_calls", {})
    if not cache:
        for event in model.of_type(CallEvent):
            if event.function is not None and event.function not in cache:
                cache[event.function] = event
    first = cache.get(function)
    if first is None or first.seq < seq or first.ctx.scope.function is not None or first.ctx.via is not None:
        return False
    stmt = creation.ctx.statement
    names = {target.id for target in getattr(stmt, "targets", ()) if isinstance(target, ast.Name)}
    if len(names) != 1:
        return False
    name = names.pop()
    return not any(event.seq < creation.seq and any(node is not None and _inside(other.node, node) for node in _name_loads(model).get(name, ()))
                   for other, event in cache.items())


def _empty_there(owner, call: ast.Call, ret: ast.Return) -> bool:
    """`out = torch.empty(n, d); if n == 0: return out`: returned where one of its sizes is zero, so it has no values to
    read (sizes: the call's own, or for `empty_like(t)` names unpacked from `t.shape`)."""
    if owner is None:
        return False
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    like = call.args[0] if call.args and name.endswith("_like") else None
    sizes = {arg.id for arg in call.args if isinstance(arg, ast.Name)} if like is None else set()
    if isinstance(like, ast.Name):  # `n, d = t.shape` ... `torch.empty_like(t)`
        for stmt in nodes(owner.node):
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Attribute) and stmt.value.attr == "shape" \
                    and isinstance(stmt.value.value, ast.Name) and stmt.value.value.id == like.id:
                sizes |= {n.id for t in stmt.targets for n in nodes(t) if isinstance(n, ast.Name)}
    for stmt in nodes(owner.node):
        if isinstance(stmt, ast.If) and ret in stmt.body:
            test = stmt.test
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
                return test.operand.id in sizes
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.LtE)) \
                    and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant):
                return test.left.id in sizes and test.comparators[0].value == 0
    return False


def _references_by_node(model: ModuleModel) -> dict[int, list]:
    """id(node that made a tensor) -> the uses and index writes of that tensor, built once per model."""
    found = model.__dict__.get("_ag012_references")
    if found is None:
        found = {}
        for event in model.events:
            if isinstance(event, UseEvent) or isinstance(event, InplaceEvent) and event.form in ("setitem", "augassign"):
                prov = event.prov
                if prov is not None and prov.node is not None:
                    found.setdefault(id(prov.node), []).append(event)
        model.__dict__["_ag012_references"] = found
    return found


def _allocator(function) -> bool:
    """A helper whose name says it hands out storage for the caller to fill, or a fake/meta kernel (`@op.register_fake`,
    `torch.library.register_fake`): those compute shapes only and return empty tensors by design."""
    name = (function.name if function is not None else "").lower()
    if any(word in name for word in ("empty", "alloc", "buffer", "placeholder", "storage", "like", "new_", "out", "fake", "meta")):
        return True
    node = getattr(function, "node", None)
    return any(word in (dotted(dec.func if isinstance(dec, ast.Call) else dec) or "") for dec in getattr(node, "decorator_list", ())
               for word in ("register_fake", "impl_abstract", "register_meta", "register_kernel_fake"))


def _classify(model: ModuleModel, node: ast.AST, parent_of, values: set[int]) -> tuple[str, ast.AST | None]:
    """What the expression `node` (the uninitialised tensor) is used for: (WRITE|READ|ESCAPE|NEUTRAL, where)."""
    current = node
    while True:
        parent = parent_of.get(id(current))
        if parent is None:
            return NEUTRAL, None
        if isinstance(parent, ast.Attribute) and parent.value is current:
            attr = parent.attr
            grand = parent_of.get(id(parent))
            if isinstance(grand, ast.Call) and grand.func is parent:
                use = uses.method(attr)
                if uses.writes_without_reading(attr):
                    return WRITE, grand
                if attr.endswith("_") and uses.may_ignore_input(attr[:-1], grand):
                    # `buf.addmm_(a, b, beta=0)`: beta * buf + a @ b writes buf without reading it; another beta may
                    return (WRITE, grand) if uses.beta_zero(grand) else (ESCAPE, None)
                if use in (uses.VIEW, uses.ALIAS, uses.CUT) or uses.is_bookkeeping(attr) or uses.is_conversion(attr) \
                        or uses.keeps_values(attr):
                    values.add(id(grand))  # the same storage, or a copy of the same garbage (`clone()`, `to()`): follow it
                    current = grand
                    continue
                if use == uses.METADATA or uses.is_tensor_factory_method(attr) or uses.runs_graph(attr):
                    return NEUTRAL, None  # (`torch.empty(1, requires_grad=True).backward()`: a warm-up, no value read)
                if uses.is_tensor_method(attr):
                    return (NEUTRAL, None) if _only_metadata(grand, parent_of) else (READ, grand)
                return ESCAPE, None
            if uses.attribute(attr) in (uses.VIEW, uses.CUT):  # x.T, x.data
                current = parent
                continue
            if uses.attribute(attr) == uses.METADATA:
                return NEUTRAL, None
            return ESCAPE, None
        if isinstance(parent, ast.Subscript):
            if parent.value is not current:
                return READ, parent  # indexing with garbage
            if isinstance(parent.ctx, ast.Store):
                grand = parent_of.get(id(parent))
                return (READ, grand) if isinstance(grand, ast.AugAssign) else (WRITE, parent)
            if isinstance(parent.ctx, ast.Del):
                return NEUTRAL, None
            if basic_index(parent.slice):
                values.add(id(parent))  # `x[a:b]` is a view: what is written through it is written into x
            current = parent  # `x[i]`: the same garbage, part of it
            continue
        if isinstance(parent, ast.keyword):
            call = parent_of.get(id(parent))
            if parent.arg == "out":
                return WRITE, call
            event = _call_events(model).get(id(call)) if call is not None else None
            if event is not None and event.role == "forward" and not _torch_layer(model, event, call.func):
                return ESCAPE, None  # `self.proj(x, write_to=buf)`: a keyword of a workspace forward may be where it writes
            return _call_argument(model, call, current, parent_of, values)
        if isinstance(parent, ast.Call):
            if parent.func is current:
                return ESCAPE, None
            registered = _registered_attribute(model, parent, current)
            if registered is not None:
                return BOUND, registered
            return _call_argument(model, parent, current, parent_of, values)
        if isinstance(parent, (ast.BinOp, ast.UnaryOp)):
            return (NEUTRAL, None) if _only_metadata(parent, parent_of) else (READ, parent)
        if isinstance(parent, ast.Compare):
            if all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
                return NEUTRAL, None
            return READ, parent
        if isinstance(parent, (ast.FormattedValue, ast.JoinedStr, ast.BoolOp)):
            return READ, parent
        if isinstance(parent, (ast.If, ast.While, ast.Assert)) and parent.test is current:
            return READ, current
        if isinstance(parent, ast.IfExp):
            if parent.test is current:
                return READ, parent
            current = parent
            continue
        if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
            return READ, parent
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is current:
            views = _views_comprehension(parent, current, parent_of)
            return (BOUND, views) if views is not None else (READ, current)
        if isinstance(parent, ast.AugAssign):
            return READ, parent
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and parent.value is current:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            target = targets[0] if len(targets) == 1 else None
            if isinstance(target, ast.Name) or isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                return BOUND, target  # a name (its uses carry the same provenance) or a module attribute
            return ESCAPE, None
        if isinstance(parent, ast.Expr):
            return NEUTRAL, None
        if isinstance(parent, ast.ListComp) and parent.elt is current:
            stmt = parent_of.get(id(parent))
            if isinstance(stmt, ast.Assign) and stmt.value is parent and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                return BOUND, stmt.targets[0]  # `bufs = [torch.empty_like(p) for p in params]`: each element followed as itself
            return ESCAPE, None
        if isinstance(parent, (ast.List, ast.Tuple)) and isinstance(parent.ctx, ast.Load):
            target = _unpacked_target(parent, current, parent_of)
            if target is not None:
                return BOUND, target  # `self.a, self.b = (nn.Parameter(torch.Tensor(n)), ...)`: each element its own target
            if isinstance(parent, ast.Tuple) and isinstance(returned := parent_of.get(id(parent)), ast.Return):
                return READ, returned  # `return h, c`: handed back as when alone
            return _element_of_argument(model, parent, parent_of, values)
        return ESCAPE, None


def _registered_attribute(model: ModuleModel, call: ast.Call, value: ast.AST) -> ast.Attribute | None:
    """`self.register_parameter("w", value)` / `register_buffer`: the `self.w` it binds (a node of its own, outside the
    tree), when the method is nn.Module's or an override of this file that hands both arguments on to `super()`'s."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in api.MODULE_REGISTRARS and isinstance(func.value, ast.Name)
            and func.value.id == "self" and len(call.args) >= 2 and call.args[1] is value
            and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str) and call.args[0].value.isidentifier()):
        return None
    cls = next((c for c in model.classes.values() if c.node.lineno <= call.lineno <= (c.node.end_lineno or 0)
                and any(m.node.lineno <= call.lineno <= (m.node.end_lineno or 0) for m in c.methods.values())), None)
    if cls is None or not cls.is_module or not _hands_on(cls, func.attr, set()):
        return None
    target = ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=call.args[0].value, ctx=ast.Store())
    return ast.copy_location(target, call)


def _hands_on(cls: ClassInfo, method: str, seen: set) -> bool:
    """`cls.<method>` is nn.Module's own, or every override on the way passes its first two parameters to `super()`'s."""
    if id(cls) in seen:
        return False
    seen.add(id(cls))
    override = cls.methods.get(method)
    if override is not None:
        names = [a.arg for a in (*override.node.args.posonlyargs, *override.node.args.args)][1:3]
        return len(names) == 2 and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == method
            and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name) and n.func.value.func.id == "super"
            and [a.id if isinstance(a, ast.Name) else None for a in n.args[:2]] == names for n in ast.walk(override.node))
    if len(cls.bases) < len(cls.node.bases) and any(not b.is_module for b in cls.bases):
        return False
    return all(_hands_on(base, method, seen) for base in cls.bases if base.is_module)


def _unpacked_target(sequence: ast.expr, element: ast.AST, parent_of) -> ast.expr | None:
    """`a, self.b = x, y`: the name or `self.` attribute the element of a literal tuple is bound to, or None."""
    stmt = parent_of.get(id(sequence))
    if not (isinstance(stmt, ast.Assign) and stmt.value is sequence and len(stmt.targets) == 1):
        return None
    target = stmt.targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != len(sequence.elts) \
            or any(isinstance(e, ast.Starred) for e in (*target.elts, *sequence.elts)):
        return None
    bound = target.elts[sequence.elts.index(element)]
    if isinstance(bound, ast.Name) or isinstance(bound, ast.Attribute) and isinstance(bound.value, ast.Name) and bound.value.id == "self":
        return bound
    return None


def _creation_target(node: ast.AST, parent_of, creation_stmt: ast.stmt) -> bool:
    """The stored `self.<attr>` is a target of the statement that made the tensor (alone or in a tuple of targets)."""
    parent = parent_of.get(id(node))
    while isinstance(parent, (ast.Tuple, ast.List)):
        parent = parent_of.get(id(parent))
    return parent is creation_stmt and isinstance(parent, (ast.Assign, ast.AnnAssign))


def _element_of_argument(model: ModuleModel, sequence: ast.expr, parent_of, values) -> tuple[str, ast.AST | None]:
    """`torch.cat([a, w])`, `model((x, w))`: an element of a literal list that a call computes with is read with it;
    anywhere else (stored, passed to an unknown function) the list may be filled or kept for later: beyond us."""
    call = parent_of.get(id(sequence))
    if not isinstance(call, ast.Call) or not any(arg is sequence for arg in call.args):
        return ESCAPE, None
    if model.imports.qualname(call.func) in api.TENSOR_WRAPPERS:
        return ESCAPE, None
    kind, where = _call_argument(model, call, sequence, parent_of, values)
    return (kind, where) if kind in (READ, BOUND) else (ESCAPE, None)


def _call_argument(model: ModuleModel, call: ast.Call | None, arg: ast.AST, parent_of, values) -> tuple[str, ast.AST | None]:
    if call is None:
        return ESCAPE, None
    event = _call_events(model).get(id(call))
    if event is not None and event.role == "forward":
        # A module's forward computes with its input; one whose result is dropped (`model(torch.empty(1, 3, 64, 64))`
        # to warm kernels up) puts the garbage nowhere that is read; one built around a test double
        # (`ExpectedImprovement(model=MockModel(...))`) computes what the double gives, which may ignore the input.
        if isinstance(parent_of.get(id(call)), ast.Expr) or doubles.built_around_double(model, event):
            return NEUTRAL, None
        return READ, call
    func = call.func
    qualname = model.imports.qualname(func) or (func.id if isinstance(func, ast.Name) else None)
    if qualname is None and isinstance(func, ast.Attribute):
        method = func.attr
        if method in uses.REPORTER_METHODS:
            return READ, call
        receiver = event.receiver_prov if event is not None else None
        if receiver is not None and receiver.is_tensor and api.is_op(method) and not method.endswith("_") \
                and method not in api.SHAPE_OPERANDS:
            # `x.mm(w)` of a tensor x: an op that computes with its argument (not `type_as`, `view_as`: metadata)
            return (NEUTRAL, None) if _only_metadata(call, parent_of) else (READ, call)
        return ESCAPE, None
    if qualname in api.TENSOR_WRAPPERS and call.args and call.args[0] is arg:  # nn.Parameter(t), Variable(t): t's storage
        values.add(id(call))
        return _classify(model, call, parent_of, values)
    if qualname in uses.PRINTERS or qualname in uses.NUMBER_CASTS:  # print(t), float(t): the values are read
        return READ, call
    module, _, short = (qualname or "").rpartition(".")
    if module == "torch" and short in uses.STACKERS:
        # `torch.cat((data, padding))` copies the garbage into a new tensor without computing with it: its `.shape`
        # reads nothing, and a name bound to it is followed where the caller follows names (a local allocation:
        # `values` holds it); anywhere else the copy is where the garbage is read, as before.
        following = bool(values)
        values.add(id(call))
        kind, where = _classify(model, call, parent_of, values)
        if kind == NEUTRAL or kind == READ or following and kind == BOUND and isinstance(where, ast.Name):
            return kind, where
        return READ, call
    if qualname in uses.INSPECTORS or module == "torch" and (uses.is_metadata(short) or short.startswith("is_") or short == "typename"):
        return NEUTRAL, None
    if module.startswith("torch.nn.init"):
        return WRITE, call
    if module == "torch" and call.args and call.args[0] is arg and uses.overwrites_all(short):
        return WRITE, call  # torch.fill(torch.empty(n), v): every value replaced, none read
    if module == "torch" and uses.is_view(short) and call.args and call.args[0] is arg:
        values.add(id(call))  # torch.split(buf, sizes), torch.narrow(buf, ...): views of the garbage, followed
        return _classify(model, call, parent_of, values)
    if module == "torch" and uses.per_input_view(short) and _own_output_dropped(model, call, arg, parent_of):
        return NEUTRAL, None  # `x, _ = torch.broadcast_tensors(x, torch.empty(shape))`: only x's view is kept
    if module == "torch" and call.args and call.args[0] is arg and uses.may_ignore_input(short, call):
        return NEUTRAL, None  # torch.baddbmm(torch.empty(...), q, k, beta=0): the buffer gives only shape and dtype
    if module == "torch" and short in _FIXED_RANKS and event is not None and _wrong_rank(model, call, event, _FIXED_RANKS[short]):
        return NEUTRAL, None  # torch.dot(a, b) of two 2-D tensors: RuntimeError "1D tensors expected" before any value is read
    if module in api.MATH_MODULES and short not in api.TENSOR_FACTORIES and not short.startswith(("is_", "get_", "set_")) \
            and (module != "torch" or api.is_op(short)):
        return (NEUTRAL, None) if _only_metadata(call, parent_of) else (READ, call)
    return ESCAPE, None


# ops that take their tensor arguments at one rank only and raise on any other
_FIXED_RANKS = {"dot": (1, 1), "vdot": (1, 1), "outer": (1, 1), "ger": (1, 1), "mv": (2, 1), "mm": (2, 2), "bmm": (3, 3)}


def _wrong_rank(model: ModuleModel, call: ast.Call, event: CallEvent, ranks: tuple) -> bool:
    """An argument of `call` whose rank is known (a name bound, last before the call in its scope, to a factory given
    literal sizes, or with a known shape) differs from the rank the op requires."""
    if len(call.args) != len(ranks) or call.keywords:
        return False
    for arg, rank in zip(call.args, ranks):
        known = _known_rank(model, arg, event.ctx.scope, event.seq)
        if known is not None and known != rank:
            return True
    return False


def _known_rank(model: ModuleModel, arg: ast.expr, scope, before: int) -> int | None:
    if not isinstance(arg, ast.Name):
        return None
    binds = [bind for bind in model.of_type(BindEvent) if bind.name == arg.id and bind.ctx.scope is scope and bind.seq < before]
    if not binds:
        return None
    bind = max(binds, key=lambda b: b.seq)
    if bind.prov is not None and bind.prov.shape is not None:
        return len(bind.prov.shape)
    value = bind.value
    if isinstance(value, ast.Call) and (model.imports.qualname(value.func) or "").rpartition(".")[0] == "torch" \
            and (model.imports.qualname(value.func) or "").rpartition(".")[2] in (*api.LEGACY_CONSTRUCTORS, *api.UNINITIALISED_FACTORIES) \
            and value.args and not value.keywords \
            and all(isinstance(a, ast.Constant) and type(a.value) is int for a in value.args):
        return len(value.args)  # torch.FloatTensor(3, 4): sizes, one per dimension
    return None


def _only_metadata(result: ast.AST, parent_of) -> bool:
    """What was computed from the garbage is read only for its metadata, right there: `torch.bmm(a, b).size()`,
    `(a @ b).shape` (a shape check): no value of it is ever seen."""
    parent = parent_of.get(id(result))
    if not (isinstance(parent, ast.Attribute) and parent.value is result):
        return False
    grand = parent_of.get(id(parent))
    if isinstance(grand, ast.Call) and grand.func is parent:
        return uses.method(parent.attr) == uses.METADATA
    return uses.attribute(parent.attr) == uses.METADATA


def _own_output_dropped(model: ModuleModel, call: ast.Call, arg: ast.AST, parent_of) -> bool:
    """The result of a per-input view op is unpacked and the target at `arg`'s position is never read (`_`)."""
    if arg not in call.args:
        return False
    stmt = parent_of.get(id(call))
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], (ast.Tuple, ast.List)) and len(stmt.targets[0].elts) == len(call.args)):
        return False
    target = stmt.targets[0].elts[call.args.index(arg)]
    if not isinstance(target, ast.Name):
        return False
    return target.id == "_" or model.mentions(target.id) <= 1  # (the target is its only mention: never read)


def _torch_layer(model: ModuleModel, event: CallEvent, func: ast.expr) -> bool:
    """The called module is a torch.nn layer (whose forward computes with what it is given), not a workspace class."""
    prov = model.prov(func)
    owner = event.receiver_prov  # `self.rnn(...)`: the module's own attribute
    if prov is None and isinstance(func, ast.Attribute) and owner is not None and isinstance(owner.module_class, ClassInfo):
        prov = owner.module_class.attribute(func.attr)
    return prov is not None and prov.kind is Kind.MODULE and isinstance(prov.module_class, str)


def _call_events(model: ModuleModel) -> dict[int, CallEvent]:
    found = model.__dict__.get("_call_events_by_node")
    if found is None:
        found = {id(event.node): event for event in model.of_type(CallEvent)}
        model.__dict__["_call_events_by_node"] = found
    return found


# -- module attributes: self.w = nn.Parameter(torch.Tensor(n, m)) --------------------------------------
def _class_attribute_read(model: ModuleModel, cls: ClassInfo, target: ast.Attribute, creation_stmt: ast.stmt) -> ast.AST | None:
    """Where a method of `cls` reads `self.<attr>`, provided nothing in the file may initialise it; else None."""
    if not _plain_module_bases(model, cls) or _initialises_in_bulk(model):
        return None
    attr = target.attr
    # The class first (its own reset_parameters() is the usual initialiser); the rest of the file only if needed.
    read = _scan_attribute(model, cls, target, creation_stmt, cls.node, None)
    if read is None:
        return None
    first, last = cls.node.lineno, cls.node.end_lineno or cls.node.lineno
    needle = "." + attr
    roots = []
    for number, line in enumerate(model.source.lines, 1):
        if needle in line and not first <= number <= last:
            stmt = body_statement(model.tree.body, number)
            if stmt is not None and all(stmt is not root for root in roots):
                roots.append(stmt)
    for root in roots:
        if _scan_attribute(model, cls, target, creation_stmt, root, read) is None:
            return None
    return read


def _scan_attribute(model, cls, target, creation_stmt, root, read):
    """Classify every `.attr` under `root`: None as soon as one may write it, else the first read in the class (or `read`)."""
    parent_of, attributes = _tree_index(model, root)
    if root is cls.node:
        return _first_class_read(model, cls, target, creation_stmt, parent_of, attributes)
    other = _unrelated_module(model, cls, root)
    for node in attributes.get(target.attr, ()):
        if node is target or other is not None and _own_attribute(node, other, parent_of) or _other_module(model, cls, node.value):
            continue
        if isinstance(node.ctx, ast.Store):
            parent = parent_of.get(id(node))
            if _none_store(node, parent):
                continue
            if isinstance(parent, ast.AugAssign):
                read = read or (parent if _inside(cls.node, node) else None)
            elif not _creation_target(node, parent_of, creation_stmt):
                return None  # assigned again elsewhere: which value is read is beyond us
            continue
        kind, where = _classify(model, node, parent_of, set())
        if kind in (WRITE, ESCAPE, BOUND):
            return None
        if kind == READ and read is None and _inside(cls.node, node) and isinstance(node.value, ast.Name) and node.value.id == "self":
            read = where or node
    return read


def _unrelated_module(model: ModuleModel, cls: ClassInfo, root: ast.AST) -> ast.ClassDef | None:
    """`root` is another nn.Module class of this file that no class here relates to `cls` by inheritance: its
    `self.<attr>` is its own instance's attribute, never one of `cls` (a plain class may be a mixin: not this)."""
    if not isinstance(root, ast.ClassDef):
        return None
    info = next((c for c in model.classes.values() if c.node is root), None)
    if info is None or not info.is_module:
        return None
    lineages = [_lineage(c) for c in model.classes.values()]
    return None if any(info in lineage and cls in lineage for lineage in lineages) else root


def _none_store(node: ast.Attribute, parent) -> bool:
    """`self.bias = None` (the branch without the parameter): it writes no values into the allocated tensor."""
    return isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is node \
        and isinstance(parent.value, ast.Constant) and parent.value.value is None


def _other_module(model: ModuleModel, cls: ClassInfo, receiver: ast.expr) -> bool:
    """`self.out.bias` of a torch.nn layer, or of a module class of this file that no class here relates to `cls` by
    inheritance: that object's own attribute, never one of `cls`."""
    prov = model.prov(receiver)
    if prov is None or prov.kind is not Kind.MODULE or prov.module_class is None:
        return False
    if isinstance(prov.module_class, str):
        return prov.module_class.startswith("torch.nn.")
    if not isinstance(prov.module_class, ClassInfo) or not prov.module_class.is_module:
        return False
    return not any(prov.module_class in lineage and cls in lineage for lineage in map(_lineage, model.classes.values()))


def _lineage(cls: ClassInfo, depth: int = 0) -> list:
    """The class and its bases of this module, transitively."""
    found = [cls]
    for base in cls.bases if depth < 6 else ():
        found += _lineage(base, depth + 1)
    return found


def _own_attribute(node: ast.Attribute, root: ast.ClassDef, parent_of: dict) -> bool:
    """`self.<attr>` in a method of `root` itself (not of a class nested in it)."""
    if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
        return False
    parent = parent_of.get(id(node))
    while parent is not None and not isinstance(parent, ast.ClassDef):
        parent = parent_of.get(id(parent))
    return parent is root


def _first_class_read(model, cls, target, creation_stmt, parent_of, attributes):
    """The first read of `self.<attr>` in the class that nothing may have written before. Without any other write that
    is the first read anywhere; otherwise every write (an assignment, an in-place change, a hand-over to unknown code) must
    come after a read in the same method (a running statistic updated at the end of `train()`): on that method's first
    call, the read sees the allocated garbage. A name bound to it (`avg = self.stat`) is followed through its method."""
    reads, writes = [], []
    for node in attributes.get(target.attr, ()):
        if node is target:
            continue
        if isinstance(node.ctx, ast.Store):
            parent = parent_of.get(id(node))
            if _none_store(node, parent):
                continue
            if isinstance(parent, ast.AugAssign):
                reads.append((parent, parent))
            elif not _creation_target(node, parent_of, creation_stmt):
                writes.append(parent or node)
            continue
        kind, where = _classify(model, node, parent_of, set())
        if kind == ESCAPE:
            kind, where = _helper_argument(model, node, parent_of)
        if kind == BOUND and isinstance(where, ast.Name):
            for use, use_kind, use_where in _alias_uses(model, cls, where, parent_of):
                if use_kind == READ:
                    reads.append((use, use_where or use))
                elif use_kind != NEUTRAL:
                    writes.append(use)
            continue
        if kind in (WRITE, ESCAPE, BOUND):
            writes.append(node)
        elif kind == READ and isinstance(node.value, ast.Name) and node.value.id == "self":
            reads.append((node, where or node))
    if not reads:
        return None
    if not writes:
        return min(reads, key=lambda r: _position(r[0]))[1]
    method = _method_of(cls, writes[0])
    if method is None or method.name == "__init__" or any(_method_of(cls, node) is not method for node in writes):
        return None  # changed in several methods (or outside them): which runs first is beyond us
    if _never_run(model, cls, method):
        model.__dict__.setdefault("_ag012_uncalled", {})[id(target)] = method  # (named in the message)
        elsewhere = [r for r in reads if _method_of(cls, r[0]) is not method]
        return min(elsewhere, key=lambda r: _position(r[0]))[1] if elsewhere else None
    first_write = min(_position(node) for node in writes)
    before = [r for r in reads if _method_of(cls, r[0]) is method and _position(r[0]) < first_write
              and _reached_on_first_call(cls, method, r[0], target.attr, parent_of, attributes)]
    return min(before, key=lambda r: _position(r[0]))[1] if before else None


def _never_run(model: ModuleModel, cls: ClassInfo, method: ast.FunctionDef) -> bool:
    """An initialiser nothing runs (`reset_parameters()` that `__init__` forgot): the class is built in this file, the
    method's name appears nowhere else in it (no call on `self` or an instance, no `apply`, `getattr`, callback), it is
    undecorated and no nn.Module method that torch runs itself, and nothing here hands the module to torch.distributed
    (FSDP runs `reset_parameters()` of modules built on the meta device)."""
    name = method.name
    init = cls.methods.get("__init__")
    if name in api.MODULE_METHODS or name.startswith("__") or method.decorator_list or init is None or not model.callers(init):
        return False
    text = model.source.text
    if api.DEFERRED_INIT in text or any(q.startswith(api.DEFERRED_INIT) for q in model.imports.names.values()):
        return False
    return name in text and name not in _names_used(model)


def _names_used(model: ModuleModel) -> set[str]:
    """Every name the code refers to (`x.name`, `name`, a string that is an identifier: `getattr(m, "name")`), function
    definitions aside; one walk, only for a module that has an initialiser to look for."""
    found = model.__dict__.get("_ag012_names_used")
    if found is None:
        found = set()
        for node in nodes(model.tree):
            if isinstance(node, ast.Attribute):
                found.add(node.attr)
            elif isinstance(node, ast.Name):
                found.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                found.add(node.value)
        model.__dict__["_ag012_names_used"] = found
    return found


_UNKNOWN = object()


def _reached_on_first_call(cls, method, read: ast.AST, attr: str, parent_of, attributes) -> bool:
    """Whether the first call of `method` reaches `read`: each `if` around it tests the tensor itself (its metadata cannot
    tell garbage), or is true with the values `__init__` gave (`self.steps % 2 == 0` with `self.steps = 0`). A guard
    on other state (`if self.count > 0:`) that is not known true may be what delays the read: not reached."""
    child, node = read, parent_of.get(id(read))
    while node is not None and node is not method:
        if isinstance(node, (ast.If, ast.While, ast.IfExp)) and child is not node.test:
            in_body = child in node.body if isinstance(node.body, list) else child is node.body
            mentions = any(isinstance(sub, ast.Attribute) and sub.attr == attr for sub in ast.walk(node.test))
            if not mentions:
                value = _first_call_value(cls, method, node.test, node, attributes, 0)
                if value is _UNKNOWN or bool(value) is not in_body:
                    return False
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False  # a nested function: when it runs is beyond us
        child, node = node, parent_of.get(id(node))
    return True


def _first_call_value(cls, method, expr: ast.AST, at: ast.AST, attributes, depth: int):
    """A guard's value on the method's first call, from literals, names bound earlier at the top of the method and
    attributes only `__init__` sets to a literal; _UNKNOWN otherwise."""
    if depth > 8:
        return _UNKNOWN
    recurse = lambda e: _first_call_value(cls, method, e, at, attributes, depth + 1)  # noqa: E731
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.Not, ast.USub)):
        value = recurse(expr.operand)
        return _UNKNOWN if value is _UNKNOWN else (not value if isinstance(expr.op, ast.Not) else -value)
    if isinstance(expr, ast.BoolOp):
        values = [recurse(v) for v in expr.values]
        if _UNKNOWN in values:
            return _UNKNOWN
        return all(values) if isinstance(expr.op, ast.And) else any(values)
    if isinstance(expr, (ast.BinOp, ast.Compare)):
        operands = [expr.left, expr.right] if isinstance(expr, ast.BinOp) else [expr.left, *expr.comparators]
        values = [recurse(v) for v in operands]
        if any(v is _UNKNOWN or not isinstance(v, (int, float)) for v in values):
            return _UNKNOWN
        try:
            if isinstance(expr, ast.BinOp):
                op = _ARITHMETIC.get(type(expr.op))
                return _UNKNOWN if op is None else op(*values)
            ops = [_COMPARISONS.get(type(op)) for op in expr.ops]
            if None in ops:
                return _UNKNOWN
            return all(op(left, right) for op, left, right in zip(ops, values, values[1:]))
        except ArithmeticError:
            return _UNKNOWN
    if isinstance(expr, ast.Name):
        bound = [stmt for stmt in method.body if isinstance(stmt, ast.Assign) and _position(stmt) < _position(at)
                 and any(isinstance(t, ast.Name) and t.id == expr.id for t in stmt.targets)]
        nested = [n for n in ast.walk(method) if isinstance(n, ast.Name) and n.id == expr.id and isinstance(n.ctx, ast.Store)]
        if len(bound) != 1 or len(nested) != 1 or len(bound[0].targets) != 1:
            return _UNKNOWN  # bound once, at the top of the method, before the guard
        return recurse(bound[0].value)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        init = cls.methods.get("__init__")
        stores = [n for n in attributes.get(expr.attr, ()) if isinstance(n.ctx, ast.Store)]
        literal = [stmt for stmt in (init.node.body if init is not None else []) if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                   and isinstance(stmt.targets[0], ast.Attribute) and stmt.targets[0].attr == expr.attr and isinstance(stmt.value, ast.Constant)]
        if len(literal) != 1 or any(not _inside(init.node, n) and not (_inside(method, n) and _position(n) > _position(at)) for n in stores):
            return _UNKNOWN
        return literal[0].value.value
    return _UNKNOWN


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Mod: operator.mod,
               ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv}
_COMPARISONS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
                ast.GtE: operator.ge}


def _position(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _method_of(cls: ClassInfo, node: ast.AST):
    return next((stmt for stmt in cls.node.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and _inside(stmt, node)), None)


def _alias_uses(model, cls, alias: ast.Name, parent_of):
    """(use, kind, where) for the loads of `alias` after it is bound, in the method that binds it."""
    method = _method_of(cls, alias)
    if method is None:
        return [(alias, BOUND, None)]
    found = []
    for use in ast.walk(method):
        if isinstance(use, ast.Name) and use.id == alias.id and isinstance(use.ctx, ast.Load) and _position(use) > _position(alias):
            kind, where = _classify(model, use, parent_of, set())
            if kind == ESCAPE:
                kind, where = _helper_argument(model, use, parent_of)
            found.append((use, ESCAPE if kind == BOUND else kind, where))
    return found


def _helper_argument(model, node: ast.AST, parent_of, depth: int = 0) -> tuple[str, ast.AST | None]:
    """`is_empty(self.stat)`: a function of this file that only inspects its parameter (metadata, `is None`,
    `isinstance`) leaves it NEUTRAL; one that computes with it (`offset.view(1, -1) + x`) and never writes, rebinds or
    hands it on reads it (READ, at the call); anything else it may do with it is an ESCAPE."""
    call = parent_of.get(id(node))
    if not isinstance(call, ast.Call) or node not in call.args or depth > 1:
        return ESCAPE, None
    event = _call_events(model).get(id(call))
    function = event.function if event is not None else None
    if function is None or function.cls is not None or not isinstance(function.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ESCAPE, None
    arguments = function.node.args
    params = [*arguments.posonlyargs, *arguments.args]
    index = call.args.index(node)
    if index >= len(params) or arguments.vararg is not None or any(isinstance(arg, ast.Starred) for arg in call.args[:index]):
        return ESCAPE, None
    name = params[index].arg
    inner_parents, _ = _tree_index(model, function.node)
    read = False
    for use in ast.walk(function.node):
        if isinstance(use, ast.Name) and use.id == name and not isinstance(use.ctx, ast.Load):
            return ESCAPE, None  # rebound: which value a later read sees is beyond us
        if isinstance(use, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and use is not function.node:
            return ESCAPE, None  # (a closure may write it whenever it runs)
        if isinstance(use, ast.Name) and use.id == name:
            outer = inner_parents.get(id(use))
            if isinstance(outer, ast.Call) and isinstance(outer.func, ast.Name) and outer.func.id == "isinstance":
                continue
            kind, where = _classify(model, use, inner_parents, set())
            if kind == ESCAPE:
                kind, where = _helper_argument(model, use, inner_parents, depth + 1)
            if kind not in (NEUTRAL, READ) or isinstance(where, (ast.Return, ast.Yield, ast.YieldFrom)):
                return ESCAPE, None  # (handed back: what the caller does with it is not followed here)
            read = read or kind == READ
    return (READ, call) if read else (NEUTRAL, None)


def _tree_index(model: ModuleModel, root: ast.AST):
    """One walk under `root`: every node's parent, and the `x.<name>` attribute nodes by name (cached per root)."""
    cache = model.__dict__.setdefault("_ag012_tree_index", {})
    found = cache.get(id(root))
    if found is None:
        parent_of, attributes = {}, {}
        for node in breadth_first(root):
            for child in children(node):
                parent_of[id(child)] = node
            if isinstance(node, ast.Attribute):
                attributes.setdefault(node.attr, []).append(node)
        found = cache[id(root)] = (parent_of, attributes)
    return found


def _inside(outer: ast.AST, node: ast.AST) -> bool:
    return outer.lineno <= node.lineno <= (outer.end_lineno or outer.lineno)


def _plain_module_bases(model: ModuleModel, cls: ClassInfo, depth: int = 0) -> bool:
    """Every base is nn.Module (or a class of this file built on it): no hidden parent `reset_parameters()`."""
    if depth > 5:
        return False
    for base in cls.node.bases:
        qualname = model.imports.qualname(base)
        if qualname in api.MODULE_BASES or qualname in ("torch.nn.Module", "torch.nn.modules.module.Module"):
            continue
        if isinstance(base, ast.Name) and base.id in model.classes and model.classes[base.id] is not cls:
            if _plain_module_bases(model, model.classes[base.id], depth + 1):
                continue
        return False
    return bool(cls.node.bases) or not cls.is_module  # a plain class (no base): nothing inherited initialises it


def _initialises_in_bulk(model: ModuleModel) -> bool:
    """A weight loader, `apply(init_fn)`, `reset_parameters()`, a getattr-based or parameters()-loop init anywhere in the file."""
    cached = model.__dict__.get("_bulk_init")
    if cached is None:
        cached = _scan_bulk_init(model)
        model.__dict__["_bulk_init"] = cached
    return cached


def _scan_bulk_init(model: ModuleModel) -> bool:
    defined = {info.name for info in model.functions.values()}
    for event in model.of_type(CallEvent):
        node = event.node
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else "")
        if name in uses.WEIGHT_LOADERS and not (name == "apply" and _applies_local_def(model, node, defined)):
            return True
        lowered = name.lower()
        if ("init" in lowered or "reset" in lowered) and not name.startswith("__") and name not in defined:
            return True  # an initialiser defined elsewhere: it may set every parameter
        qualname = event.qualname or ""
        if qualname.startswith("torch.nn.init.") and node.args and not isinstance(_viewed(node.args[0]), ast.Attribute):
            return True  # initialising something reached by a loop or getattr: may be every parameter
        if isinstance(func, ast.Attribute) and uses.writes_without_reading(func.attr) and _generic_receiver(func.value) \
                and not _fresh_local(model, func.value) and not _fresh_factory(model, func.value):
            return True
    return False


def _fresh_factory(model: ModuleModel, node: ast.expr) -> bool:
    """`torch.Tensor(n).zero_()`: the fill of a tensor a torch factory has just made, not of one looked up."""
    qualname = model.imports.qualname(node.func) if isinstance(node, ast.Call) else None
    return qualname is not None and qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in api.TENSOR_FACTORIES


def _applies_local_def(model: ModuleModel, call: ast.Call, defined: set[str]) -> bool:
    """`model.apply(_init_weights)` / `self.apply(self._init_weights)` of a def of this file: it initialises what its
    body writes (the attribute scan reads that body like any other code), not every parameter."""
    if len(call.args) != 1 or call.keywords:
        return False
    fn = call.args[0]
    if isinstance(fn, ast.Name):
        return fn.id in defined and model.imports.qualname(fn) is None
    return isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id == "self" and fn.attr in defined


def _viewed(node: ast.expr) -> ast.expr:
    """The tensor a view or cut of it stands for: `self.w` for `self.w.data.t()`, `w` for `w[0]`."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and uses.method(node.func.attr) in (uses.VIEW, uses.CUT):
            node = node.func.value
        elif isinstance(node, ast.Attribute) and uses.attribute(node.attr) in (uses.VIEW, uses.CUT):
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return node


def _generic_receiver(node: ast.expr) -> bool:
    """`p.data.uniform_()` / `getattr(self, n).zero_()`: a write through a loop variable or a dynamic lookup."""
    while isinstance(node, ast.Attribute) and uses.attribute(node.attr) in (uses.VIEW, uses.CUT):
        node = node.value
    return isinstance(node, ast.Name) and node.id != "self" or isinstance(node, ast.Call)


def _fresh_local(model: ModuleModel, node: ast.expr) -> bool:
    """`table = torch.empty(n); table.fill_(v)`: a name bound to a tensor a torch factory just made (no parameter, no
    loop over parameters): filling it initialises nothing else."""
    if not isinstance(node, ast.Name):
        return False
    prov = model.prov(node)
    if prov is None or prov.kind is not Kind.TENSOR or prov.base is not None:
        return False
    module, _, short = prov.origin.rpartition(".")
    return module == "torch" and short in api.TENSOR_FACTORIES


# -- the finding ----------------------------------------------------------------------------------------
def _finding(model: ModuleModel, creation: CallEvent, short: str, read: ast.AST | None, attribute: str | None = None,
             target: str | None = None, via: ast.Call | None = None, initialiser: ast.FunctionDef | None = None):
    call = creation.node
    text = " ".join(model.text(call).split())
    if len(text) > 40:
        text = text[:37] + "..."
    if read is not None and hasattr(read, "lineno"):
        read_text = " ".join(model.text(read).split())
        if len(read_text) > 40:
            read_text = read_text[:37] + "..."
        where = f"read at line {read.lineno} (`{read_text}`)"
    else:
        where = "read"
    subject = f"`self.{attribute}`" if attribute else "its values"
    if via is not None:  # returned by a helper, read by its caller
        via_text = " ".join(model.text(via).split())
        subject += f", returned to `{via_text[:37] + '...' if len(via_text) > 40 else via_text}` (line {via.lineno}),"
    message = (f"`{text}` allocates memory without initialising it, and {subject} {'is' if attribute else 'are'} {where} before "
               f"anything writes them: garbage values. Use `zeros`, or fill it first (`fill_`, `copy_`, `uniform_`, `nn.init.*`)")
    if initialiser is not None:
        message += f"; `{initialiser.name}()` (line {initialiser.lineno}) would initialise it, but nothing calls it: call it at the end of `__init__`"
    fixes = []
    fix = _zeros_fix(model, call, short)
    if fix is not None:
        fixes.append(fix)
    related = [(read, "the uninitialised values are read here")] if read is not None and hasattr(read, "lineno") else []
    if initialiser is not None:
        related.append((initialiser, f"`{initialiser.name}()` writes it, but nothing calls it"))
    return model.finding(RULE, call, message, fixes=fixes, related=related, factory=short, attribute=attribute, target=target)


def _zeros_fix(model: ModuleModel, call: ast.Call, short: str) -> Fix | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        base = model.text(func.value)
    elif model.imports.torch_alias:
        base = model.imports.torch_alias
    else:
        return None
    if short == "empty_strided":
        return None
    new = "zeros_like" if short == "empty_like" else "zeros"
    edits = [Edit(model.span(func), f"{base}.{new}")]
    dtype = ops.LEGACY_CONSTRUCTORS.get(short)
    if dtype is not None and dtype != "float32":  # torch.zeros makes float32 already
        last = call.args[-1]
        end = model.span(last)
        edits.append(Edit(Span(end.end_line, end.end_col, end.end_line, end.end_col), f", dtype={base}.{dtype}"))
    return Fix(f"Allocate with `{base}.{new}(...)` (defined zeros)", Safety.UNSAFE, tuple(edits))
