"""What one call site passes to a function, for walking its body with those values (Walker.call_in_context).

A function's body is first summarised once with symbolic parameters. A call whose arguments carry facts the
summary cannot know (a leaf that requires grad, an integer tensor, a module, an optimizer) has the body walked
again with them, so that what the helper does to its arguments is judged where it happens. Walks are memoised
by `facts()` of the arguments: the fields rules read, never positions or graph ids, so two calls passing the
same kind of value share one walk.
"""
from __future__ import annotations

import ast
import re

from .provenance import Kind, Provenance
from .syntax import nodes

TUPLE = "tuple display"  # a SEQUENCE's origin: exactly these elements in this order (no starred part, never appended to)
MAX_DEPTH = 5  # nested call sites walked with their arguments (a helper calling a helper calling a helper)
MAX_WALKS = 400  # per module: beyond, calls fall back to the symbolic summary (instantiate)


def informative(prov: Provenance | None) -> bool:
    """The value tells a body more than a symbolic parameter would."""
    if prov is None:
        return False
    kind = prov.kind
    if kind is Kind.TENSOR:
        return (prov.leaf is not None or prov.requires_grad is not None or prov.dtype is not None or bool(prov.composed_from)
                or prov.saved_by is not None or prov.uninitialised)
    if kind in (Kind.OPTIMIZER, Kind.PARAMS):
        return True
    if kind is Kind.MODULE:
        return prov.module_class is not None
    if kind is Kind.SEQUENCE:
        return any(informative(element) for element in prov.elements)
    return kind is Kind.FUNCTION and prov.module_class is not None  # (which function the body calls)


def worth_walking(function, provs) -> bool:
    """Some argument tells the body something. An nn.Module's constructor is told only by tensors: modules passed to
    modules (`Block(norm=nn.LayerNorm(d))`) are how libraries compose layers, and knowing them finds no bug. A string
    tells the constructor of a class passing `reduction=self.<attr>` what its forward reduces (`Loss(reduction="none")`), and
    one testing `self.<attr> == "..."` which branch its methods take."""
    if function is not None and function.name == "__init__" and function.cls is not None:
        if any(prov is not None and prov.kind is Kind.TEXT for prov in provs) and (_keeps_reduction(function.cls) or _tests_text(function.cls)):
            return True
        if function.cls.is_module:
            return any(_tensor_facts(prov) for prov in provs)
    return any(informative(prov) for prov in provs)


def _keeps_reduction(cls) -> bool:
    """A class whose methods pass `reduction=self.<attr>` to a loss: the string its constructor is given decides what
    its forward reduces (found once per class, from its tree)."""
    found = cls.__dict__.get("_keeps_reduction")
    if found is None:
        found = cls._keeps_reduction = any(
            type(node) is ast.keyword and node.arg == "reduction" and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name) and node.value.value.id == "self" for node in nodes(cls.node))
    return found


_DIM_KEYWORDS = frozenset({"dim", "dims", "start_dim", "end_dim"})
_DIM_OF_SELF = re.compile(r"dims?\s*=\s*-?\s*self\s*\.")


def _class_text(function, cls) -> str:
    model = getattr(function.owner, "model", None)
    if model is None:
        return "dim=self."  # (no text to search: the tree is)
    return "\n".join(model.source.lines[cls.node.lineno - 1:cls.node.end_lineno or cls.node.lineno])


def keeps_dims(function) -> bool:
    """The constructor of a plain class (a loss or metric helper) whose methods pass `dim=self.<attr>` (or
    `start_dim=-self.<attr>`) to an op: the integers it is given decide what its calls reduce (`LpLoss(d=2)`)."""
    cls = function.cls if function is not None and function.name == "__init__" else None
    if cls is None or cls.is_module:
        return False
    found = cls.__dict__.get("_keeps_dims")
    if found is None and not _DIM_OF_SELF.search(_class_text(function, cls)):
        found = cls._keeps_dims = False  # (the class's text names no `dim=self.`: most classes, no walk of their tree)
    if found is None:
        attrs = {value.attr for node in nodes(cls.node) if type(node) is ast.keyword and node.arg in _DIM_KEYWORDS
                 for value in [node.value.operand if type(node.value) is ast.UnaryOp else node.value] if _self_attribute(value)}
        found = cls._keeps_dims = bool(attrs) and not dims_changed(function, attrs)
    return found


def dims_changed(init, attrs: set) -> bool:
    """Those attributes may hold other values than the constructor gave them: stored anywhere in the module but by
    the constructor's own `self.<attr> = ...` (`crit.dim = (0, 1)`, a helper's `loss_fn.dim = ...`, another method's
    `self.dim = ...`), or the module sets attributes by name (`setattr`, `__dict__`, `vars()`)."""
    model = getattr(init.owner, "model", None)
    if model is None:
        return True
    stores = model.__dict__.get("_attribute_stores")
    if stores is None:  # (once per module, from its text: attribute name -> (line, stored on `self`) of each store)
        stores = model.__dict__["_attribute_stores"] = {}
        text = model.source.text
        if "setattr(" in text or "__dict__" in text or "vars(" in text:
            stores[None] = True
        line, at = 1, 0
        for match in _ATTRIBUTE_STORE.finditer(text):
            start = match.start()
            line += text.count("\n", at, start)  # (counted from the last match on: one pass over the text)
            at = start
            on_self = text[max(start - 4, 0):start] == "self" and (start < 5 or not (text[start - 5].isalnum() or text[start - 5] == "_"))
            stores.setdefault(match.group(1), []).append((line, on_self))
        if "del " in text:
            for match in _ATTRIBUTE_DELETE.finditer(text):
                stores.setdefault(match.group(1), []).append((0, False))
    if None in stores:
        return True
    first, last = init.node.lineno, init.node.end_lineno or init.node.lineno
    return any(not (on_self and first <= line <= last) for attr in attrs for line, on_self in stores.get(attr, ()))


# `x.attr = ...`, `x.attr += ...`, `x.attr, y = ...`; `del x.attr`. A text search: strings and comments that look like
# stores only make the answer more careful
_ATTRIBUTE_STORE = re.compile(r"\.[ \t]*(\w+)[ \t]*(?:(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)|,[^\n=]*=(?!=))")
_ATTRIBUTE_DELETE = re.compile(r"\bdel\s+[\w.]*\.(\w+)")


def _self_attribute(node) -> bool:
    return type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self"


def _tests_text(cls) -> bool:
    """A class whose methods test `self.<attr> == "..."`: the string its constructor is given picks a branch (`if
    self.model == "byol":`), found once per class."""
    found = cls.__dict__.get("_tests_text")
    if found is None:
        found = cls._tests_text = any(
            type(node) is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in (ast.Eq, ast.NotEq)
            and type(node.left) is ast.Attribute and type(node.left.value) is ast.Name and node.left.value.id == "self"
            and type(node.comparators[0]) is ast.Constant and isinstance(node.comparators[0].value, str) for node in nodes(cls.node))
    return found


def _tensor_facts(prov) -> bool:
    if prov is not None and prov.kind is Kind.SEQUENCE:
        return any(_tensor_facts(element) for element in prov.elements)
    return prov is not None and prov.kind is Kind.TENSOR and informative(prov)


def facts(prov: Provenance | None):
    """A hashable abstraction of what rules read from a value passed in."""
    if prov is None:
        return None
    kind = prov.kind
    if kind is Kind.TENSOR:
        return (kind, prov.leaf, prov.requires_grad, prov.dtype, prov.composed_from, prov.no_grad, prov.scalar, prov.saved_by,
                id(prov.saved_node) if prov.saved_node is not None else None, prov.nondiff, prov.detached, prov.uninitialised,
                prov.param_deps, prov.cut_deps, prov.data_of, prov.origin == "param", bool(prov.graph))
    if kind is Kind.MODULE:
        return (kind, id(prov.module_class) if not isinstance(prov.module_class, str) else prov.module_class, prov.params)
    if kind in (Kind.OPTIMIZER, Kind.PARAMS):
        return (kind, prov.params, prov.origin)
    if kind is Kind.SEQUENCE:
        return (kind, tuple(facts(element) for element in prov.elements), tuple(facts(layer) for layer in prov.tail))
    if kind is Kind.FUNCTION:
        return (kind, id(prov.module_class))  # (which function: what calling it makes)
    if kind is Kind.MAPPING:
        return (kind, prov.keys, tuple(facts(element) for element in prov.elements))  # (what each key gives a body)
    # (a number's value sizes the tensors the body makes from it; a flag's truth decides its `if`s)
    return (kind, prov.dtype, prov.value, prov.text, prov.truth, prov.counter)


def shapes_of(prov: Provenance | None, depth: int = 0):
    """The shapes a value passed in carries (a tensor's, a sequence's elements'): part of the memo key of a walk made
    for the shape it returns."""
    if prov is None or depth > 3:
        return None
    if prov.kind is Kind.SEQUENCE:
        return tuple(shapes_of(element, depth + 1) for element in prov.elements)
    return prov.shape if prov.kind is Kind.TENSOR else None


def unshaped(prov: Provenance | None, depth: int = 0) -> Provenance | None:
    """The value without its shapes: what a walk memoised without them may be made with (calls passing tensors of
    different shapes and the same facts share it)."""
    if prov is None or depth > 3:
        return prov
    if prov.kind is Kind.TENSOR:
        return prov.but(shape=None) if prov.shape is not None else prov
    if prov.kind is Kind.SEQUENCE and prov.elements:
        elements = tuple(unshaped(element, depth + 1) for element in prov.elements)
        return prov.but(elements=elements) if any(a is not b for a, b in zip(elements, prov.elements)) else prov
    return prov


class Expanded(dict):
    """Keyword provenances of a call whose `**mapping` arguments were dicts of known keys, spread into their keys."""


def bind_arguments(function: ast.FunctionDef | ast.AsyncFunctionDef, skip_first: bool, call: ast.Call, arg_provs: list,
                   keyword_provs: dict) -> dict | None:
    """parameter name -> what this call passes (None: unknown, e.g. a default); None when the call cannot be
    matched to the parameters (`*args`, `**kwargs` at the call, too many arguments)."""
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        arg_provs = spread(call, arg_provs)
        if arg_provs is None:
            return None
    if any(kw.arg is None for kw in call.keywords) and not isinstance(keyword_provs, Expanded):
        return None
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    if skip_first:
        positional = positional[1:]
    bound: dict = {}
    for index, prov in enumerate(arg_provs):
        if index < len(positional):
            bound[positional[index].arg] = prov
        elif args.vararg is None:
            return None
    if args.vararg is not None:  # `def take(*xs)`: the tuple of what the call passes past the named parameters
        bound[args.vararg.arg] = Provenance(Kind.SEQUENCE, call.lineno, elements=tuple(arg_provs[len(positional):]), origin=TUPLE)
    names = {arg.arg for arg in [*positional, *args.kwonlyargs]}
    for name, prov in keyword_provs.items():
        if name in names:
            bound[name] = prov
        elif args.kwarg is None:
            return None
    for arg in [*positional, *args.kwonlyargs]:
        bound.setdefault(arg.arg, None)
    return bound


def spread(call: ast.Call, arg_provs: list) -> list | None:
    """The arguments with each `*t` spread into its elements, where `t` is a tuple of known elements (`f(x, *net(x))`
    of a forward returning `y, mu`); None when one is not."""
    out = []
    for arg, prov in zip(call.args, arg_provs):
        if not isinstance(arg, ast.Starred):
            out.append(prov)
        elif prov is not None and prov.kind is Kind.SEQUENCE and prov.origin == TUPLE and prov.elements:
            out.extend(prov.elements)
        else:
            return None
    return out


def argument_for(call, names: set) -> ast.expr | None:
    """The argument of `call` that lands on one of the parameters `names` of the function it calls (None: not one,
    or the function it calls is not known)."""
    if call.function is None:
        return None  # (model.callers of a function also lists calls whose callee the walk left unknown at that call)
    node = call.function.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(isinstance(a, ast.Starred) for a in call.node.args):
        return None
    params = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    constructs = node.name == "__init__" and not (isinstance(call.node.func, ast.Attribute) and call.node.func.attr == "__init__")
    if call.function.cls is not None and (call.receiver is not None or constructs) and params and \
            not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
        params = params[1:]
    passed = dict(zip(params, call.node.args))
    passed.update({k.arg: k.value for k in call.node.keywords if k.arg is not None})
    found = [passed[name] for name in params + [a.arg for a in node.args.kwonlyargs] if name in names and name in passed]
    return found[0] if len(found) == 1 else None
