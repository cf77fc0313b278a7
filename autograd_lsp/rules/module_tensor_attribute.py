"""## What it does
Flags `self.x = torch.<factory>(…)` (`torch.tensor([...])`, `zeros`, `ones`, `randn`, `arange`, `linspace`,
`eye`, `from_numpy`…, or `getattr(torch, window)(n)` of a name every construction this module shows passes, optionally followed by shape/dtype methods such as `.view(1, 3, 1, 1)` or indexing that
keeps every dimension such as `[..., None]`, or computed from such tensors by torch ops and arithmetic:
`torch.tril(torch.ones(n, n))`, `1 / base ** (torch.arange(0, d, 2) / d)`, a local filled in place such as a
positional-encoding table) in the `__init__` of an `nn.Module` (or `LightningModule`) subclass
or in a method `__init__` calls on `self` (`self.reset_states()`), also when the value is returned by a method or
staticmethod of the class, or a function of this module, that builds it only so (`self.make_mask(n)`, `Table.build(n)`,
`sinusoid_table(n, d)`, `.to(torch.bool)` keeping the device; `torch.tensor(values)` of a Python list given a dimension
by `.unsqueeze(0)` or `.view(1, -1)`, or of a local bound only to a list a function of this module returns, or of a parameter (`stats["mean"]` of one, `opts.mean` of a `SimpleNamespace`/`argparse.Namespace`) that every
construction this module shows fills with a sequence of numbers, passed on through builders' parameters and defaults too; `torch.cat(rows)` of a local list only appended such tensors), when it is stored with `setattr(self, "name", t)` or `setattr(self, f"pos{i}", t)` (read back with
`getattr`), or reshaped from itself afterwards (`self.t = self.t.permute(...)`, reported too), when another method (`forward()`…) then
uses `self.x` (or a local alias of it) in a computation with other tensors (an operand, an argument next to other
values, the input of one of the module's layers, indexed by a tensor every call of the method passes; followed through ops of that one tensor such as `F.normalize(self.x)`,
and through a conversion to a dtype only, `self.window.to(x.dtype)`, which leaves it on its device), without
moving it first (`self.x.to(x.device)`, `.type_as(x)`). Also `self.x = x` of an `__init__` parameter when the
constructions this module shows pass such a plain tensor (`Loss(torch.tensor([1.0, 3.0]))`; a Parameter, a tensor
given a `device=`, or one the caller got from elsewhere is not).

A floating attribute that `forward` moves to the input's device only (`self.pe.to(x.device)`) is reported when this
code converts the module (or one holding it) to another floating dtype (`model.half()`, `.to(torch.float64)`): the
conversion leaves the attribute's dtype behind.

A module that moves its plain tensors by hand in its own `to()` (or `cuda()`) is reported only where this code converts
it past that method: nn.Module's `.half()`, `.double()`, `.bfloat16()`, `.cuda()` of an instance run `_apply`, which
never calls the override, and so does any conversion of a module holding it (`model.to(device)`); a floating attribute
for a conversion of dtype. One that overrides `_apply` or the state-dict hooks is not reported.

A tensor made to require grad (`torch.tensor(v, requires_grad=True)`, 0-dim too) is trainable state that
`parameters()` and `state_dict()` miss: reported when a method uses it. Several attributes bound by one statement
(`self.x, self.y = x, y`) get one finding. Random values (`torch.randperm(n, device=d)`, any random factory without
`generator=`) kept so in a module that has weights, read while building it (state made from them) and by another
method (`.tolist()`, as an index...): `state_dict()` loses them, so a module rebuilt from a checkpoint draws others
for the saved state made from the first ones (drawn on the branch `if order is None:` of an `order` that every
construction this module shows leaves at None, the other branch keeping a given order).

Not flagged: `nn.Parameter(...)`, `self.register_buffer(...)`, Python numbers, 0-dim tensors such as
`torch.tensor(0.5)` (PyTorch lets a 0-dim CPU tensor combine with tensors on any device; but one that a method keeps
updating from itself, `self.steps += n`, is running state `state_dict()` loses, and is reported so), tensors created
with an explicit `device=`, attributes only used in `__init__` or only as indices, uses that meet only tensors a torch
factory makes right there without `device=` (`torch.ones(n) * self.scale`: both on the default device; a factory whose
tensor arguments place its result, `torch.ones_like(x)`, is not such a one), and stand-ins that a method
replaces before any use: an empty tensor (`torch.empty(0)`), or a one-element literal such as `torch.zeros(1)` that
`forward` rebuilds next to its input whenever a slice of its shape past its own dimensions differs from the input's
(`if self.grid.shape[2:4] != x.shape[2:4]:`, true on the first call). Also not flagged: a use that an earlier
statement of its block prepares by moving the attribute (`if self.wf.device != w.device: self.wf = self.wf.to(w.device)`)
when no method but `__init__` gives it a new value (a constant table; running statistics updated in `forward` are
still reported: `state_dict()` loses them), and a tensor handed to a custom autograd Function's `apply` whose
`forward` only saves it (`ctx.save_for_backward`), stores it on `ctx` or gives it to a compiled kernel.

## Why is this bad?
A plain tensor attribute is not part of the module's state: `model.to(device)` / `.cuda()` / `.half()`
move parameters and buffers but leave it where it was, and `state_dict()` does not contain it.
On a GPU the first forward then fails with a device mismatch; on CPU everything looks fine, which is why
it survives until deployment.

## Example
```python
class Normalize(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)

    def forward(self, x):
        return x - self.mean
```

## Use instead
```python
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
```
or `self.register_buffer("mean", ..., persistent=False)` to move with the module without being saved
in the `state_dict()`.

## Fix safety
Unsafe: a (persistent) buffer changes the `state_dict()` keys, so checkpoints saved before the change no
longer load with `strict=True`; the `persistent=False` variant keeps the `state_dict()` unchanged.

## Runtime signature
On CUDA: `RuntimeError: Expected all tensors to be on the same device, but found at least two devices,
cuda:0 and cpu!`. On CPU, silent: after `model.to(device)` the attribute stays behind and is missing from
`state_dict()`.
"""
from __future__ import annotations

import ast
import re
import sys
from dataclasses import replace

from ..analysis import callsite
from ..analysis import torch_api as api
from ..analysis import uses
from ..analysis.model import BindEvent, CallEvent, ClassInfo, ModuleModel
from ..analysis.provenance import Kind
from ..analysis.syntax import attribute_name, nodes, statements
from ..findings import Edit, Fix, Safety, Severity
from . import edits
from .passed_values import passed_none, passed_sequence, passed_strings
from .tree_order import breadth_first, children

CODE = "AG009"
NAME = "module-tensor-attribute"
SEVERITY = Severity.WARNING
SUMMARY = "Plain tensor attribute set in an nn.Module's __init__: .to(device) leaves it behind"
RUNTIME_SIGNATURE = "RuntimeError: Expected all tensors to be on the same device | silent: attribute not moved by .to(), not in state_dict()"
RULE = sys.modules[__name__]
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def check(model: ModuleModel):
    in_methods: dict = {}  # method scope -> its `self.x = ...` binds (and `setattr(self, name, value)` calls, as binds)
    for bind in model.of_type(BindEvent):
        if bind.ctx.scope.function is not None and bind.name.startswith("self."):
            in_methods.setdefault(bind.ctx.scope, []).append(bind)
    if "setattr(" in model.source.text:  # (a text search: counting the tree's names would walk it)
        for bind in _setattr_binds(model):
            in_methods.setdefault(bind.ctx.scope, []).append(bind)
    if not in_methods:
        return
    for cls in model.classes.values():
        overrides = api.DEVICE_OVERRIDES & cls.methods.keys() if cls.is_module else None
        if not cls.is_module or overrides - api.DEVICE_OVERRIDES_BY_HAND:
            continue  # (its own `_apply` or state-dict hooks: it may move and save what it keeps)
        init = cls.methods.get("__init__")
        if init is None:
            continue
        # its own `to()` moves what it keeps by hand: only a conversion that goes past it leaves that behind
        bypass = _conversion_past_override(model, cls) if overrides else None
        if overrides and bypass is None:
            continue
        hand = [cls.methods[name] for name in overrides]  # (where it rebinds them to moved copies: not another value)
        # construction: __init__ and the methods it calls on self (`self.init_states(x)`) run before any .to(device)
        builders = [init]
        if any(method is not init and method.scope in in_methods for method in cls.methods.values()):
            # (only then can a method __init__ calls add a candidate: its body is searched for those calls)
            builders += [cls.methods[name] for name in _self_calls(init.node) if name in cls.methods and name != "__init__"]
        candidates = [bind for method in builders for bind in in_methods.get(method.scope, ()) if _is_plain_factory_tensor(model, cls, bind)]
        candidates += [bind for bind in in_methods.get(init.scope, ()) if _passed_plain_tensor(model, cls, init, bind)]
        counts = [bind for bind in in_methods.get(init.scope, ()) if _zero_dim_literal(model, bind)]
        if counts:
            yield from _running_counts(model, cls, counts, builders)
        randoms = [bind for method in builders for bind in in_methods.get(method.scope, ()) if _random_factory(model, bind)]
        if not candidates and not randoms:
            continue
        registered = _registered_names(cls)
        # plain tensors this module keeps, each left where it was made: one met only with another of them meets
        # nothing that `.to(device)` moves (`torch.cat([self.mu, self.logsigma])`)
        _MODELS[id(cls.node)] = model
        _UNMOVED[id(cls.node)] = frozenset(name for name in (bind.name.split(".", 1)[1] for bind in candidates)
                                           if not any(_names_match(name, other) for other in registered)
                                           and not _rebound_elsewhere(cls, name, builders + hand, anywhere=True))
        reported, out, by_statement = set(), [], {}
        try:
            for bind in candidates:
                attr = bind.name.split(".", 1)[1]
                if any(_names_match(attr, name) for name in registered) or attr in reported \
                        or _replaced_while_building(model, cls, bind, in_methods) or _placeholder_for_a_parameter(bind, builders, in_methods) \
                        or _setattr_elsewhere(cls, attr, builders + hand, in_methods) \
                        or _placed_by_hand(attr, builders) and _dtype_conversion(model, cls) is None:
                    continue
                use = _device_sensitive_use(cls, attr, model.imports, model.classes)
                conversion = None
                if bypass is not None:
                    function = bind.ctx.scope.function
                    if use is None or bypass[1] == "dtype" and not _floating(model, bind.value, function.node if function else None, cls):
                        continue
                elif use is None:
                    # moved to a device only where it is used, in a module this code converts to another floating dtype
                    conversion = _dtype_conversion(model, cls)
                    function = bind.ctx.scope.function
                    if conversion is None or not _floating(model, bind.value, function.node if function else None, cls):
                        continue
                    use = _device_sensitive_use(cls, attr, model.imports, model.classes, kept_dtype=True)
                    if use is None:
                        continue
                stand_in = _placeholder(bind.value) or _stand_in(cls, attr, bind.value, builders)
                if _rebound_elsewhere(cls, attr, builders + hand, anywhere=stand_in):
                    continue
                reported.add(attr)
                found = _finding(model, cls, bind, attr, use, conversion=conversion, bypass=bypass[0] if bypass else None)
                earlier = by_statement.get(id(bind.node)) if conversion is None else None
                if earlier is not None:  # `self.x, self.y = x, y`: one finding for the statement, naming each attribute
                    out[earlier] = _merged(cls, out[earlier], found)
                else:
                    if conversion is None:
                        by_statement[id(bind.node)] = len(out)
                    out.append(found)
                for later in in_methods.get(bind.ctx.scope, ()):
                    if later.seq > bind.seq and later.name == bind.name and _from_itself(model, later.value, attr):
                        out.append(_finding(model, cls, later, attr, use, derived=True))  # `self.tem = self.tem.permute(2, 0, 1)`
            yield from out
            if randoms:
                for found in _random_state(model, cls, randoms, builders, in_methods, reported | registered):
                    reported.add(found.data["attribute"])
                    yield found
        finally:
            _UNMOVED.pop(id(cls.node), None)
            _MODELS.pop(id(cls.node), None)


def _merged(cls: ClassInfo, first, other):
    """One finding for a statement that binds several plain tensor attributes (`self.x, self.y = x, y`)."""
    names = [*first.data.get("attributes", (first.data["attribute"],)), other.data["attribute"]]
    related = first.related + other.related
    message = (f"{', '.join(f'`self.{n}`' for n in names)} are plain tensor attributes of the module `{cls.name}`: `.to(device)`/"
               f"`.cuda()` will not move them and `state_dict()` will not save them, yet they are combined with other tensors "
               f"(lines {', '.join(str(r.span.line) for r in related)}). Register each with `self.register_buffer(...)`")
    return replace(first, message=message, related=related, fixes=(), data={**first.data, "attributes": tuple(names)})


def _random_factory(model: ModuleModel, bind: BindEvent) -> bool:
    """`self.order = torch.randperm(n, device=d)`: values drawn at random (no `generator=` that would draw them again alike)."""
    call = bind.value
    if type(call) is not ast.Call or not call.args or bind.name.count(".") != 1 or any(k.arg in ("generator", "out", None) for k in call.keywords):
        return False
    qualname = model.imports.qualname(call.func) or ""
    return qualname.startswith("torch.") and qualname.count(".") == 1 and qualname[6:] in api.RANDOM_FACTORIES


def _random_state(model: ModuleModel, cls: ClassInfo, binds: list, builders: list, in_methods: dict, skip: set):
    """Random values kept in a plain attribute that a method other than the builders reads: `state_dict()` loses them, so
    a module rebuilt and loaded from a checkpoint draws others under the same trained weights (pyro's MADE permutation)."""
    if not (skip & _registered_names(cls) or any(_saved_state(prov) for prov in cls.attributes.values())):
        return  # (nothing else is saved: no checkpoint for the values to disagree with)
    if any(type(n) is ast.Call and attribute_name(n.func) == "manual_seed" for b in builders for n in ast.walk(b.node)):
        return  # (seeded while being built: a rebuilt module draws the same values)
    for bind in binds:
        attr = bind.name[5:]
        others = [other for method in builders for other in in_methods.get(method.scope, ()) if other.name == bind.name and other is not bind]
        if any(_names_match(attr, name) for name in skip) or others and not _only_branch_taken(model, bind, others) \
                or _rebound_elsewhere(cls, attr, builders, anywhere=True) or _setattr_elsewhere(cls, attr, builders, in_methods):
            continue  # (rebound while being built, `self.w = nn.Parameter(self.w)`: what is kept is the last value)
        # (built from while being built, too: the state made from them is saved, they are not: pyro's masks)
        read = _value_read([m for m in cls.methods.values() if m not in builders], attr)
        if read is None or _value_read(builders, attr) is None:
            continue
        skip = skip | {attr}
        text = " ".join(model.text(bind.value).split())[:50]
        message = (f"`self.{attr}` keeps random values (`{text}`) in a plain tensor attribute of the module `{cls.name}`: "
                   f"`state_dict()` does not save them, so a module rebuilt and loaded from a checkpoint keeps its saved "
                   f"weights but draws other values, and they are read at line {read.lineno}. "
                   f"Register it with `self.register_buffer(\"{attr}\", ...)`")
        fixes = _register_fix(model, bind, attr)
        yield model.finding(RULE, bind.target, message, fixes=fixes, related=[(read, f"`self.{attr}` read here")],
                            attribute=attr, module=cls.name)


def _only_branch_taken(model: ModuleModel, bind: BindEvent, others: list) -> bool:
    """`if order is None: self.order = torch.randperm(n)` / `else: self.order = order` where every construction this module
    shows leaves `order` at None: the other binds are on the branch no construction takes."""
    function = bind.ctx.scope.function
    if function is None:
        return False
    for node in statements(function.node.body, (ast.If, *_DEFS)):
        test = node.test if type(node) is ast.If else None
        if not (type(test) is ast.Compare and type(test.left) is ast.Name and len(test.ops) == 1 and type(test.ops[0]) in (ast.Is, ast.IsNot)
                and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None):
            continue
        taken, skipped = (node.body, node.orelse) if type(test.ops[0]) is ast.Is else (node.orelse, node.body)
        if _within(bind.node, taken) and all(other.ctx.scope is bind.ctx.scope and _within(other.node, skipped) for other in others):
            return passed_none(model, function.node, test.left)
    return False


def _within(statement: ast.AST, block: list) -> bool:
    return any(statement is node for inner in block for node in ast.walk(inner))


def _register_fix(model: ModuleModel, bind: BindEvent, attr: str) -> list:
    """`self.x = <value>` on its own line -> `self.register_buffer("x", <value>)` (unsafe: code that rebinds `self.x`
    to a plain tensor later would then fail)."""
    statement = bind.node
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and statement.targets[0] is bind.target \
            and edits.own_line(model, statement):
        return [Fix(f"Register as a buffer: `self.register_buffer(\"{attr}\", ...)`", Safety.UNSAFE,
                    (Edit(model.span(statement), f'self.register_buffer("{attr}", {model.text(bind.value)})'),))]
    return []


def _saved_state(prov) -> bool:
    """An attribute `state_dict()` holds something of: a Parameter, a module of this file, a torch layer with parameters
    or a container of layers."""
    if prov is None:
        return False
    if prov.kind is Kind.TENSOR:
        return prov.is_trainable_leaf
    layer = prov.module_class if prov.kind is Kind.MODULE else None
    if isinstance(layer, str):
        return api.layer_parameters(layer.rsplit(".", 1)[-1]) != ()
    return isinstance(layer, ClassInfo) and layer.is_module


def _value_read(methods: list, attr: str) -> ast.AST | None:
    """The first `self.<attr>` one of `methods` reads for its values (not `.shape` and other metadata)."""
    for method in methods:
        metadata = set()
        for node in ast.walk(method.node):
            if isinstance(node, ast.Attribute) and uses.is_metadata(node.attr):
                metadata.add(id(node.value))
        for node in ast.walk(method.node):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _self_attribute(node, attr) and id(node) not in metadata:
                return node
    return None


def _zero_dim_literal(model: ModuleModel, bind: BindEvent) -> bool:
    """`self.steps = torch.tensor(0)`: a 0-dim tensor of a number, placed on the default device."""
    call = bind.value
    if type(call) is not ast.Call or len(call.args) != 1 or call.keywords or type(call.args[0]) is not ast.Constant \
            or type(call.args[0].value) not in (int, float) or bind.name.count(".") != 1:
        return False
    qualname = model.imports.qualname(call.func) or ""
    return qualname.startswith("torch.") and qualname.count(".") == 1 and qualname[6:] in api.VALUE_FACTORIES


def _running_counts(model: ModuleModel, cls: ClassInfo, binds: list, builders: list):
    """0-dim tensors that a method keeps updating from themselves (`self.steps += n`, `total = self.steps + n; self.steps =
    total`): running state, which `state_dict()` does not hold in a plain attribute (no device problem: a 0-dim tensor
    combines with tensors on any device). One rebound elsewhere to another value is not followed."""
    registered = _registered_names(cls)
    for bind in binds:
        attr = bind.name[5:]
        if any(_names_match(attr, name) for name in registered) or _rebound_elsewhere(cls, attr, builders, anywhere=True) \
                or sum(1 for other in binds if other.name == bind.name) > 1:
            continue
        update = _updated_from_itself(cls, attr, builders)
        if update is None:
            continue
        message = (f"`self.{attr}` is running state kept in a plain tensor attribute of the module `{cls.name}` (updated from "
                   f"itself at line {update.lineno}): `state_dict()` does not save it, so a checkpoint loaded into a new module "
                   f"starts it over from `{model.text(bind.value)}`. Register it with `self.register_buffer(\"{attr}\", ...)`")
        fixes = _register_fix(model, bind, attr)
        yield model.finding(RULE, bind.target, message, fixes=fixes, related=[(update, f"`self.{attr}` updated here")],
                            attribute=attr, module=cls.name)


def _updated_from_itself(cls: ClassInfo, attr: str, builders: list) -> ast.stmt | None:
    """The first statement of a method that does not build the module assigning `self.<attr>` a value computed from
    itself, directly or through locals (`self.n += k`, `new = self.n + k; self.n = new`)."""
    for method in cls.methods.values():
        if method in builders:
            continue
        derived: set = set()
        for node in statements(method.node.body, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            if node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            itself = any(_self_attribute(n, attr) or isinstance(n, ast.Name) and n.id in derived for n in nodes(node.value))
            if any(_self_attribute(t, attr) for t in targets):
                if isinstance(node, ast.AugAssign) or itself:
                    return node
            elif itself:
                derived.update(n.id for t in targets for n in nodes(t) if isinstance(n, ast.Name))
    return None


def _setattr_binds(model: ModuleModel) -> list[BindEvent]:
    """`setattr(self, "mask", m)`, `setattr(self, f"pos_embed{idx}", pe)` in a method, as the binds of `self.mask`,
    `self.pos_embed{}` (a name made by a format string: a family of attributes, `{}` standing for what varies)."""
    binds = []
    for call in model.of_type(CallEvent):
        node = call.node
        if (type(node.func) is ast.Name and node.func.id == "setattr" and len(node.args) == 3 and not node.keywords
                and _self_name(node.args[0]) and call.ctx.scope.function is not None and isinstance(call.ctx.statement, ast.Expr)
                and call.ctx.statement.value is node):
            key = _attribute_key(node.args[1])
            if key is not None:
                binds.append(BindEvent(call.ctx.statement, call.ctx, seq=call.seq, name=f"self.{key}", target=node,
                                       value=node.args[2], prov=model.prov(node.args[2])))
    return binds


def _attribute_key(node: ast.AST) -> str | None:
    """`"mask"` -> mask; `f"pos_embed{idx}"` -> pos_embed{} (its constant parts, `{}` for each formatted value)."""
    return attribute_name(node)


def _names_match(name: str, other: str) -> bool:
    """Two attribute names that may be the same: equal, or one fits the other's pattern (`pos_embed2`, `pos_embed{}`)."""
    if name == other:
        return True
    for pattern, concrete in ((name, other), (other, name)):
        if "{}" in pattern and re.fullmatch(".+".join(map(re.escape, pattern.split("{}"))), concrete):
            return True
    return False


def _setattr_elsewhere(cls: ClassInfo, attr: str, builders: list, in_methods: dict) -> bool:
    """A method that does not build the module sets the attribute with `setattr` (what a later use reads is unknown)."""
    return any(bind.ctx.scope is method.scope and isinstance(bind.target, ast.Call) and _names_match(bind.name[5:], attr)
               for method in cls.methods.values() if method not in builders for bind in in_methods.get(method.scope, ()))


def _self_calls(function: ast.AST) -> list[str]:
    """Names of the methods a function body calls on `self` (`self.reset()`), nested defs excluded."""
    names, stack = [], list(getattr(function, "body", ()))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "self"):
            names.append(node.func.attr)
        stack.extend(children(node))
    return names


def _keeps_dims(index: ast.expr) -> bool:
    """`[..., None]`, `[:, 1:]`: indexing that keeps every dimension (a plain number could leave a 0-dim tensor)."""
    elts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and (e.value is None or e.value is Ellipsis)) for e in elts)


def _factory_call(model: ModuleModel, node: ast.AST, function: ast.AST | None = None) -> ast.Call | None:
    """The torch factory call at the root of `torch.tensor([...]).view(1, 3, 1, 1).float()` or `torch.linspace(...)[..., None]`,
    or None."""
    while isinstance(node, (ast.Call, ast.Subscript)):
        if isinstance(node, ast.Subscript):
            if not _keeps_dims(node.slice):
                return None
            node = node.value
            continue
        qualname = model.imports.qualname(node.func)
        if qualname in api.VARIABLE_CLASSES and node.args and not isinstance(node.args[0], ast.Starred):
            node = node.args[0]  # `Variable(torch.zeros(1), requires_grad=False)`: the tensor it wraps
            continue
        if qualname is not None:
            if qualname.startswith("torch.") and qualname.count(".") == 1 and qualname.rsplit(".", 1)[-1] in api.TENSOR_FACTORIES:
                return node
            return None
        if _named_factory(model, node, function) is not None:
            return node  # `getattr(torch, window)(n)`
        if not isinstance(node.func, ast.Attribute) or not (_keeps_device(node.func.attr) or _dtype_only(model, node)):
            return None
        if node.func.attr in api.REDUCTIONS and not node.args and not node.keywords:
            return None  # `.sum()`: a 0-dim result, usable with tensors on any device
        node = node.func.value
    return None


def _named_factory(model: ModuleModel, call: ast.Call, function: ast.AST | None) -> str | None:
    """`getattr(torch, "hann_window")(n)`, or `getattr(torch, window)(n)` of a parameter that every construction this
    module shows fills with that one name (through builders' parameters and defaults): the factory it names."""
    func = call.func
    if not (type(func) is ast.Call and type(func.func) is ast.Name and func.func.id == "getattr" and len(func.args) == 2
            and not func.keywords and model.imports.qualname(func.args[0]) == "torch"):
        return None
    key = func.args[1]
    names = {key.value} if type(key) is ast.Constant and type(key.value) is str else passed_strings(model, function, key)
    name = next(iter(names)) if names and len(names) == 1 else None
    return name if name in api.TENSOR_FACTORIES else None


def _is_plain_factory_tensor(model: ModuleModel, cls: ClassInfo, bind: BindEvent) -> bool:
    value = bind.value
    prov = bind.prov
    if value is None or prov is not None and not prov.is_tensor:
        return False
    function = bind.ctx.scope.function
    call = _factory_call(model, value, function.node if function else None)
    if call is None:
        # (a tensor by construction: its root is a factory, whatever the walk could follow)
        return prov is not None and _built_by_method(model, cls, value) or _plain_expression(model, value, function.node if function else None, (), cls)
    if prov is not None and prov.is_trainable_leaf and type(value) is ast.Call and value is call:
        # `torch.tensor(v, requires_grad=True)`: trainable state, 0-dim too (it is `parameters()` and `state_dict()` that miss it)
        return True
    function = bind.ctx.scope.function
    function = function.node if function else None
    # (the walk does not resolve `getattr(torch, name)`: the named factory makes it a tensor)
    return (prov is not None or _named_factory(model, call, function) is not None) \
        and _plain_factory(model, call, dimensioned=_dimension_given(value, call), function=function)


def _dimension_given(node: ast.AST, factory: ast.Call) -> bool:
    """A step of the chain from `node` down to its factory gives the result a dimension whatever the factory made:
    `torch.tensor(values).unsqueeze(1)`, `.view(1, n, n)`, `[None]`."""
    while node is not factory:
        if isinstance(node, ast.Subscript):
            if _adds_axis(node):
                return True
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            given = api.gives_dimension(node.func.attr)
            if given == "always" or given == "sizes" and node.args and not any(
                    isinstance(a, (ast.Starred, ast.Tuple, ast.List)) for a in node.args):
                return True
            node = node.func.value
        else:
            return False
    return False


def _passed_plain_tensor(model: ModuleModel, cls: ClassInfo, init, bind: BindEvent) -> bool:
    """`self.x = x` of an `__init__` parameter, where the constructions this module shows pass a plain tensor (made by
    torch factories and arithmetic, on no chosen device, not a Parameter, not requiring grad): the module keeps it as a
    plain attribute as surely as if it had made it (`InputPerturbation(0.05 * torch.randn(n, d))`)."""
    value = bind.value
    if type(value) is not ast.Name or bind.prov is None or bind.prov.origin != "param" or bind.ctx.via is not None:
        return False
    args = init.node.args
    if value.id not in {arg.arg for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
        return False
    passed = cls.constructed.get(bind.name.split(".", 1)[1])
    return (passed is not None and passed.kind is Kind.TENSOR and passed.requires_grad is False and passed.leaf is True
            and not passed.is_trainable_leaf and passed.origin != "param" and passed.module_class is None
            and passed.node is not None and _places_nothing(model, passed.node)
            and not _parameters_passed(model, init, value.id))


def _parameters_passed(model: ModuleModel, init, name: str) -> bool:
    """Every construction this module shows passes an `nn.Parameter` itself for `name` (a frozen one shared from another
    module: `Synthesis(analysis.window)`): stored on the module, it is registered as its parameter. Its `.data` or
    `.detach()` is a plain tensor."""
    calls = model.callers(init)
    return bool(calls) and all((value := callsite.argument_for(call, {name})) is not None and _a_parameter(model, value)
                               for call in calls)


def _a_parameter(model: ModuleModel, node: ast.expr) -> bool:
    """`node` is an `nn.Parameter` itself (on both sides of a conditional)."""
    if type(node) is ast.IfExp:
        return _a_parameter(model, node.body) and _a_parameter(model, node.orelse)
    prov = model.prov(node)
    return prov is not None and prov.kind is Kind.TENSOR and prov.origin == "nn.Parameter" and not prov.detached \
        and prov.data_of is None


def _plain_expression(model: ModuleModel, node: ast.AST, function: ast.AST | None, locals_: tuple, cls: ClassInfo | None = None) -> bool:
    """A tensor computed in the constructor only from plain factory tensors (and numbers) by torch ops and arithmetic,
    with a dimension and no device chosen: `torch.tril(torch.ones(n, n))`, `1.0 / base ** (torch.arange(0, d, 2) / d)`,
    or a local built so (`pe = torch.zeros(n, d)`, `pe[:, 0::2] = ...`, `self.pe = pe.unsqueeze(0)`). `locals_`: the locals
    being resolved (a reference back to one, `t = t * 2`, is as plain as its other bindings make it)."""
    if len(locals_) > 4:
        return False
    call = _factory_call(model, node, function)
    if call is not None:
        return _plain_factory(model, call, dimensioned=_dimension_given(node, call), function=function)
    if isinstance(node, ast.Subscript):
        return _keeps_dims(node.slice) and _plain_expression(model, node.value, function, locals_, cls)
    if isinstance(node, ast.UnaryOp):
        return _plain_expression(model, node.operand, function, locals_, cls)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        # (a product of two vectors has no dimension; with an axis added to a plain tensor, one side is a matrix)
        sides = (node.left, node.right)
        return (any(_adds_axis(side) and _plain_expression(model, side, function, locals_, cls) for side in sides)
                and all(_places_nothing(model, side) for side in sides))
    if isinstance(node, ast.BinOp):
        sides = (node.left, node.right)
        return (any(_plain_expression(model, side, function, locals_, cls) for side in sides)
                and all(_places_nothing(model, side) for side in sides))
    if isinstance(node, ast.Name):
        return node.id in locals_ or function is not None and _plain_local(model, function, node.id, locals_, cls)
    if not isinstance(node, ast.Call) or any(kw.arg in ("device", "out") or kw.arg is None for kw in node.keywords):
        return False
    if cls is not None and _builder(cls, node) is not None or _function_builder(model, node) is not None:
        return _built_by_method(model, cls, node, nested=True)  # `pe = self.build_table(h, w)`, `sinusoid_table(n, d)`
    func = node.func
    qualname = model.imports.qualname(func)
    if qualname is not None:  # torch.tril(torch.ones(n, n)), torch.cat([a, b]): an op of plain tensors
        short = qualname.rsplit(".", 1)[-1]
        if not (qualname.startswith("torch.") and api.is_op(short)) or short in api.REDUCTIONS:
            return False
        tensors = [e for a in node.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
        return (any(_plain_expression(model, t, function, locals_, cls) for t in tensors)
                and all(_places_nothing(model, a) for a in [*node.args, *(k.value for k in node.keywords)]))
    if isinstance(func, ast.Attribute) and _keeps_device(func.attr) and not (func.attr in api.REDUCTIONS and not node.args):
        return _plain_expression(model, func.value, function, locals_, cls) and all(_places_nothing(model, a) for a in node.args)
    if _dtype_only(model, node):  # `.to(torch.uint8)`
        return _plain_expression(model, func.value, function, locals_, cls)
    return False


def _places_nothing(model: ModuleModel, node: ast.AST) -> bool:
    """No call in the expression chooses a device (`.to(device)`, `device=`, `x.new_zeros(n)`)."""
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            if any(kw.arg == "device" for kw in child.keywords):
                return False
            if isinstance(child.func, ast.Attribute) and model.imports.qualname(child.func) is None and uses.moves_device(child.func.attr) \
                    and not _dtype_only(model, child):
                return False
    return True


def _plain_local(model: ModuleModel, function: ast.AST, name: str, locals_: tuple, cls: ClassInfo | None = None) -> bool:
    """A local of the constructor bound only by `name = <plain tensor>` (in-place writes into it keep it plain)."""
    args = function.args
    if name in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
        return False
    stores, assigned = _local_bindings(model, function)
    assigns = assigned.get(name, [])
    if not assigns or len(assigns) != stores.get(name, 0):
        return False  # bound some other way too (a loop variable, `with ... as`, unpacking, +=)
    if len(assigns) == 1 and isinstance(assigns[0].value, ast.List) and not assigns[0].value.elts:
        return _appended_plain(model, function, name, (*locals_, name), cls)  # `rows = []` then `rows.append(...)`
    created = False
    for assign in assigns:
        if _keeps_device_chain(assign.value, name):
            continue
        if not _plain_expression(model, assign.value, function, (*locals_, name), cls):
            return False
        created = created or not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(assign.value))
    return created


def _appended_plain(model: ModuleModel, function: ast.AST, name: str, locals_: tuple, cls: ClassInfo | None) -> bool:
    """A local list that the function only appends to (`rows.append(t)`, each `t` plain) and hands to torch calls
    (`torch.cat(rows)`): no other use that could add something else."""
    appends, loads, torch_args = _list_uses(model, function).get(name, ((), 0, 0))
    return bool(appends) and len(appends) + torch_args == loads and all(
        _plain_expression(model, value, function, locals_, cls) for value in appends)


def _list_uses(model: ModuleModel, function: ast.AST) -> dict:
    """name -> (what `name.append(x)` appends, how many loads of the name, how many of those are arguments of a torch
    call): one walk per function."""
    cache = model.__dict__.setdefault("_ag009_list_uses", {})
    found = cache.get(id(function))
    if found is None:
        appends: dict = {}
        loads: dict = {}
        torch_args: dict = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads[node.id] = loads.get(node.id, 0) + 1
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name) \
                        and len(node.args) == 1 and not node.keywords:
                    appends.setdefault(func.value.id, []).append(node.args[0])
                elif (model.imports.qualname(func) or "").startswith("torch."):
                    for arg in node.args:
                        if isinstance(arg, ast.Name):
                            torch_args[arg.id] = torch_args.get(arg.id, 0) + 1
        found = cache[id(function)] = {name: (appends.get(name, ()), loads.get(name, 0), torch_args.get(name, 0)) for name in appends}
    return found


def _python_list(model: ModuleModel, node: ast.AST, seen: tuple = (), function: ast.AST | None = None) -> bool:
    """A Python list, not a tensor: a literal or comprehension, a sum or slice of lists, or what a function of this
    module returns on every path (`rates(n - 1) + [0.5 ** n]`; a recursive call is taken as what the rest makes it),
    or a local of `function` that only `name = <such a list>` binds, or a parameter (`config["key"]` of one) that every call
    this module shows fills with a sequence of numbers."""
    if isinstance(node, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    if function is not None and (type(node) is ast.Subscript and type(node.slice) is ast.Constant
                                 or type(node) is ast.Attribute and type(node.value) is ast.Name):
        return not seen and passed_sequence(model, function, node)  # `config["mean"]`, `opts.mean`
    if isinstance(node, ast.Name) and function is not None and len(seen) < 4:
        args = function.args
        if node.id in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
            return not seen and passed_sequence(model, function, node)
        stores, assigned = _local_bindings(model, function)
        assigns = [a for a in assigned.get(node.id, ()) if isinstance(a.targets[0], ast.Name)]
        return bool(assigns) and len(assigns) == stores.get(node.id, 0) and all(
            _python_list(model, a.value, (*seen, node.id)) for a in assigns)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _python_list(model, node.left, seen) and _python_list(model, node.right, seen)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return _python_list(model, node.value, seen)
    if not isinstance(node, ast.Call) or len(seen) > 4:
        return False
    function = _called_functions(model).get(id(node))
    if function is None or not isinstance(function.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if any(function is other for other in seen):
        return True
    returns = [r.value for r in statements(function.node.body, (ast.Return, *_DEFS)) if isinstance(r, ast.Return)]
    return bool(returns) and all(r is not None and _python_list(model, r, (*seen, function)) for r in returns)


def _called_functions(model: ModuleModel) -> dict:
    """id(call node) -> the function of the workspace it calls (the walk's resolution)."""
    found = model.__dict__.get("_ag009_called")
    if found is None:
        found = model.__dict__["_ag009_called"] = {id(e.node): e.function for e in model.of_type(CallEvent) if e.function is not None}
    return found


def _local_bindings(model: ModuleModel, function: ast.AST) -> tuple[dict, dict]:
    """name -> how many times the function stores it, and name -> the `name = ...` / `a, name = ...` assignments
    binding it: one walk per constructor (it was one per local asked about)."""
    cache = model.__dict__.setdefault("_ag009_local_bindings", {})
    found = cache.get(id(function))
    if found is None:
        stores: dict = {}
        assigns: dict = {}
        for node in breadth_first(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stores[node.id] = stores.get(node.id, 0) + 1
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigns.setdefault(node.targets[0].id, []).append(node)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)):
                # `xx, yy = torch.meshgrid(ax, ax)`: every output of an op of plain tensors is plain
                for target in dict.fromkeys(e.id for e in node.targets[0].elts if isinstance(e, ast.Name)):
                    assigns.setdefault(target, []).append(node)
        found = cache[id(function)] = (stores, assigns)
    return found


def _adds_axis(node: ast.AST) -> bool:
    """`t[..., None]`, `t[None]`: an index that adds an axis (to a tensor that has one, the plain ones: a matrix)."""
    if not isinstance(node, ast.Subscript):
        return False
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return any(isinstance(e, ast.Constant) and e.value is None for e in elts)


def _built_by_method(model: ModuleModel, cls: ClassInfo, value: ast.AST, nested: bool = False) -> bool:
    """`self.make_table(n)` (`Table.make(n)` of a staticmethod) where every `return` of that method of the class gives a
    tensor built from plain factory tensors by torch ops and arithmetic (`t = torch.zeros(n, n)`, in-place fills,
    `torch.triu(torch.ones(shape), 1).to(torch.uint8)`): the result is as plain as the factory's."""
    method = (_builder(cls, value) if cls is not None else None) or _function_builder(model, value)
    if method is None:
        return False
    returns = [node.value for node in statements(method.node.body, (ast.Return, *_DEFS)) if isinstance(node, ast.Return)]
    inner = None if nested else cls  # (one builder may use another; no deeper)
    return bool(returns) and all(r is not None and _plain_expression(model, r, method.node, (), inner) for r in returns)


def _builder(cls: ClassInfo, value: ast.AST):
    """The method of the class that `self.m(...)` or `<Class>.m(...)` (a staticmethod) calls; not __init__."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)):
        return None
    method = cls.methods.get(value.func.attr)
    if method is None or method.name == "__init__" or not isinstance(method.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    owner = value.func.value.id
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.node.decorator_list)
    return method if owner == "self" or owner == cls.name and static else None


def _function_builder(model: ModuleModel, value: ast.AST):
    """The function of this module's top level that `name(...)` calls (defined once, not imported), or None."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return None
    table = model.__dict__.get("_ag009_top_functions")
    if table is None:
        table, seen = {}, set()
        defined = {id(info.node): info for info in model.functions.values()}
        for stmt in model.tree.body:
            names = [stmt.name] if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else \
                [n.id for n in breadth_first(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)] if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else []
            for name in names:
                table[name] = None if name in seen else defined.get(id(stmt))
                seen.add(name)
        model.__dict__["_ag009_top_functions"] = table
    function = table.get(value.func.id)
    return function if function is not None and model.imports.qualname(value.func) is None else None


def _dtype_only(model: ModuleModel, call: ast.Call) -> bool:
    """`.to(torch.uint8)`, `.to(dtype=torch.bool)`, `.to(x.dtype)`: a conversion that keeps the tensor where it is."""
    return _to_dtype(model.imports, call)


def _to_dtype(imports, call: ast.Call) -> bool:
    arguments = [*call.args, *(kw.value for kw in call.keywords if kw.arg == "dtype")]
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "to" and len(arguments) == 1
            and all(kw.arg in ("dtype", "copy", "non_blocking") for kw in call.keywords)):
        return False
    # (`.dtype` of anything is a dtype: the device stays)
    return isinstance(arguments[0], ast.Attribute) and arguments[0].attr == "dtype" \
        or imports is not None and api.dtype_class(imports.qualname(arguments[0])) is not None


def _from_itself(model: ModuleModel, node: ast.AST | None, attr: str) -> bool:
    """`self.<attr>.permute(2, 0, 1)`, `self.<attr>[None]`: the attribute reshaped or converted where it is."""
    start = node
    while isinstance(node, (ast.Call, ast.Subscript)):
        if isinstance(node, ast.Subscript):
            if not _keeps_dims(node.slice):
                return False
            node = node.value
        elif isinstance(node.func, ast.Attribute) and (_keeps_device(node.func.attr) or _dtype_only(model, node)) \
                and not any(kw.arg == "device" for kw in node.keywords) and not (node.func.attr in api.REDUCTIONS and not node.args):
            node = node.func.value
        else:
            return False
    return node is not start and _self_attribute(node, attr)


def _keeps_device_chain(node: ast.AST, name: str) -> bool:
    """`t.unsqueeze(0).repeat(k, 1, 1)`: methods that keep the device, applied to the local `t` itself."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _keeps_device(node.func.attr):
        if any(kw.arg == "device" for kw in node.keywords):
            return False
        node = node.func.value
    return isinstance(node, ast.Name) and node.id == name


def _plain_factory(model: ModuleModel, call: ast.Call, dimensioned: bool = False, function: ast.AST | None = None) -> bool:
    """A factory call with no device and a result known to have a dimension (`dimensioned`: given by what follows).
    `function`: the one it is in, whose locals may name its data."""
    if any(kw.arg in ("device", "out") for kw in call.keywords) or any(kw.arg is None for kw in call.keywords):
        return False
    short = _named_factory(model, call, function) or model.imports.qualname(call.func).rsplit(".", 1)[-1]
    if dimensioned and short in ("tensor", "as_tensor"):
        # (of a tensor, both keep its device; of a Python list, the values are copied to a new tensor on the default one)
        data = call.args[0] if call.args else None
        prov = model.prov(data) if data is not None else None
        return prov is not None and prov.kind in (Kind.SEQUENCE, Kind.NUMBER) or _python_list(model, data, function=function)
    if dimensioned:
        return bool(call.args) or short == "arange"
    if short in ("tensor", "as_tensor"):
        # torch.tensor(0.5) is 0-dim, usable with tensors on any device: only Python lists are known to have a dimension
        # (a literal, or a local bound only to what this module's function returns as one: `w = weights(n)`)
        return bool(call.args) and _python_list(model, call.args[0], function=function)
    if short in ("zeros", "ones", "empty", "rand", "randn", "full"):
        sizes = call.args[:1] if short == "full" else call.args
        return bool(sizes) and not (len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)) and not sizes[0].elts)  # zeros(())
    return bool(call.args) or short == "arange"


_UNMOVED: dict = {}  # id of a module's ClassDef -> its plain tensor attributes that nothing moves (set by `check`)
_MODELS: dict = {}  # id of a module's ClassDef -> the model being checked (for its methods' call sites)


def _unmoved_sibling(node: ast.AST, cls: ClassInfo | None, depth: int = 0, parents: dict | None = None) -> bool:
    """`self.<name>` of another plain tensor attribute of the same module (made with it, on the device it was made on), or
    a value computed from such attributes and constants alone (`self.log_scale.exp()`, `2 * self.b`), or (`parents`: the
    method's nodes) a local every assignment of which converts to such an attribute's type or device (`t =
    torch.arange(n).type_as(self.inv_freq)`: a legacy type names the device too)."""
    if cls is None or depth > 4:
        return False
    if isinstance(node, ast.Attribute) and _self_name(node.value):
        return isinstance(node.ctx, ast.Load) and node.attr in _UNMOVED.get(id(cls.node), ())
    if isinstance(node, ast.Name) and parents is not None:
        unmoved = _UNMOVED.get(id(cls.node), ())
        values = [other.value for other in parents if isinstance(other, ast.Assign) and len(other.targets) == 1
                  and isinstance(other.targets[0], ast.Name) and other.targets[0].id == node.id]
        return bool(values) and all(
            isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("type_as", "to")
            and len(value.args) == 1 and not value.keywords
            and any(isinstance(place, ast.Attribute) and _self_name(place.value) and place.attr in unmoved
                    for place in [value.args[0], getattr(value.args[0], "value", None) if getattr(value.args[0], "attr", None) == "device" else None])
            for value in values)
    if isinstance(node, ast.BinOp):
        return all(_constant(side) or _unmoved_sibling(side, cls, depth + 1) for side in (node.left, node.right)) \
            and not (_constant(node.left) and _constant(node.right))
    if isinstance(node, ast.UnaryOp):
        return _unmoved_sibling(node.operand, cls, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords \
            and not uses.moves_device(node.func.attr) and all(_constant(a) for a in node.args):
        return _unmoved_sibling(node.func.value, cls, depth + 1)  # self.log_scale.exp()
    return False


def _beside(node: ast.AST, cls: ClassInfo | None, imports, parents: dict | None = None) -> bool:
    """An operand that lives where the plain attribute does: another unmoved attribute (or made from one), or a tensor
    a factory makes on the default device."""
    return _unmoved_sibling(node, cls, parents=parents) or _made_on_default_device(node, imports)


def _made_on_default_device(node: ast.AST, imports) -> bool:
    """A tensor a torch factory makes right here with no `device=` (`torch.ones(self.steps + 1)`), one whose arguments
    do not place it (sizes, numbers): on the default device, where the plain attribute was made and stays."""
    if not isinstance(node, ast.Call) or imports is None:
        return False
    module, _, name = (imports.qualname(node.func) or "").rpartition(".")
    return module == "torch" and name in api.TENSOR_FACTORIES and name not in api.PLACED_BY_ARGUMENTS \
        and not any(kw.arg in ("device", "out") or kw.arg is None for kw in node.keywords)


def _registered_names(cls: ClassInfo) -> set[str]:
    """Names passed to `register_buffer`/`register_parameter` anywhere in the class."""
    names = set()
    for node in ast.walk(cls.node):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("register_buffer", "register_parameter")
                and node.args and _attribute_key(node.args[0]) is not None):
            names.add(_attribute_key(node.args[0]))
    return names


def _device_sensitive_use(cls: ClassInfo, attr: str, imports=None, classes=None, kept_dtype: bool = False) -> ast.AST | None:
    """A load of `self.<attr>` outside `__init__` that combines it with other (possibly device) tensors, and that no
    earlier statement of an enclosing block moved first (`kept_dtype`: moves to a device only do not count)."""
    for name, method in cls.methods.items():
        if name == "__init__":
            continue
        parents = _parents(method.node)
        for node, parent in parents.items():
            if _self_attribute(node, attr) and isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
                use = _combined(node, parents, cls=cls, imports=imports, classes=classes, kept_dtype=kept_dtype)
                if use is not None and not _device_checked_first(use, attr, parents) \
                        and not (_moved_before(node, attr, parents) and _only_moved(cls, attr)):
                    return use
    return None


def _device_only(call: ast.Call) -> bool:
    """`t.to(x.device)`, `t.to(device=d)`, `t.cuda()`, `t.cpu()`: a move that keeps the dtype."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in ("cuda", "cpu"):
        return not any(kw.arg == "dtype" for kw in call.keywords)
    if func.attr != "to" or any(kw.arg not in ("device", "non_blocking", "copy") for kw in call.keywords):
        return False
    device = [*call.args[:1], *(kw.value for kw in call.keywords if kw.arg == "device")]
    return len(device) == 1 and len(call.args) <= 1 and (
        isinstance(device[0], ast.Attribute) and device[0].attr == "device" or any(kw.arg == "device" for kw in call.keywords))


def _dtype_conversion(model: ModuleModel, cls: ClassInfo) -> ast.Call | None:
    """`model.half()`, `net.to(torch.float64)`, `.double()` in this module, of an instance of the class or of a module that
    holds one (a torch container of such modules too: `nn.Sequential(pre, net).to(torch.float64)`): its weights change
    dtype, a plain attribute does not. The first such call in walk order."""
    converted = model.__dict__.get("_ag009_converted")
    if converted is None:
        converted = model.__dict__["_ag009_converted"] = {}
        for call in model.of_type(CallEvent):
            recv = call.receiver_prov
            if recv is None or recv.kind is not Kind.MODULE or not _to_float_dtype(model, call):
                continue
            for held in _container_classes(recv):
                converted.setdefault(id(held), call.node)
    return converted.get(id(cls))


def _conversion_past_override(model: ModuleModel, cls: ClassInfo) -> tuple[ast.Call, str] | None:
    """(the call, "device" or "dtype") of the first conversion in this module that goes past the class's own `to()` (or
    `cuda()`): nn.Module's `.double()`, `.half()`, `.cuda()` of an instance, which it does not override, run `_apply`;
    and any conversion of a module holding one (`model.to(device)`) reaches it through `_apply`, past its own methods."""
    found = model.__dict__.get("_ag009_bypass")
    if found is None:
        found = model.__dict__["_ag009_bypass"] = {}
        for call in model.of_type(CallEvent):
            recv = call.receiver_prov
            if recv is None or recv.kind is not Kind.MODULE:
                continue
            what = api.APPLIED_CONVERSIONS.get(call.method)
            if what is None and call.method in ("to", "type"):
                what = "dtype" if _to_float_dtype(model, call) else "device" if call.method == "to" else None
            if what is None:
                continue
            for held in _container_classes(recv):
                if held is not recv.module_class or call.method not in held.methods:
                    found.setdefault(id(held), (call.node, what))
    return found.get(id(cls))


def _container_classes(prov, depth: int = 0) -> list:
    """The workspace module classes a module value is or holds: its class and what that holds, or, for a torch container
    (`nn.Sequential(a, b)`, `nn.ModuleList([...])`), what its elements are and hold."""
    if prov is None or prov.kind is not Kind.MODULE or depth > 3:
        return []
    if isinstance(prov.module_class, ClassInfo):
        return _held_classes(prov.module_class)
    return [held for element in prov.elements for held in _container_classes(element, depth + 1)]


def _to_float_dtype(model: ModuleModel, call: CallEvent) -> bool:
    """`.half()`, `.double()`, `.bfloat16()`, `.to(torch.float16)`: to a floating dtype other than the default float32."""
    if call.method in ("half", "double", "bfloat16"):
        return True
    if call.method not in ("to", "type"):
        return False
    for arg in [*call.node.args, *(kw.value for kw in call.node.keywords if kw.arg == "dtype")]:
        qualname = model.imports.qualname(arg)
        if api.dtype_class(qualname) == api.FLOAT and qualname.rsplit(".", 1)[-1] not in ("float32", "float"):
            return True
    return False


def _held_classes(cls: ClassInfo, depth: int = 0) -> list:
    """The class and the workspace module classes its attributes hold (in containers too), down a few levels."""
    found = [cls]
    if depth < 3:
        stack = list(cls.known_attributes().values())
        while stack:
            prov = stack.pop()
            if prov is None or prov.kind not in (Kind.MODULE, Kind.SEQUENCE, Kind.MAPPING):
                continue
            stack.extend(prov.elements)  # (an nn.ModuleList, a list of blocks)
            if isinstance(prov.module_class, ClassInfo) and prov.module_class is not cls:
                found += _held_classes(prov.module_class, depth + 1)
    return found


def _floating(model: ModuleModel, node: ast.AST, function: ast.AST | None, cls: ClassInfo | None, depth: int = 0) -> bool:
    """The tensor an expression of a constructor or builder makes has a floating dtype (what a module's conversion to
    half or double would change): a floating factory, a floating op (`sin`, `/`), `torch.cat` of such, a local or a
    builder's result built so. False when unknown."""
    prov = model.prov(node)
    if prov is not None and prov.kind is Kind.TENSOR and prov.dtype is not None:
        return prov.dtype == api.FLOAT
    if depth > 8:
        return False
    deeper = depth + 1
    if isinstance(node, ast.Subscript):
        return _floating(model, node.value, function, cls, deeper)
    if isinstance(node, ast.UnaryOp):
        return _floating(model, node.operand, function, cls, deeper)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.Div) or any(_floating(model, side, function, cls, deeper) for side in (node.left, node.right))
    if isinstance(node, ast.Name) and function is not None:
        assigns = _local_bindings(model, function)[1].get(node.id, [])
        return bool(assigns) and all(_floating(model, a.value, function, cls, deeper) for a in assigns if not _keeps_device_chain(a.value, node.id))
    if not isinstance(node, ast.Call):
        return False
    dtype = next((kw.value for kw in node.keywords if kw.arg == "dtype"), None)
    if dtype is not None:
        return api.dtype_class(model.imports.qualname(dtype)) == api.FLOAT
    if cls is not None and _builder(cls, node) is not None:
        method = _builder(cls, node)
        returns = [r.value for r in statements(method.node.body, (ast.Return, *_DEFS)) if isinstance(r, ast.Return)]
        return bool(returns) and all(r is not None and _floating(model, r, method.node, None, deeper) for r in returns)
    qualname = model.imports.qualname(node.func)
    short = qualname.rsplit(".", 1)[-1] if qualname is not None else (node.func.attr if isinstance(node.func, ast.Attribute) else None)
    if short is None:
        return False
    if qualname is not None and qualname.startswith("torch.") and short in api.TENSOR_FACTORIES:
        return short in api.FLOAT_FACTORIES
    if short in api.FLOAT_RESULT_METHODS:
        return True
    if _dtype_only(model, node):
        return False  # (`.to(torch.uint8)`; a floating target has been answered above only as a keyword)
    tensors = [e for a in node.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
    if qualname is not None:
        return qualname.startswith("torch.") and api.is_op(short) and bool(tensors) and _floating(model, tensors[0], function, cls, deeper)
    return isinstance(node.func, ast.Attribute) and _keeps_device(short) and _floating(model, node.func.value, function, cls, deeper)


def _only_moved(cls: ClassInfo, attr: str) -> bool:
    """No method but __init__ gives `self.<attr>` a new value, only moved copies of itself: a table rebuilt from the
    configuration, which `state_dict()` need not hold (running statistics updated in forward are state it loses)."""
    for name, method in cls.methods.items():
        if name == "__init__":
            continue
        for stmt in statements(method.node.body, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if not any(_self_attribute(node, attr) for target in targets for node in nodes(target)):
                continue
            if _moved_copy(stmt, attr) is None:
                return False
    return True


def _moved_copy(stmt: ast.stmt, attr: str) -> str | None:
    """`self.<attr> = self.<attr>.<move>(...)`: the move (`to`, `cuda`, `type_as`...), else None."""
    value = getattr(stmt, "value", None)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _self_attribute(stmt.targets[0], attr) \
            and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and uses.moves_device(value.func.attr) and _self_attribute(value.func.value, attr):
        return value.func.attr
    return None


def _moved_before(node: ast.AST, attr: str, parents: dict) -> bool:
    """An earlier statement of a block around the load rebinds `self.<attr>` to a moved copy, always or when its device
    differs: `if self.wf.device != w.device: self.wf = self.wf.to(w.device)` before the code that uses it (a device
    problem it is not; `_only_moved` says whether state_dict() loses anything)."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(child, ast.stmt):
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(parent, field, None)
                if isinstance(block, list) and child in block:
                    if any(_moves_attribute(stmt, attr) for stmt in block[:block.index(child)]):
                        return True
                    break
        child, parent = parent, parents.get(parent)
    return False


def _moves_attribute(stmt: ast.stmt, attr: str) -> bool:
    """`self.<attr> = <a copy moved to a device>`, or an `if` on the attribute's device or type (`self.<attr>.device`,
    `self.<attr>.type() != x.type()`) whose body does that; or on the device of another attribute the same body moves
    with it (`if self.mask.device != self.weight.device:` moving `mask`, `eye` and `perm` together: one stands for the
    group)."""
    if isinstance(stmt, ast.If):
        if not any(_moves_attribute(inner, attr) for inner in stmt.body):
            return False
        probed = [n.func.value if isinstance(n, ast.Call) else n.value for n in nodes(stmt.test) if uses.reads_device(n)]
        return any(_self_attribute(read, attr) for read in probed) or any(
            isinstance(read, ast.Attribute) and _self_attribute(read, read.attr) and _moves_attribute(inner, read.attr)
            for read in probed for inner in stmt.body)
    if isinstance(stmt, ast.Assign) and any(_self_attribute(target, attr) for target in stmt.targets):
        return any(isinstance(n, ast.Call) and (any(kw.arg == "device" for kw in n.keywords)
                                                or isinstance(n.func, ast.Attribute) and uses.moves_device(n.func.attr))
                   for n in nodes(stmt.value))
    return False


def _replaced_while_building(model: ModuleModel, cls: ClassInfo, bind: BindEvent, in_methods: dict) -> bool:
    """The same method later assigns the attribute, on every call (its top-level block), something that is not a plain
    tensor: `self.lr = torch.ones(n); self.lr = nn.Parameter(self.lr)` leaves a Parameter, which `.to()` moves."""
    method = bind.ctx.scope.function
    body = method.node.body if method is not None else ()
    return any(other.name == bind.name and other.seq > bind.seq and other.node in body
               and _not_plain(other.prov) for other in in_methods.get(bind.ctx.scope, ()))


def _placeholder_for_a_parameter(bind: BindEvent, builders: list, in_methods: dict) -> bool:
    """`self.pos = torch.tensor([])` on one branch of __init__, `self.pos = nn.Parameter(...)` on another: an empty
    stand-in (TorchScript needs the attribute on every path) where the configuration that uses it has a Parameter."""
    return _placeholder(bind.value) and any(other.name == bind.name and other is not bind and other.prov is not None
                                            and other.prov.origin == "nn.Parameter"
                                            for method in builders for other in in_methods.get(method.scope, ()))


def _not_plain(prov) -> bool:
    """A Parameter, a module, or a value the walk could not type (unknown: silence), not a tensor computed from one."""
    return prov is None or prov.kind is not Kind.TENSOR or prov.origin == "nn.Parameter"


def _placeholder(value: ast.AST | None) -> bool:
    """`torch.empty(0)`, `torch.zeros((0,))`, `torch.tensor([])`: a tensor with no elements, kept until the real one."""
    if not isinstance(value, ast.Call) or not value.args or isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Call):
        return False  # (`torch.arange(n).unsqueeze(0)`: a method's 0 is a dimension, not a size)
    first = value.args[0]
    if isinstance(first, (ast.Tuple, ast.List)):
        return not first.elts or any(isinstance(e, ast.Constant) and e.value == 0 for e in first.elts)
    return any(isinstance(a, ast.Constant) and a.value == 0 and not isinstance(a.value, bool) for a in value.args)


def _stand_in(cls: ClassInfo, attr: str, value: ast.AST | None, builders: list) -> bool:
    """`self.grid = torch.zeros(1)` that forward rebuilds under `if self.grid.shape[2:4] != x.shape[2:4]:`: a literal
    one-element tensor whose dimensions end before the slice its refresh compares, so the slice is empty, the test
    true, and the first use already sees the rebuilt tensor (YOLO's detection grid)."""
    if not isinstance(value, ast.Call) or value.keywords and any(kw.arg is None for kw in value.keywords):
        return False
    sizes = value.args[0].elts if len(value.args) == 1 and isinstance(value.args[0], (ast.Tuple, ast.List)) else value.args
    if not sizes or not all(isinstance(size, ast.Constant) and size.value in (0, 1) and not isinstance(size.value, bool) for size in sizes):
        return False
    for method in cls.methods.values():
        if method in builders:
            continue
        for node in ast.walk(method.node):
            if isinstance(node, ast.If) and _slices_past(node.test, attr, len(sizes)) and any(
                    _self_attribute(target, attr) for stmt in node.body if isinstance(stmt, ast.Assign) for target in stmt.targets):
                return True
    return False


def _slices_past(test: ast.AST, attr: str, dims: int) -> bool:
    """`self.<attr>.shape[k:...] != ...` with k at or past `dims`: a comparison of an empty slice of its shape."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.NotEq):
        return False
    for side in (test.left, *test.comparators):
        if isinstance(side, ast.Subscript) and isinstance(side.slice, ast.Slice) and isinstance(side.value, ast.Attribute) \
                and side.value.attr == "shape" and _self_attribute(side.value.value, attr):
            lower = side.slice.lower
            return isinstance(lower, ast.Constant) and isinstance(lower.value, int) and lower.value >= dims
    return False


def _placed_by_hand(attr: str, builders: list) -> bool:
    """The code that builds the module moves the tensor to a device itself (`if args.cuda: self.coords =
    self.coords.cuda()`): where it lives is the author's choice, made with the module's own, not a tensor `.to()` left
    behind unseen (the caller asks too that no code here converts the module to another dtype, which a hand-placed
    tensor misses all the same)."""
    return any(_moved_copy(node, attr) not in (None, "cpu", "type_as", "type")
               for method in builders for node in statements(method.node.body, (ast.Assign,)))


def _rebound_elsewhere(cls: ClassInfo, attr: str, builders: list, anywhere: bool = False) -> bool:
    """A method that does not build the module assigns `self.<attr>`, in its top-level block (on every call), a moved
    copy of itself (`self.mean = self.mean.type_as(x)` at the top of forward) or another value: the tensor a later use
    combines is then not provably the plain one __init__ made (under an `if`, the plain one is still used otherwise;
    `anywhere`: for a placeholder with no elements, which only a later value can make useful, an `if` is enough). An update from itself that keeps its device
    (`self.count = self.count + 1`) is still that tensor."""
    for method in cls.methods.values():
        if method in builders:
            continue
        derived: set = set()  # locals computed from self.<attr> (`new_mean = self.mean + delta / n`), in statement order
        for node in statements(method.node.body, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            if node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            inner = list(nodes(node.value))
            itself = any(_self_attribute(n, attr) or isinstance(n, ast.Name) and n.id in derived for n in inner)
            if any(_self_attribute(t, attr) for t in targets) and not isinstance(node, ast.AugAssign) and (anywhere or node in method.node.body):
                moved = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and uses.moves_device(n.func.attr) for n in inner)
                if moved or not itself:
                    return True
            elif itself:
                derived.update(n.id for t in targets for n in nodes(t) if isinstance(n, ast.Name))
    return False


def _self_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _self_attribute(node: ast.AST, attr: str) -> bool:
    """`self.<attr>`, or `getattr(self, <a name that may be attr>[, default])` (attr may be a family, `pos_embed{}`)."""
    if isinstance(node, ast.Attribute):
        return isinstance(node.value, ast.Name) and node.value.id == "self" and (node.attr == attr or "{}" in attr and _names_match(node.attr, attr))
    if (type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "getattr" and 2 <= len(node.args) <= 3
            and _self_name(node.args[0])):
        key = _attribute_key(node.args[1])
        return key is not None and _names_match(key, attr)
    return False


def _device_checked_first(use: ast.AST, attr: str, parents: dict) -> bool:
    """`if x.device != self.cache.device or not torch.equal(x, self.cache)`: the operand before the use compares the
    attribute's device, so the combination only runs when the devices match."""
    child, node = use, parents.get(use)
    while node is not None and not isinstance(node, ast.stmt):
        if isinstance(node, ast.BoolOp):
            for operand in node.values[:node.values.index(child)] if child in node.values else ():
                if any(isinstance(n, ast.Attribute) and n.attr == "device" and isinstance(n.value, ast.Attribute)
                       and n.value.attr == attr for n in nodes(operand)):
                    return True
        child, node = node, parents.get(node)
    return False


def _parents(function: ast.AST) -> dict:
    parents = {}
    stack = [function]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            parents[child] = node
            stack.append(child)
    return parents


def _constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))


def _combined(node: ast.AST, parents: dict, depth: int = 0, cls: ClassInfo | None = None, imports=None, classes=None,
              kept_dtype: bool = False) -> ast.AST | None:
    """Follow `self.x[...]`, `self.x.view(...)`, a local `h = self.x` up to where the value meets other values (or a layer of
    the module, whose weights move with it); None if it never does. `kept_dtype`: also past a move to a device only
    (`.to(x.device)`), which leaves the dtype (the module's is converted)."""
    parent = parents.get(node)
    if parent is None or depth > 8:
        return None
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        alias = parent.targets[0].id
        # (up to the next assignment of the name: `words = words.to(device)` makes what later lines read a moved copy)
        rebound = min((other.lineno for other in parents if isinstance(other, ast.Name) and other.id == alias
                       and isinstance(other.ctx, ast.Store) and other.lineno > parent.lineno), default=None)
        for other in parents:
            if (isinstance(other, ast.Name) and other.id == alias and isinstance(other.ctx, ast.Load) and other.lineno >= parent.lineno
                    and (rebound is None or other.lineno <= rebound)):
                use = _combined(other, parents, depth + 1, cls, imports, classes, kept_dtype)
                if use is not None:
                    return use
        return None
    if isinstance(parent, ast.Call) and node in parent.args and cls is not None and _own_layer(cls, parent.func):
        return parent  # self.proj(self.x): meets the layer's parameters
    if isinstance(parent, ast.Attribute) and parent.value is node:
        grand = parents.get(parent)
        if kept_dtype and isinstance(grand, ast.Call) and grand.func is parent and _device_only(grand):
            return _combined(grand, parents, depth + 1, cls, imports, classes, kept_dtype)  # `.to(x.device)`: still its dtype
        if not kept_dtype and isinstance(grand, ast.Call) and grand.func is parent and _to_dtype(imports, grand):
            return _combined(grand, parents, depth + 1, cls, imports, classes, kept_dtype)  # `.to(x.dtype)`: still its device
        if uses.moves_device(parent.attr) or _inspects(parent.attr):
            return None
        if isinstance(grand, ast.Call) and grand.func is parent:
            if _keeps_device(parent.attr) and (api.one_tensor(parent.attr) or all(_not_tensor(a, cls) for a in grand.args)):
                return _combined(grand, parents, depth + 1, cls, imports, classes, kept_dtype)  # self.x.repeat(h.shape[1], 1)
            others = [a for a in [*grand.args, *(k.value for k in grand.keywords)] if not _not_tensor(a, cls)]
            return grand if others else None  # self.x.mul(y): combined with y
        return None
    if isinstance(parent, ast.Subscript):
        if parent.value is node:
            if _tensor_argument_index(cls, parent):
                return parent  # self.table[steps] of a tensor the callers pass: an index on their device
            return _combined(parent, parents, depth + 1, cls, imports, classes, kept_dtype)  # self.x[:, None]
        return None  # used as an index: CPU index tensors work on any device
    if isinstance(parent, ast.BinOp):
        other = parent.right if parent.left is node else parent.left
        if _constant(other) or _beside(other, cls, imports, parents):
            return _combined(parent, parents, depth + 1, cls, imports, classes, kept_dtype)
        return parent
    if isinstance(parent, ast.Compare):
        operands = [parent.left, *parent.comparators]
        if any(not _constant(o) for o in operands if o is not node):
            return parent
        # `self.mask[:T, :T] == 0`: a boolean tensor where the attribute is, used further on
        return _combined(parent, parents, depth + 1, cls, imports, classes, kept_dtype) if len(operands) == 2 else None
    if isinstance(parent, (ast.List, ast.Tuple)):
        grand = parents.get(parent)
        if isinstance(grand, ast.Call) and imports is not None and imports.qualname(grand.func) in api.SIZE_CLASSES:
            return None  # `torch.Size([dim, self.n, 2])`: a size, on no device
        if isinstance(grand, ast.Call) and parent in grand.args and not _moves_or_inspects(grand) and not _extension_call(grand, imports):
            others = [e for e in parent.elts if e is not node and not _constant(e)] + [a for a in grand.args if a is not parent and not _constant(a)]
            if others and all(_beside(e, cls, imports) for e in others):
                return _combined(grand, parents, depth + 1, cls, imports, classes, kept_dtype)  # torch.cat([self.mu, self.sigma])
            return grand if others else None  # torch.cat([x, self.x])
        return None
    if isinstance(parent, ast.Call) and node in parent.args:
        if _moves_or_inspects(parent) or _extension_call(parent, imports):
            return None
        qualname = imports.qualname(parent.func) if imports is not None else None
        if qualname in api.TENSOR_WRAPPERS:
            return _combined(parent, parents, depth + 1, cls, imports, classes, kept_dtype)  # nn.Parameter(self.x * 2, requires_grad=flag)
        if qualname is not None and qualname.rpartition(".")[0] in api.MATH_MODULES and api.one_tensor(qualname.rpartition(".")[2]):
            return _combined(parent, parents, depth + 1, cls, imports, classes, kept_dtype)  # torch.multinomial(self.probs, k): alone, so far
        forward = _function_forward(parent, node, classes)
        if forward is not None:
            return _combined_in_forward(forward, parent.args.index(node) + 1, depth, imports, classes)
        if qualname is None and cls is not None and _unknown_callee(cls, parent.func):
            return None  # `self.model(x, self.t_span)` of a module handed in: what it does with the tensor is unknown
        others = [a for a in [*parent.args, *(k.value for k in parent.keywords)] if a is not node and not _not_tensor(a, cls)]
        func = parent.func
        if qualname is None and isinstance(func, ast.Attribute) and api.is_op(func.attr) and func.attr not in api.SHAPE_OPERANDS \
                and not _self_name(func.value) and not _not_tensor(func.value, cls):
            others.append(func.value)  # `scores.masked_fill(self.mask == 0, -inf)`: the tensor the op is called on
        if others and all(_beside(a, cls, imports, parents) if isinstance(a, ast.Name) else _made_on_default_device(a, imports)
                          for a in others):
            return _combined(parent, parents, depth + 1, cls, imports, classes, kept_dtype)  # torch.outer(t, self.inv_freq)
        return parent if others else None  # F.conv2d(x, self.kernel), torch.matmul(x, self.P)
    if isinstance(parent, ast.keyword):
        call = parents.get(parent)
        if isinstance(call, ast.Call) and imports is not None and imports.qualname(call.func) in api.TENSOR_WRAPPERS:
            return _combined(call, parents, depth + 1, cls, imports, classes, kept_dtype)  # nn.Parameter(data=self.x * 2)
        if isinstance(call, ast.Call) and not _moves_or_inspects(call) and not _extension_call(call, imports):
            others = [a for a in [*call.args, *(k.value for k in call.keywords)] if a is not node and not _constant(a)]
            return call if others else None
    return None


def _tensor_argument_index(cls: ClassInfo | None, subscript: ast.Subscript) -> bool:
    """`[steps]` where `steps` is a parameter of the method and every call of the method in this module (one at least)
    passes there a tensor this code made (not one it was itself given)."""
    model = _MODELS.get(id(cls.node)) if cls is not None else None
    index = subscript.slice
    if model is None or type(index) is not ast.Name:
        return False
    method = next((m for m in cls.methods.values() if m.node.lineno <= subscript.lineno <= m.node.end_lineno), None)
    if method is None or method.name == "__init__":
        return False
    arguments = method.node.args
    if arguments.vararg is not None or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.node.decorator_list):
        return False
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)][1:]  # (self)
    if index.id not in names:
        return False
    position, callers = names.index(index.id), model.callers(method)
    if not callers:
        return False
    for event in callers:
        call = event.node
        if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return False
        given = call.args[position] if position < len(call.args) else next((k.value for k in call.keywords if k.arg == index.id), None)
        prov = model.prov(given) if given is not None else None
        if prov is None or prov.kind is not Kind.TENSOR or prov.origin == "param":
            return False
    return True


def _function_forward(call: ast.Call, node: ast.AST, classes) -> ast.FunctionDef | None:
    """`Fn.apply(x, self.magic)` of a class of this file that is not a module and has a static `forward(ctx, ...)` (an
    autograd Function): that forward, when each positional argument lands on a named parameter."""
    func = call.func
    if classes is None or not (isinstance(func, ast.Attribute) and func.attr == "apply" and isinstance(func.value, ast.Name)):
        return None
    cls = classes.get(func.value.id)
    forward = cls.methods.get("forward") if cls is not None and not cls.is_module else None
    if forward is None or not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in forward.node.decorator_list):
        return None
    arguments = forward.node.args
    if any(isinstance(arg, ast.Starred) for arg in call.args) or call.keywords or arguments.vararg is not None \
            or len(call.args) + 1 > len(arguments.posonlyargs) + len(arguments.args):
        return None
    return forward.node


def _combined_in_forward(forward: ast.FunctionDef, index: int, depth: int, imports, classes) -> ast.AST | None:
    """Where the Function's forward combines its parameter `index` with other tensors: the tensor handed to `apply` meets
    them there or nowhere (`ctx.save_for_backward(..., p)`, `ctx.p = p`, a compiled kernel's argument are no meeting)."""
    params = [*forward.args.posonlyargs, *forward.args.args]
    ctx, name = params[0].arg, params[index].arg
    parents = _parents(forward)
    for node, parent in parents.items():
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and isinstance(parent.func.value, ast.Name) \
                and parent.func.value.id == ctx:
            continue  # ctx.save_for_backward(x, p), ctx.mark_non_differentiable(p): kept for backward, not computed with
        use = _combined(node, parents, depth + 1, None, imports, classes)
        if use is not None:
            return use
    return None


def _not_tensor(node: ast.AST, cls: ClassInfo | None) -> bool:
    """An argument that cannot be a tensor on some device: a constant, a size (`x.shape[1]`, `x.size(0)`, `len(xs)`,
    `.item()`), a number attribute of the module (`self.context_len = 3`), or arithmetic on those."""
    if _constant(node):
        return True
    if isinstance(node, ast.BinOp):
        return _not_tensor(node.left, cls) and _not_tensor(node.right, cls)
    if isinstance(node, ast.IfExp):
        return _not_tensor(node.body, cls) and _not_tensor(node.orelse, cls)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else None)
        return name in uses.INT_RESULTS
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and cls is not None:
        held = cls.attribute(node.attr)
        return held is not None and held.kind is Kind.NUMBER
    return False


def _own_layer(cls: ClassInfo, func: ast.AST) -> bool:
    """`self.<name>` is a layer of this module with parameters (a torch.nn layer that has some, or a user module)."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return False
    prov = cls.attributes.get(func.attr)
    if prov is None or prov.kind is not Kind.MODULE:
        return False
    layer = prov.module_class
    if isinstance(layer, str):
        return api.layer_parameters(layer.rsplit(".", 1)[-1]) != ()
    return isinstance(layer, ClassInfo) and layer.is_module


def _unknown_callee(cls: ClassInfo, func: ast.AST) -> bool:
    """`self.<name>(...)` (`self.<name>.<method>(...)`) of no method of the class and no module whose class is known (a model handed to `__init__`,
    one built by another library): it may move what it is given to its own device (torchdyn's solvers do), or use it
    as a number."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) and not api.is_op(func.attr):
        func = func.value  # `self.model.odeint(x, self.t_span)`: a method of that object
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self") or func.attr in cls.methods:
        return False
    prov = cls.attributes.get(func.attr)
    return prov is None or prov.origin == "param" or prov.kind is Kind.MODULE and prov.module_class is None


def _extension_call(call: ast.Call, imports) -> bool:
    """`bnp.bn_fwd_nhwc(x, ..., self.magic)`, `add_boundary_tokens(x, self.bos)`: a function imported from outside torch
    and this workspace's relative imports (a compiled extension, another library): what it does with each tensor, and
    on which device it wants it, is unknown."""
    func = call.func
    if imports is None or not isinstance(func, (ast.Attribute, ast.Name)):
        return False
    qualname = imports.qualname(func)
    return qualname is not None and not imports.is_torch(qualname) and qualname.split(".", 1)[0] not in imports.relative


def _moves_or_inspects(call: ast.Call) -> bool:
    """`torch.as_tensor(self.x, device=d)`, `self.x.to(...)`, `print(..., self.x)`, `OrderedDict(mean=self.x)`: no device
    mismatch can come of it."""
    if any(kw.arg == "device" for kw in call.keywords):
        return True
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else None)
    return (uses.is_reporter(name) or name in uses.COPIERS or name in uses.CHECKERS or name in uses.CONTAINERS or name in api.MODULE_REGISTRARS
            or (name is not None and uses.moves_device(name)))


def _keeps_device(method: str) -> bool:
    """A method whose result stays where the tensor is (a chain of them after a factory keeps it a plain tensor)."""
    return not uses.moves_device(method) and (api.is_op(method) or uses.keeps_values(method) or uses.is_conversion(method)
                                              or method in ("detach", "detach_"))


def _inspects(attr: str) -> bool:
    """Metadata, Python values and overwrites (`self.x.fill_(0)`): no device problem."""
    return uses.is_metadata(attr) or uses.to_python(attr) or uses.writes_without_reading(attr)


def _finding(model: ModuleModel, cls: ClassInfo, bind: BindEvent, attr: str, use: ast.AST, derived: bool = False,
             conversion: ast.Call | None = None, bypass: ast.Call | None = None):
    value_text = model.text(bind.value)
    setattr_call = isinstance(bind.target, ast.Call)  # `setattr(self, name, value)`
    shown = attr.replace("{}", "{…}")
    if conversion is not None or bypass is not None or setattr_call:
        name_text = model.text(bind.target.args[1]) if setattr_call else f'"{attr}"'
        if bypass is not None:
            message = (f"`self.{shown}` is a plain tensor attribute of the module `{cls.name}`, which moves it by hand in its own "
                       f"`to()`: `{' '.join(model.text(bypass).split())[:40]}` at line {bypass.lineno} reaches it through "
                       f"`nn.Module._apply`, which never calls that `to()`, so it stays where and as it was (and `state_dict()` "
                       f"does not save it), yet it is combined with the module's tensors at line {use.lineno}. Register it with "
                       f"`self.register_buffer({name_text}, ...)`: buffers follow every conversion")
        elif conversion is not None:
            message = (f"`self.{shown}` is a plain floating tensor attribute of the module `{cls.name}`: "
                       f"`{' '.join(model.text(conversion).split())[:40]}` at line {conversion.lineno} converts the module's weights "
                       f"and buffers but not it, and at line {use.lineno} it is only moved to a device, so it meets them in its "
                       f"old dtype. Register it with `self.register_buffer({name_text}, ...)`")
        else:
            message = (f"`self.{shown}` is a plain tensor attribute of the module `{cls.name}`: `.to(device)`/`.cuda()` will not "
                       f"move it and `state_dict()` will not save it, yet it is combined with other tensors at line {use.lineno}. "
                       f"Register it with `self.register_buffer({name_text}, ...)`")
        fixes = []
        if setattr_call and edits.own_line(model, bind.node):
            span = model.span(bind.target)
            fixes.append(Fix(f"Register as a buffer: `self.register_buffer({name_text}, ...)`", Safety.UNSAFE,
                             (Edit(span, f"self.register_buffer({name_text}, {value_text})"),)))
            fixes.append(Fix("Register as a non-persistent buffer (not saved in `state_dict()`)", Safety.UNSAFE,
                             (Edit(span, f"self.register_buffer({name_text}, {value_text}, persistent=False)"),)))
        elif isinstance(bind.node, ast.Assign) and len(bind.node.targets) == 1 and bind.node.targets[0] is bind.target \
                and edits.own_line(model, bind.node):
            span = model.span(bind.node)
            fixes.append(Fix(f"Register as a buffer: `self.register_buffer(\"{attr}\", ...)`", Safety.UNSAFE,
                             (Edit(span, f'self.register_buffer("{attr}", {value_text})'),)))
        return model.finding(RULE, bind.target, message, fixes=fixes, related=[(use, f"`self.{shown}` used here")],
                             attribute=attr, module=cls.name)
    if derived:  # (no fix of its own: registering here while the first assignment stays a plain attribute raises KeyError)
        message = (f"`self.{attr}` stays a plain tensor attribute of the module `{cls.name}` here (`{' '.join(value_text.split())[:50]}` "
                   f"keeps it where it is): `.to(device)`/`.cuda()` will not move it and `state_dict()` will not save it, yet it "
                   f"is combined with other tensors at line {use.lineno}. Register the final value with "
                   f"`self.register_buffer(\"{attr}\", ...)`")
        return model.finding(RULE, bind.target, message, related=[(use, f"`self.{attr}` combined with other tensors here")],
                             attribute=attr, module=cls.name)
    trainable = bind.prov is not None and bind.prov.requires_grad is True
    if trainable:
        message = (f"`self.{attr}` requires grad but is a plain tensor attribute of the module `{cls.name}`, not an `nn.Parameter`: "
                   f"`parameters()` (so the optimizer), `.to(device)` and `state_dict()` all miss it, yet it is used at line {use.lineno}. "
                   f"Wrap it in `nn.Parameter(...)`")
    else:
        message = (f"`self.{attr}` is a plain tensor attribute of the module `{cls.name}`: `.to(device)`/`.cuda()` will not move it and "
                   f"`state_dict()` will not save it, yet it is combined with other tensors at line {use.lineno}. "
                   f"Register it with `self.register_buffer(\"{attr}\", ...)`")
    fixes = []
    statement = bind.node
    simple = (isinstance(statement, (ast.Assign, ast.AnnAssign)) and (getattr(statement, "targets", [None])[0] is bind.target or
                                                                       getattr(statement, "target", None) is bind.target)
              and (not isinstance(statement, ast.Assign) or len(statement.targets) == 1) and edits.own_line(model, statement))
    if simple and trainable:
        torch = model.imports.torch_alias
        nn = next((local for local, qualname in model.imports.names.items() if qualname == "torch.nn"), None)
        wrapper = f"{nn}.Parameter" if nn else (f"{torch}.nn.Parameter" if torch else None)
        if wrapper:
            fixes.append(Fix(f"Make it a parameter: `{wrapper}(...)`", Safety.UNSAFE, (Edit(model.span(bind.value), f"{wrapper}({value_text})"),)))
    elif simple:
        span = model.span(statement)
        fixes.append(Fix(f"Register as a buffer: `self.register_buffer(\"{attr}\", ...)`", Safety.UNSAFE,
                         (Edit(span, f'self.register_buffer("{attr}", {value_text})'),)))
        fixes.append(Fix(f"Register as a non-persistent buffer (not saved in `state_dict()`)", Safety.UNSAFE,
                         (Edit(span, f'self.register_buffer("{attr}", {value_text}, persistent=False)'),)))
    return model.finding(RULE, bind.target, message, fixes=fixes, related=[(use, f"`self.{attr}` combined with other tensors here")],
                         attribute=attr, module=cls.name)
