"""What a name holds: a tensor's provenance, or the few non-tensor things rules care about (modules, optimizers)."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Iterable

from . import shapes


class _Kind:
    """One kind of value: a singleton compared with `is`. Not an enum.Enum member: reading `Kind.TENSOR` from an Enum
    class costs ~8x a plain class attribute on CPython 3.11, and the walk reads kinds millions of times per run."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: str):
        self.name, self.value = name, value

    def __repr__(self) -> str:
        return f"<Kind.{self.name}>"

    def __reduce__(self):
        return getattr, (Kind, self.name)  # (the same singleton after pickling)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Kind:
    TENSOR = _Kind("TENSOR", "tensor")
    NUMBER = _Kind("NUMBER", "number")  # a Python int/float/bool literal or arithmetic on them
    MODULE = _Kind("MODULE", "module")  # an nn.Module instance (user class or torch.nn layer)
    OPTIMIZER = _Kind("OPTIMIZER", "optimizer")
    PARAMS = _Kind("PARAMS", "params")  # model.parameters(), a list of parameters
    SEQUENCE = _Kind("SEQUENCE", "sequence")  # a tuple/list literal whose elements we know
    # a dict display: `elements` are its values, `keys` their string keys (None: not a literal)
    MAPPING = _Kind("MAPPING", "mapping")
    TEXT = _Kind("TEXT", "text")  # a str literal bound to a name (`reduction = "none"`), its value in `text`
    # a def of the module or a lambda, passed as a value: `module_class` is its FunctionInfo / ast.Lambda
    FUNCTION = _Kind("FUNCTION", "function")


# The walk makes ~0.3 provenances per line of code. A frozen dataclass's generated __init__ sets every field through
# object.__setattr__ (and dataclasses.replace rebuilds every field by keyword): most of the cost of making one. Here an
# instance's dict is filled from one dict of the defaults, in the fields' order, then with what it was given: every
# field is read from the instance (a field left to the class attribute made the reads unspecialisable on CPython
# 3.11: -0.8% instructions), and `but()` copies a dict. Equality, hashing and repr are still the dataclass's.
@dataclass(frozen=True, init=False)
class Provenance:
    kind: Kind
    line: int = 0
    leaf: bool | None = None
    requires_grad: bool | None = None
    dtype: str | None = None  # "float" | "int" | None (unknown)
    composed_from: frozenset = frozenset()  # labels of the trainable leaves this tensor was built from
    no_grad: bool = False  # created under torch.no_grad()/inference_mode()
    loop: object | None = None  # the innermost Loop it was created in (None: outside every loop)
    epoch: int = 0  # optimizer steps seen in its scope before it was created
    origin: str = ""  # the operation that made it ("torch.tensor", "nn.Parameter", "torch.stack", "model(...)")
    graph: frozenset = frozenset()  # ids of the forward computations its autograd graph contains
    scalar: bool | None = None  # known 0-dim / one-element result
    shape: tuple | None = None  # its dims as far as known (analysis/shapes.py): each an int or None; None: rank unknown
    saved_by: str | None = None  # op that saved this tensor for backward (its output or input)
    saved_node: object | None = None  # the ast node of that op: its id is in the graph of every loss computed through it
    nondiff: str | None = None  # non-differentiable op that cut the graph on the way here
    data_of: str | None = None  # label of the tensor whose storage `.data`/`.detach()` shares
    detached: bool = False
    module_class: object | None = None  # ClassInfo for user modules, a qualified name for torch.nn layers
    params: frozenset = frozenset()  # optimizer: labels of the parameters it updates (empty: unknown)
    elements: tuple = ()  # SEQUENCE: element provenances (None for unknown ones)
    param_deps: frozenset = frozenset()  # inside a function summary: indexes of the parameters it depends on
    # inside a function summary: those of param_deps it depends on only through a graph cut (`.detach()`, `.data`, no_grad,
    # a comparison): a call site's argument there gives it values, never its graph
    cut_deps: frozenset = frozenset()
    # inside a function summary: ids of the parameters (ast.arg nodes) it has at least as many elements as (an
    # elementwise or broadcast result, a reshape, a gather by that index): a call passing a wide tensor there gets a
    # wide result. (Ids, not positions: a value stored on `self` by one method is not another method's parameter.)
    as_large_as: frozenset = frozenset()
    uninitialised: bool = False  # torch.empty(...) / torch.Tensor(n): values not written yet
    node: object | None = None  # the ast node that created it (for related locations)
    base: object | None = None  # a view's base (`w` for `w[0]`, `w.t()`): the tensor an in-place change of the view writes
    value: int | None = None  # NUMBER: the integer a name was bound to (`batch_size = 32`), for sizes; a torch.nn layer: its width when built with such a name
    keys: tuple = ()  # MAPPING: the key of each element, in order
    # TEXT: the string; a torch.nn loss MODULE: its `reduction=` when given as a name bound to a string (the module is
    # called where that name is not visible: `self.criterion = nn.CrossEntropyLoss(reduction=reduction)` in __init__)
    text: str | None = None
    truth: bool | None = None  # NUMBER: a `True`/`False` literal (passed, or a default), which an `if` on it takes or not
    counter: range | None = None  # NUMBER: a builtin range loop's counter, the values it runs through (`x[i:i + 64]`)
    # SEQUENCE: a layer list whose first items are not known (an optional layer appended on one branch): the layers
    # appended after that, in order, which end the list (None for one not known). Only the neighbours it lists are known.
    # MODULE (an nn.Sequential): its last layer when that is not its last argument (`*layers`), or (None,) when the
    # container is changed where the walk may not follow and its last layer is not known.
    tail: tuple = ()
    # MODULE (a torch container): ids of the `append`/`add_module` calls the walk applied to its layers; one elsewhere,
    # which it did not, leaves its end unknown
    grown: frozenset = frozenset()

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    @property
    def is_trainable_leaf(self) -> bool:
        return self.kind is Kind.TENSOR and self.leaf is True and self.requires_grad is True

    @property
    def kept_for_backward(self) -> bool:
        """Some op's backward keeps this tensor (its result, or one of its inputs): the walk marks it only where torch's
        derivatives.yaml says so for the operands' requires-grad flags (`saved_by`, `saved_node`)."""
        return self.kind is Kind.TENSOR and self.saved_by is not None and self.saved_node is not None

    @property
    def has_graph(self) -> bool:
        """A non-leaf that requires grad: autograd recorded how it was made."""
        return self.kind is Kind.TENSOR and self.leaf is False and self.requires_grad is True

    def __init__(self, kind: Kind, line: int = 0, **values) -> None:
        state = self.__dict__
        state.update(_DEFAULTS)
        state["kind"] = kind
        state["line"] = line
        if values:
            if not _FIELDS.issuperset(values):
                raise TypeError(f"Provenance has no field {sorted(set(values) - _FIELDS)}")
            state.update(values)

    def but(self, **changes) -> "Provenance":
        """A copy with some fields changed (dataclasses.replace, without rebuilding the unchanged ones)."""
        if not _FIELDS.issuperset(changes):
            raise TypeError(f"Provenance has no field {sorted(set(changes) - _FIELDS)}")
        copy = object.__new__(Provenance)
        state = copy.__dict__
        state.update(self.__dict__)
        state.update(changes)
        return copy


_FIELDS = frozenset(f.name for f in fields(Provenance))
_DEFAULTS = {f.name: f.default for f in fields(Provenance) if f.name not in ("kind", "line")}


def flatten(provs: Iterable["Provenance | None"]) -> list["Provenance | None"]:
    out = []
    for prov in provs:
        if prov is not None and prov.kind is Kind.SEQUENCE:
            out.extend(flatten(prov.elements))
        else:
            out.append(prov)
    return out


def cut_of(provs: Iterable["Provenance | None"]) -> frozenset:
    """The parameters a value made from `provs` depends on only through cuts: cut in every one that depends on them."""
    provs = [p for p in provs if p is not None]
    cut = frozenset().union(*(p.cut_deps for p in provs))
    if not cut:
        return cut
    return cut - frozenset().union(*(p.param_deps - p.cut_deps for p in provs))


def merge(a: Provenance | None, b: Provenance | None) -> Provenance | None:
    """What a name holds after two branches: facts both agree on, unknown where they differ."""
    if a is None or b is None:
        return None
    if a is b or a == b:
        return a
    if a.kind is not b.kind:
        return None
    same = lambda field: getattr(a, field) if getattr(a, field) == getattr(b, field) else None  # noqa: E731
    return a.but(
        leaf=same("leaf"),
        requires_grad=same("requires_grad"),
        dtype=same("dtype"),
        scalar=same("scalar"),
        shape=shapes.merge(a.shape, b.shape),
        composed_from=a.composed_from | b.composed_from,
        graph=a.graph | b.graph,
        no_grad=a.no_grad and b.no_grad,
        saved_by=a.saved_by or b.saved_by,  # saved on one branch: an in-place change breaks that path's backward
        saved_node=a.saved_node if a.saved_by else b.saved_node,
        base=same("base"),
        value=same("value"),
        text=same("text"),
        truth=same("truth"),
        nondiff=same("nondiff"),
        uninitialised=a.uninitialised and b.uninitialised,
        module_class=same("module_class"),
        # two constructions of one layer class (`nn.MSELoss(reduction="none") if per_item else nn.MSELoss()`): what
        # either was built with is not what the merged one was
        node=a.node if a.kind is not Kind.MODULE or a.node is b.node else None,
        params=a.params | b.params,
        param_deps=a.param_deps | b.param_deps,
        cut_deps=cut_of((a, b)),
        as_large_as=a.as_large_as & b.as_large_as,
        elements=(),
        keys=(),  # (a MAPPING's keys name its elements: none are kept, so neither are they)
        tail=(),
        grown=a.grown | b.grown,
    )
