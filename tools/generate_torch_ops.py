"""Generate autograd_lsp/analysis/torch_ops.py from the installed torch's own metadata (development time only).

Sources, all shipped in the torch wheel:
- torchgen/packaged/ATen/native/native_functions.yaml: each op's schema (in-place `Tensor(a!) self`, out= variants,
  method/function variants, `dim`/`keepdim` reductions) and tags (`pointwise`, `inplace_view`);
- torchgen/packaged/autograd/derivatives.yaml, read through torchgen's own loader: which inputs and outputs each
  backward formula saves, `output_differentiability`, zero-gradient formulas;
- torchgen's list of view ops; `dir(torch)` / `dir(torch.Tensor)` for what Python exposes; torch.nn classes (their
  `__init__` signatures and the functional op their `forward` calls).
A few result facts (dtype class, reduction to one element) come from calling each simple op once on a small tensor.

    python -m tools.generate_torch_ops          # rewrite the module
    python -m tools.generate_torch_ops --check  # exit 1 when the checked-in module differs (the drift test)
"""
from __future__ import annotations

import argparse
import ast
import difflib
import inspect
import os
import re
import sys
import textwrap
import warnings
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "autograd_lsp" / "analysis" / "torch_ops.py"

# Python functions that torch implements by composing ATen ops (CompositeImplicitAutograd): autograd records the op
# they call, whose derivative entry says what is saved. torch's C++ decides this, not any yaml, so it is written here.
# name -> (the op it calls, its argument names -> that op's argument names where they differ).
COMPOSITES = {
    "softmax": ("_softmax", {}), "log_softmax": ("_log_softmax", {}), "matmul": ("mm", {"other": "mat2"}),
    "linear": ("addmm", {"input": "mat1", "weight": "mat2", "bias": "self"}), "conv1d": ("convolution", {}),
    "conv2d": ("convolution", {}), "conv3d": ("convolution", {}), "layer_norm": ("native_layer_norm", {}),
    "group_norm": ("native_group_norm", {}), "dropout": ("native_dropout", {"input": "self"}), "square": ("pow", {}),
    "true_divide": ("div", {}), "divide": ("div", {}), "multiply": ("mul", {}), "subtract": ("sub", {}), "clip": ("clamp", {}),
    "absolute": ("abs", {}), "negative": ("neg", {}), "arccos": ("acos", {}), "arcsin": ("asin", {}), "arctan": ("atan", {}),
}
# Tensor methods ending in "_" that change no values a graph depends on: flags, sharing, hooks.
# (resize_ changes the shape and keeps whatever memory holds.)
NOT_VALUE_WRITES = ("requires_grad_", "share_memory_", "detach_", "retain_grad", "record_stream", "pin_memory", "to_", "resize_",
                    "resize_as_")
# Python-level factories that take data rather than sizes (not ATen ops): their dtype follows the data.
DATA_FACTORIES = ("tensor", "as_tensor", "asarray", "from_numpy", "frombuffer")
# Tensor methods and attributes that give facts about a tensor or do autograd bookkeeping, never its values (torch's
# _tensor.py and C bindings define them by hand; no yaml lists them). Filtered by what torch.Tensor has.
METADATA_METHODS = ("size", "dim", "numel", "stride", "data_ptr", "element_size", "is_contiguous", "storage_offset", "nelement",
                    "ndimension", "get_device", "is_floating_point", "is_complex", "has_names", "is_set_to", "untyped_storage",
                    "storage", "is_pinned", "is_shared", "register_hook", "retain_grad", "__len__")
METADATA_ATTRIBUTES = ("shape", "dtype", "device", "requires_grad", "is_leaf", "grad", "ndim", "layout", "is_cuda", "grad_fn",
                       "names", "is_sparse", "is_quantized", "is_meta", "itemsize", "nbytes", "_version", "output_nr", "_base")
# torch functions that answer a question about their argument (its type, its size), never read its values.
QUERY_FUNCTIONS = ("is_tensor", "is_storage") + METADATA_METHODS
# Reads that leave the graph: a Python value, or a tensor without history (`.data`, `.detach()`).
GRAPH_CUTS = ("item", "tolist", "numpy", "detach", "detach_", "data")
# Reads whose result is a Python or NumPy value.
PYTHON_VALUES = ("item", "tolist", "numpy")
# Device moves (their probe needs a device this machine may lack).
DEVICE_MOVES = ("to", "cuda", "cpu", "xpu", "mps", "type_as", "type")


def _graph_runs(torch, methods) -> set:
    """Tensor methods that run the autograd graph rooted at the receiver: probed on two leaves of the same shape whose
    values differ, each given the same gradient, they must leave the same gradients behind (a leaf's own `backward`
    accumulates the gradient it is given; a graph's nodes read what they saved, never the root's values)."""
    found = set()
    for name in ("backward",):
        if name not in methods:
            continue
        grads = []
        for value in (0.0, 7.0):
            leaf = torch.full((3,), value, requires_grad=True)
            getattr(leaf, name)(torch.ones(3))
            grads.append(leaf.grad)
        if torch.equal(*grads):
            found.add(name)
    return found


def _factory_methods(torch, methods) -> set:
    """`x.new*(...)`: probed on two receivers of the same dtype and device whose values differ, each method given a
    size (and a fill value where it takes one) must give the same result: the receiver's values are never read."""
    found = set()
    a, b = torch.zeros(3), torch.full((3,), 7.0)
    for name in sorted(n for n in methods if n == "new" or n.startswith("new_")):
        for args in ((2,), ((2,), 1.5), ((2,), (1,))):
            try:
                x, y = getattr(a, name)(*args), getattr(b, name)(*args)
            except (TypeError, RuntimeError):
                continue
            if x.dtype == y.dtype and x.shape == y.shape and (name in ("new", "new_empty", "new_empty_strided") or torch.equal(x, y)):
                found.add(name)  # (an uninitialised result's values are whatever the allocator left: not compared)
            break
    return found


def _torchgen_root() -> str:
    import torchgen

    return os.path.join(os.path.dirname(torchgen.__file__), "packaged")


def _native_functions() -> list[dict]:
    import yaml

    with open(os.path.join(_torchgen_root(), "ATen", "native", "native_functions.yaml"), encoding="utf-8") as handle:
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _derivatives() -> dict:
    """'mul.Tensor' -> DifferentiabilityInfo (torchgen's own reading of derivatives.yaml)."""
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    root = _torchgen_root()
    infos, _ = load_derivatives(os.path.join(root, "autograd", "derivatives.yaml"),
                                os.path.join(root, "ATen", "native", "native_functions.yaml"),
                                os.path.join(root, "ATen", "native", "tags.yaml"))
    out = {}
    for schema, by_key in infos.items():
        info = by_key.get("Default")
        if info is not None:
            out[str(schema.name)] = info
    return out


_SCHEMA = re.compile(r"^(?P<name>[\w.]+)\((?P<args>.*)\) -> (?P<returns>.+)$")


def _parse(entry: dict) -> dict | None:
    match = _SCHEMA.match(entry["func"])
    if match is None:
        return None
    full = match["name"]
    name, _, overload = full.partition(".")
    args, positional = [], None
    for raw in _split(match["args"]):
        if raw == "*":
            positional = len(args)
            continue
        kind, _, rest = raw.rpartition(" ")
        arg, _, default = rest.partition("=")
        args.append((arg, kind, default or None))
    tags = entry.get("tags", [])
    tags = [tags] if isinstance(tags, str) else list(tags)
    return {"full": full, "name": name, "overload": overload, "args": args, "returns": match["returns"],
            "positional": len(args) if positional is None else positional,
            "variants": [v.strip() for v in entry.get("variants", "function").split(",")], "tags": tags,
            "composite": "dispatch" not in entry and "structured_delegate" not in entry
            or "CompositeImplicitAutograd" in str(entry.get("dispatch", {}))}


def _split(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def _one_tensor(overloads: list[dict]) -> bool:
    """Every overload (out= variants aside) has exactly one Tensor argument and no list or optional of tensors."""
    public = [s for s in overloads if not _is_out(s)]
    return bool(public) and all(sum(kind.startswith("Tensor") for _, kind, _ in s["args"]) == 1 and not any(
        kind.startswith("Tensor") and ("[" in kind or "?" in kind) for _, kind, _ in s["args"]) for s in public)


def _functional_one_tensor(torch, F, taken: set[str]) -> set[str]:
    """Python functions of torch.nn.functional (no schema: F.normalize, F.interpolate) whose signature annotates exactly
    one parameter as a Tensor and every other, `out` aside, as something else (unannotated: unknown, left out).
    Names shared with an op or a method are left to the schema."""
    import inspect

    found = set()
    for name in dir(F):
        function = getattr(F, name)
        if name.startswith("_") or name in taken or not inspect.isfunction(function) or function.__module__ != F.__name__:
            continue
        params = [p for p in inspect.signature(function).parameters.values() if p.name != "out"]
        if any(p.annotation is inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            continue
        tensors = ["Tensor" in (p.annotation if isinstance(p.annotation, str) else repr(p.annotation)) for p in params]
        if sum(tensors) == 1 and any(p.annotation is torch.Tensor for p in params):
            found.add(name)
    return found


def _is_out(schema: dict) -> bool:
    return schema["overload"].endswith("out") or any(kind.endswith("(a!)") and arg == "out" for arg, kind, _ in schema["args"])


def _saved(info, integer_outputs: frozenset = frozenset()) -> dict[str, set[str]]:
    """input name -> the tensors its gradient formula keeps: other inputs by name, "result" for the output. Of an
    overload returning several tensors, "result" is a kept floating output: `max.dim` and `sort` keep only their
    `indices` (`integer_outputs`), so changing the values they return in place breaks no backward."""
    tensor_inputs = {arg.name for arg in info.func.func.arguments.flat_all if arg.type.is_tensor_like()}
    outputs = {"result", *(ret.name for ret in info.func.func.returns if ret.name)} - integer_outputs
    saved: dict[str, set[str]] = {}
    for derivative in info.derivatives:
        names = {binding.nctype.name for binding in derivative.saved_inputs} & tensor_inputs
        if {binding.nctype.name for binding in derivative.saved_outputs} & outputs:
            names.add("result")
        for var in derivative.var_names:
            saved.setdefault(var, set()).update(names)
    return saved


def _zero_gradient(info) -> bool:
    formulas = [d.formula.replace(" ", "") for d in info.derivatives]
    return bool(formulas) and all(re.fullmatch(r"zeros_like\((grad|self|result)\)", f) for f in formulas)


def _writes(derivatives: dict, inplace: dict) -> tuple[set, set]:
    """In-place ops that write without reading the old values: their gradient for `self` is zero (`fill_`, `uniform_`:
    the old values do not matter), or zero where they write (`masked_fill_`, `index_copy_`, `scatter_`)."""
    # copy_ and set_ have hand-written autograd in torch (VariableTypeManual.cpp); fill_diagonal_ is composite.
    overwrites, partial = {"copy_", "set_"}, {"fill_diagonal_"}
    for full, info in derivatives.items():
        name = full.split(".")[0]
        formula = next((d.formula.replace(" ", "") for d in info.derivatives if "self" in d.var_names), None)
        if formula is None:
            continue
        if name in inplace and formula == "zeros_like(grad)":
            overwrites.add(name)
        elif re.match(r"(accumulate\?grad:)?grad\.(masked_fill|index_fill|scatter|index_put|put)\(", formula) and name + "_" in inplace:
            partial.add(name + "_")
    return overwrites, partial


def _beta_scaled(derivatives: dict, by_name: dict) -> dict:
    """Ops computing `beta * self + alpha * (...)`: self's gradient is `maybe_multiply(grad, beta)` -> position of `beta`
    (0: self). With beta=0 the result does not depend on self's values (addmm, baddbmm...)."""
    found = {}
    for full, info in derivatives.items():
        name = full.split(".", 1)[0]
        if name.startswith("_") or not any(d.var_names == ("self",) and d.formula.replace(" ", "").startswith("maybe_multiply(grad,beta")
                                           for d in info.derivatives):
            continue
        for schema in by_name.get(name, ()):
            args = [arg for arg, _, _ in schema["args"]]
            if "beta" in args and not _is_out(schema):
                found[name] = min(found.get(name, len(args)), args.index("beta"))  # (keyword-only in Python's signatures)
    return found


def _same_shape(torch, function, matrix: bool = False) -> bool:
    """`function(x)` keeps x's shape for a 2x3 and a one-element float tensor (softmax, cumsum-like, activations); with
    `matrix` (torch.nn.functional's functions of one input), the one-element tensor 1x1 where a 1-d one is refused
    (F.normalize's default dim=1)."""
    torch.manual_seed(0)  # the same inputs whatever was probed before: random ops (bernoulli) answer the same every run
    for shapes in (((2, 3),), ((1,), (1, 1)) if matrix else ((1,),)):
        for shape in shapes:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    x = torch.rand(shape) + 0.5
                    result = function(x)
                break
            except Exception:
                result = None
        if not isinstance(result, torch.Tensor) or result.shape != x.shape:
            return False
    return True


# Argument lists a method of a 2x3 tensor is tried with (dims, sizes, counts): enough for each shape-changing method
# to show, for at least one of them, whether it drops elements.
_NUMEL_PROBES = ((), (-1,), (0,), (1,), (2,), (6,), (0, 1), (1, 0), (2, 1), (1, 2), (3, 2), (2, 3), (0, 0, 1), (1, 1, 2), (0, 1, 1),
                 (1, 2, 1), (2, 2, 3), ((2, 3),), ((3, 2),), ((6,),), ((2, 2, 3),))


def _keeps_numel(torch, name: str) -> bool:
    """`x.name(...)` never has fewer elements than x: every probe that succeeds, on distinct values and on zeros,
    returns a tensor at least as large (view, reshape, squeeze, expand, repeat...), and at least one succeeds."""
    inputs = (torch.tensor([[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]]), torch.zeros(2, 3))
    worked = False
    for args in _NUMEL_PROBES:
        for x in inputs:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = getattr(x, name)(*args)
            except Exception:
                continue
            if not isinstance(result, torch.Tensor) or result.numel() < x.numel():
                return False
            worked = True
    return worked


def _same_values(torch, name: str) -> bool:
    """`x.name()` gives x's values unchanged: a copy or a conversion (clone, float, contiguous, cpu)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = torch.tensor([[0.5, -2.5, 1.5], [-0.5, 2.5, -1.5]])
            result = getattr(torch.Tensor, name)(x)
            return (isinstance(result, torch.Tensor) and result.layout == x.layout and result.shape == x.shape
                    and bool((result.to(torch.complex128) == x).all()))
    except Exception:
        return False


def _index_shaped(torch, name: str, schema: dict) -> int | None:
    """The position of the index tensor of `torch.name(x, ..., index)` when the result always has that tensor's shape
    (gather, take, take_along_dim): called on a 3x4 float tensor with zero indices of several shapes, with dim 0 and 1
    for an `int dim` before it, every call that works gives the index's shape and one does. None otherwise."""
    position = next((i for i, (arg, kind, _) in enumerate(schema["args"]) if arg in ("index", "indices") and kind == "Tensor"), None)
    before = schema["args"][1:position] if position else None
    if not position or any(kind != "int" for _, kind, _ in before) or not hasattr(torch, name):
        return None
    x = torch.arange(12.0).reshape(3, 4)
    worked = False
    for shape in ((2, 4), (3, 1), (1, 2), (3, 4), (2,)):
        index = torch.zeros(shape, dtype=torch.long)
        for dim in (0, 1):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = getattr(torch, name)(x, *[dim] * len(before), index)
            except Exception:
                continue
            if not isinstance(result, torch.Tensor) or tuple(result.shape) != shape:
                return None
            worked = True
    return position if worked else None


def _per_input_views(torch, schemas) -> set:
    """Ops taking a list of tensors and returning a list whose i-th tensor is a view of the i-th input alone
    (broadcast_tensors, meshgrid...): called on two 3-element tensors, each output shares only its own input's storage."""
    found = set()
    for schema in schemas:
        args = schema["args"]
        if schema["returns"] != "Tensor[]" or not args or args[0][1] != "Tensor[]" or _is_out(schema) \
                or schema["name"].startswith("_") or not hasattr(torch, schema["name"]):
            continue
        inputs = [torch.arange(3.0), torch.arange(3.0) + 10]
        storage = [t.untyped_storage().data_ptr() for t in inputs]
        for call in (lambda f: f(inputs), lambda f: f(*inputs)):  # torch.meshgrid([a, b]) and torch.broadcast_tensors(a, b)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outputs = call(getattr(torch, schema["name"]))
            except Exception:
                continue
            if isinstance(outputs, (list, tuple)) and len(outputs) == len(inputs) and all(
                    isinstance(out, torch.Tensor) and out.untyped_storage().data_ptr() == storage[i]
                    for i, out in enumerate(outputs)):
                found.add(schema["name"])
                break
    return found


def _shape_operands(torch, methods) -> set:
    """Tensor methods `x.name(other)` whose result takes only metadata from `other` (its dtype, shape or device:
    type_as, view_as, expand_as...): called on two 2x3 float tensors, the result requires grad when `x` does and never
    when only `other` does."""
    found = set()
    for name in sorted(methods):
        if name.startswith("_") or name.endswith("_"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                through_self = getattr(torch.rand(2, 3, requires_grad=True), name)(torch.rand(2, 3))
                through_other = getattr(torch.rand(2, 3), name)(torch.rand(2, 3, requires_grad=True))
        except Exception:
            continue
        if isinstance(through_self, torch.Tensor) and isinstance(through_other, torch.Tensor) and through_self.requires_grad \
                and not through_other.requires_grad:
            found.add(name)
    return found


def _first_parameter(function) -> str | None:
    try:
        return next(iter(inspect.signature(function).parameters), None)
    except (TypeError, ValueError):
        # a C builtin (`F.logsigmoid`, `F.softshrink`): its docstring opens with its signature, `logsigmoid(input) -> Tensor`
        match = re.match(r"\s*\w+\((\w+)", getattr(function, "__doc__", None) or "")
        return match.group(1) if match else None


def _probe(torch, method) -> dict:
    """Call `method(x)` (else `method(x, x)`) on a small float tensor and an integer one, 2x3 else 1-D: the dtype class of
    the result, its numel on the 2x3 input, whether it has a grad_fn."""
    facts = {}
    for index, (label, make) in enumerate((("float", lambda: torch.arange(6.0).reshape(2, 3) + 0.5),
                                           ("int", lambda: torch.arange(6).reshape(2, 3)),
                                           ("float", lambda: torch.arange(6.0) + 0.5), ("int", lambda: torch.arange(6)))):
        if label in facts:
            continue
        result = None
        for arity in (1, 2):  # x.op(), else x.op(x)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    x = make()
                    result = method(*[x] * arity)
                break
            except Exception:
                continue
        if isinstance(result, torch.Tensor):
            facts[label] = "float" if (result.dtype.is_floating_point or result.dtype.is_complex) else "int"
            if index == 0:
                facts["numel"] = result.numel()
            if label == "float":
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        x = make().requires_grad_() * 1  # a non-leaf: methods that return self keep its grad_fn
                        facts["grad"] = method(*[x] * arity).grad_fn is not None
                except Exception:
                    pass
    return facts


def _alias_views(torch, views: set) -> set:
    """Views whose result always shares its input's storage: called on a non-contiguous tensor with a few argument
    lists, never a copy (`reshape`, `flatten`, `contiguous` copy there); one no probe could call is kept only when
    functionalization has a `_copy` twin for it (`view`, `expand`: aten's own view ops)."""
    found = set()
    for name in sorted(views):
        method, verdict = getattr(torch.Tensor, name, None), None
        make = lambda: torch.arange(24.0).reshape(2, 3, 4).transpose(0, 2)  # noqa: E731
        for args in ((), (-1,), (0,), (0, 1), (24,), (0, (2, 2)), (1, 0, 2), ("self",), ("flat",)):
            if not callable(method) and args:
                continue  # a property (`.T`, `.mT`): read once, with no arguments
            x = make()
            args = (x,) if args == ("self",) else ((torch.zeros(24),) if args == ("flat",) else args)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = method(x, *args) if callable(method) else getattr(x, name)
            except Exception:
                continue
            parts = result if isinstance(result, (tuple, list)) else [result]
            shared = all(isinstance(p, torch.Tensor) and p.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() for p in parts)
            verdict = verdict is not False and shared if parts else verdict
        if verdict or verdict is None and hasattr(torch.ops.aten, name + "_copy"):
            found.add(name)
    return found


def collect() -> dict:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torchgen.packaged.autograd.gen_inplace_or_view_type import RETURNS_VIEWS_OF_INPUT

    schemas = [s for s in (_parse(e) for e in _native_functions() if "func" in e) if s is not None]
    derivatives = _derivatives()
    functions = {n for n in dir(torch) if not n.startswith("__") and callable(getattr(torch, n, None))}
    methods = {n for n in dir(torch.Tensor) if not n.startswith("__") and callable(getattr(torch.Tensor, n, None))}
    functional = {n for n in dir(F) if not n.startswith("_") and callable(getattr(F, n, None))}
    python_names = functions | methods | functional

    by_name: dict[str, list[dict]] = {}
    for schema in schemas:
        by_name.setdefault(schema["name"], []).append(schema)

    tuple_results = _tuple_results(torch, schemas)
    inplace, views, out_variants, pointwise, reductions, saved_by_name, args = {}, set(), set(), set(), set(), {}, {}
    saved_dim_by_name = {}  # ops whose tuple needs a dim (`max(x, 1)`): what those overloads keep
    inplace_views = {}
    nondifferentiable, zero_gradient, factories, tensor_ops = set(), set(), {}, set()
    for name, overloads in sorted(by_name.items()):
        if name.startswith("_") and name not in {target for target, _ in COMPOSITES.values()}:
            continue
        public = [s for s in overloads if not _is_out(s)]
        if any(_is_out(s) for s in overloads):
            out_variants.add(name)
        if not public:
            continue
        first = public[0]
        if first["args"] and first["args"][0][1] == "Tensor(a!)" and name.endswith("_"):
            if not any("inplace_view" in s["tags"] for s in public) and name not in NOT_VALUE_WRITES:
                base = name[:-1]
                inplace[name] = base if base in python_names else None
            elif any("inplace_view" in s["tags"] for s in public) and name not in NOT_VALUE_WRITES and name in methods \
                    and not any(kind.startswith(("Tensor", "Storage")) for s in public for _, kind, _ in s["args"][1:]):
                # (not `set_`, which takes another tensor's storage: its values)
                inplace_views[name] = name[:-1] if name[:-1] in python_names else None
            continue
        if any("pointwise" in s["tags"] for s in public):
            pointwise.add(name)
        if any(arg == "keepdim" for s in public for arg, _, _ in s["args"]):
            reductions.add(name)
        if any(not any(kind.startswith("Tensor") for _, kind, _ in s["args"]) and any(arg == "dtype" for arg, _, _ in s["args"])
               and s["returns"].startswith("Tensor") for s in public):
            factories[name] = "float"  # an overload that makes a tensor from sizes/values; its dtype is found by calling it
        if name.endswith("_like") and any(arg == "dtype" for s in public for arg, _, _ in s["args"]):
            factories[name] = "like"
        positional = []
        for arg, kind, _ in first["args"]:
            if kind.startswith("Tensor"):
                positional.append(arg)
        args[name] = tuple(positional)
        infos = [derivatives.get(s["full"]) for s in public]
        known = [info for info in infos if info is not None]
        tupled = tuple_results.get(name)
        integer = frozenset(field for field, kind in zip(tupled["names"], tupled["outputs"]) if kind == "int") if tupled else frozenset()
        merged: dict[str, set[str]] = {}
        merged_dim: dict[str, set[str]] = {}
        for schema, info in zip(public, infos):
            if info is None:
                continue
            # (an op returning one tensor without a dim and a tuple with one: each form's own entry)
            into = merged_dim if tupled and tupled["dim"] and schema["returns"].startswith("(Tensor") else merged
            for var, names in _saved(info, integer).items():
                into.setdefault(var, set()).update(names)
        if any(merged.values()):
            saved_by_name[name] = merged
        if tupled and tupled["dim"]:
            saved_dim_by_name[name] = merged_dim
        differentiable = any(
            (info is not None and (info.output_differentiability is None or any(info.output_differentiability)) and info.derivatives)
            or (info is None and s["composite"]) for s, info in zip(public, infos))
        if not differentiable and name not in factories:
            nondifferentiable.add(name)
        elif name not in factories and not name.startswith("new_") and all(s["returns"].startswith(("Tensor", "(Tensor")) for s in public):
            tensor_ops.add(name)
        if differentiable and known and len(known) == len(public) and all(_zero_gradient(info) for info in known):
            zero_gradient.add(name)
    for name, (target, renames) in COMPOSITES.items():
        if target in saved_by_name and name in args:  # torch's dense kernel is the composite: the op it calls saves
            rename = {theirs: ours for ours, theirs in renames.items()}
            saved_by_name[name] = {rename.get(var, var): {rename.get(n, n) for n in names} for var, names in saved_by_name[target].items()}
    saved, saved_dim = {}, {}
    for table, by_name_saved in ((saved, saved_by_name), (saved_dim, saved_dim_by_name)):
        for name, by_input in by_name_saved.items():
            position = {arg: index for index, arg in enumerate(args.get(name, ()))}
            entry = {}
            for var, names in by_input.items():
                kept = tuple(sorted((position[n] for n in names if n in position), key=int)) + (("result",) if "result" in names else ())
                if var in position and kept:
                    entry[position[var]] = kept
            if entry or table is saved_dim:  # (a dim form keeping no tensor argument and no float output: an empty entry)
                table[name] = entry
    for name, overloads in by_name.items():  # composites that alias: unflatten, moveaxis, view_as_real...
        if any(s["args"] and s["args"][0][1] == "Tensor(a)" and s["returns"].startswith("Tensor(a)") and not _is_out(s) for s in overloads):
            # (to, pin_memory, coalesce alias only when they have nothing to do: conversions, not views)
            if not name.startswith("_") and hasattr(torch.Tensor, name) and not name.endswith("_") \
                    and name not in ("detach", "alias", "to", "pin_memory", "coalesce"):
                views.add(name)
    properties = {"numpy_T": "T", "matrix_H": "H"}  # torchgen's names for the Tensor properties .T and .H
    for name in RETURNS_VIEWS_OF_INPUT:
        name = properties.get(name, name)
        if not name.startswith("_") and hasattr(torch.Tensor, name) and name != "detach":
            views.add(name)

    int_results, float_results = set(), set()
    aten = {n for n, overloads in by_name.items() if any(s["args"] and s["args"][0][1].startswith("Tensor") for s in overloads)}
    probed = [(n, getattr(torch.Tensor, n)) for n in sorted(methods)] + [(n, getattr(torch, n)) for n in sorted(functions & aten - methods)]
    for name, function in probed:
        if name.startswith("_") or name.endswith("_"):
            continue
        facts = _probe(torch, function)
        if facts.get("float") == "int":
            int_results.add(name)
        elif facts.get("int") == "float":
            float_results.add(name)
        if facts.get("numel") == 1:
            reductions.add(name)
        if facts.get("grad") and name in methods:
            tensor_ops.add(name)  # Python-level methods too (cpu, float, type_as...): the result has a grad_fn
    same_shape = {n for n in methods if not n.endswith("_") and not n.startswith("_") and _same_shape(torch, getattr(torch.Tensor, n))}
    same_shape |= {n for n in functions & aten if not n.endswith("_") and not n.startswith("_") and _same_shape(torch, getattr(torch, n))}
    same_shape |= {n for n in functional if not n.endswith("_") and _first_parameter(getattr(F, n)) == "input"
                   and _same_shape(torch, getattr(F, n), matrix=True)}
    for name in list(factories):
        if factories[name] == "float":
            factories[name] = _factory_dtype(torch, name)
    for name in DATA_FACTORIES:
        if name in functions:
            factories[name] = "data"
    for name, kind in factories.items():  # `tensor(data, *, dtype=None, ...)`: the first argument is the values themselves
        doc = (getattr(getattr(torch, name, None), "__doc__", None) or "").strip()
        match = re.match(r"\w+\((\w+)", doc)
        if kind == "data" and match and match.group(1) in ("data", "obj"):
            factories[name] = "values"
    overwrites, partial_writes = _writes(derivatives, inplace)
    index_shaped = {}
    for name, overloads in by_name.items():
        if not name.startswith("_") and not name.endswith("_"):
            positions = {_index_shaped(torch, name, s) for s in overloads if not _is_out(s)} - {None}
            if len(positions) == 1:
                index_shaped[name] = positions.pop()
    factory_sizes = {}
    for name, kind in factories.items():  # `randint(low, high, size)`: where the shape is, by how many arguments come first
        for schema in by_name.get(name, ()):
            positional = [kind for _, kind, default in schema["args"] if default is None]
            size = next((i for i, (arg, kind, _) in enumerate(schema["args"]) if arg == "size" and kind.startswith("SymInt[")), None)
            if size is not None and not _is_out(schema) and size < len(positional):
                factory_sizes.setdefault(name, {})[len(positional)] = size
    same_values = {n for n in methods if not n.startswith("_") and not n.endswith("_") and n not in GRAPH_CUTS and _same_values(torch, n)}
    # (methods that act on autograd or storage rather than compute are not probed: calling them is not a value's op)
    keeps_numel = {n for n in tensor_ops & methods if not n.startswith("_") and not n.endswith("_") and _keeps_numel(torch, n)}
    legacy = {}
    for name in dir(torch):
        value = getattr(torch, name)
        if name.endswith("Tensor") and isinstance(value, type) and (name == "Tensor" or isinstance(getattr(value, "dtype", None), torch.dtype)):
            dtype = value.dtype if name != "Tensor" else torch.get_default_dtype()
            legacy[name] = str(dtype).rsplit(".", 1)[-1]
    dtypes = {name: _dtype_class(torch, getattr(torch, name)) for name in dir(torch) if isinstance(getattr(torch, name), torch.dtype)}

    return {
        "version": torch.__version__.split("+")[0],
        "INPLACE": inplace,
        "INPLACE_VIEWS": inplace_views,
        "VIEWS": views,
        "ALIAS_VIEWS": _alias_views(torch, views),
        "OUT_VARIANTS": out_variants & python_names,
        "POINTWISE": pointwise & python_names,
        "REDUCTIONS": reductions & python_names,
        "REDUCTION_DIMS": {n: d for n, d in _reduction_dims(by_name).items() if n in reductions & python_names},
        "INT_RESULT": int_results,
        "FLOAT_RESULT": float_results,
        "NONDIFFERENTIABLE": (nondifferentiable & python_names) | {n for n in int_results if n not in inplace},
        "ZERO_GRADIENT": zero_gradient & python_names,
        "TENSOR_OPS": (tensor_ops & python_names) - nondifferentiable - set(inplace),
        "SAME_SHAPE": (same_shape | pointwise) & python_names,
        "KEEPS_NUMEL": keeps_numel,
        "LOSSES": _losses(F),
        "LEGACY_REDUCE": _legacy_reduce(F),
        "SAVED": {n: d for n, d in saved.items() if n in python_names},
        "SAVED_WITH_DIM": {n: d for n, d in saved_dim.items() if n in python_names},
        "FACTORIES": {n: k for n, k in factories.items() if n in functions},
        "RANDOM_FACTORIES": {n for n in factories if n in functions and any(
            kind.startswith("Generator") for s in by_name.get(n, ()) for _, kind, _ in s["args"])},
        "LEGACY_CONSTRUCTORS": legacy,
        "DTYPES": dtypes,
        "METADATA_METHODS": {n for n in METADATA_METHODS if hasattr(torch.Tensor, n)},
        "METADATA_ATTRIBUTES": {n for n in METADATA_ATTRIBUTES if hasattr(torch.Tensor, n) or n in ("shape", "grad", "_base")},
        "QUERY_FUNCTIONS": {n for n in QUERY_FUNCTIONS if callable(getattr(torch, n, None))},
        "GRAPH_CUTS": {n for n in GRAPH_CUTS if hasattr(torch.Tensor, n)},
        "PYTHON_VALUES": {n for n in PYTHON_VALUES if hasattr(torch.Tensor, n)},
        "SAME_VALUES": same_values | {n for n in DEVICE_MOVES if hasattr(torch.Tensor, n)},
        "BOOKKEEPING": {n for n in NOT_VALUE_WRITES if hasattr(torch.Tensor, n)},
        "DEVICE_MOVES": {n for n in DEVICE_MOVES if hasattr(torch.Tensor, n)} | {n for n in methods if n.startswith("new_")},
        "FACTORY_METHODS": _factory_methods(torch, methods),
        "GRAPH_RUNS": _graph_runs(torch, methods),
        "OVERWRITES": overwrites,
        "PARTIAL_WRITES": partial_writes,
        "METHODS": methods,
        "MODULE_ITERATORS": {n for n in dir(nn.Module) if not n.startswith("_") and inspect.isgeneratorfunction(getattr(nn.Module, n))},
        "MODULE_METHODS": {n for n in dir(nn.Module) if callable(getattr(nn.Module, n, None))},
        "FUNCTIONAL": functional,
        "MODULES": _modules(torch, nn, F),
        "TUPLE_RESULTS": tuple_results,
        "DISTRIBUTIONS": _distributions(torch),
        "MODULE_WRAPPERS": _module_wrappers(torch),
        "DISTRIBUTION_GRAD_METHODS": _distribution_grad_methods(torch),
        "DISTRIBUTION_PARAMETERS": _distribution_parameters(torch),
        "DISTRIBUTION_SHAPED_METHODS": _distribution_shaped_methods(torch),
        "INDEX_SHAPED": {n: p for n, p in index_shaped.items() if n in python_names},
        "FACTORY_SIZES": {n: sizes for n, sizes in factory_sizes.items() if n in functions},
        "BETA_SCALED": {n: p for n, p in _beta_scaled(derivatives, by_name).items() if n in python_names},
        "PER_INPUT_VIEWS": _per_input_views(torch, schemas),
        "SHAPE_FUNCTIONS": _shape_functions(torch, python_names),
        "ONE_TENSOR": {n for n, overloads in by_name.items() if n in python_names and _one_tensor(overloads)}
                      | _functional_one_tensor(torch, F, set(by_name) | functions | methods),
        "RESIZES": _resizes(torch, F),
        "SHAPE_OPERANDS": _shape_operands(torch, methods),
        "TRACKING_ATTRIBUTES": _tracking_attributes(torch),
        "CLOSURE_LOOPS": _closure_loops(torch),
    }


def _closure_loops(torch) -> set:
    """torch.optim optimizers whose `step(closure)` calls the closure inside a loop (LBFGS): one step evaluates it,
    and backpropagates what it computes, several times, updating the parameters in between."""
    found = set()
    for name in dir(torch.optim):
        cls = getattr(torch.optim, name)
        if not (isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer)) or cls is torch.optim.Optimizer:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls.step)))
        if any(isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "closure"
               for loop in ast.walk(tree) if isinstance(loop, (ast.For, ast.While)) for call in ast.walk(loop)):
            found.add(name)
    return found


def _tracking_attributes(torch) -> set:
    """Tensor attributes whose reading tells a tensor requiring grad from a `.detach().clone()` taken of it before an
    in-place update: read on both after a backward and an update under no_grad (requires_grad, data, grad...)."""
    weight = torch.ones(3, requires_grad=True)
    (weight * 2).sum().backward()
    alias, copy = weight, weight.detach().clone()
    with torch.no_grad():
        weight.sub_(0.5)
    found = set()
    for name in METADATA_ATTRIBUTES + ("data",):
        try:
            mine, theirs = getattr(alias, name), getattr(copy, name)
        except Exception:
            continue
        if isinstance(mine, torch.Tensor) and isinstance(theirs, torch.Tensor):
            differs = mine.shape != theirs.shape or not torch.equal(mine, theirs)
        else:
            differs = (mine is None) != (theirs is None) or not isinstance(mine, torch.Tensor) and mine != theirs
        if differs:
            found.add(name)
    return found


def _resizes(torch, F) -> dict:
    """Functions of torch.nn.functional whose result keeps the dims of their input before the spatial ones and has
    `size` as its spatial dims (F.interpolate(x, size=...)), found by calling them on 3-, 4- and 5-dim inputs with an
    int and a tuple size -> the position of `size`."""
    import warnings

    out = {}
    for name in sorted(n for n in dir(F) if not n.startswith("_")):
        function = getattr(F, name)
        try:
            parameters = list(inspect.signature(function).parameters)
        except (TypeError, ValueError):
            continue
        if len(parameters) < 2 or parameters[1] != "size":
            continue
        ok = True
        for rank in (3, 4, 5):
            x = torch.randn(2, 3, *([4] * (rank - 2)))
            for size, spatial in ((6, (6,) * (rank - 2)), (tuple(range(5, 3 + rank)), tuple(range(5, 3 + rank)))):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        shape = tuple(function(x, size=size).shape)
                except Exception:
                    ok = False
                    break
                if shape != (2, 3) + spatial:
                    ok = False
                    break
            if not ok:
                break
        if ok:
            out[name] = 1
    return out


def _shape_functions(torch, python_names) -> dict:
    """op -> the name of the shape function torch's JIT computes its result's shape with (torch.jit._shape_functions'
    schema mapping: "linear", "conv2d", "unary", "max_pool2d"...). An op whose overloads use different functions keeps
    the one of its first overload (`aten::mean` -> zero_dim_tensor, `aten::mean.dim` -> sum_mean_dim: the analyzer
    tells them apart by the call's arguments)."""
    import torch.jit._shape_functions as shapes

    out = {}
    for schema, function in shapes.shape_compute_graph_mapping.items():
        namespace, _, rest = schema.partition("::")
        name = rest.split("(", 1)[0].split(".", 1)[0]
        if namespace == "aten" and name in python_names:
            out.setdefault(name, []).append(function.name)
    for name in sorted(n for n in dir(torch.Tensor) if not n.startswith("_") and not n.endswith("_") and n not in out):
        if _shaped_like_view(torch, name):
            out[name] = ["view"]  # reshape: view's shape function, found by calling it
    return {name: sorted(set(found)) for name, found in out.items()}


def _shaped_like_view(torch, name: str) -> bool:
    """`x.<name>(*sizes)` gives the shape `x.view(*sizes)` does, -1 included, on every probe."""
    x = torch.arange(6.0).reshape(2, 3)
    for sizes in ((6,), (-1,), (3, -1), (1, 2, 3), (-1, 1, 2)):
        try:
            if tuple(getattr(x, name)(*sizes).shape) != tuple(x.view(*sizes).shape):
                return False
        except Exception:
            return False
    return True


def _reduction_dims(by_name: dict) -> dict:
    """Reductions along a `dim` (an int or int list, not a Dimname) -> dim: its position among the arguments after self
    in every such overload; keepdim: the same for `keepdim` (None: keyword-only in one, or absent); free: the other
    arguments, never tensors, which do not shape the result (`p`, `dtype`, `unbiased`); those before dim (`norm(p, dim)`)
    are all free. An op whose overloads disagree on where dim is is left out."""
    out = {}
    for name, overloads in by_name.items():
        if name.startswith("_"):
            continue
        dimmed = [s for s in overloads if not _is_out(s) and s["args"] and s["args"][0][1] == "Tensor"
                  and any(arg == "dim" and kind.startswith("int") for arg, kind, _ in s["args"])]
        if not dimmed:
            continue
        dims, keeps, names, tensors = set(), set(), set(), set()
        for schema in dimmed:
            slots = [arg for arg, _, _ in schema["args"][1:schema["positional"]]]
            dims.add(slots.index("dim") if "dim" in slots else None)
            keeps.add(slots.index("keepdim") if "keepdim" in slots else None)
            for arg, kind, _ in schema["args"][1:]:
                (tensors if "Tensor" in kind else names).add(arg)
        if len(dims) != 1 or None in dims:
            continue
        dim = dims.pop()
        free = names - tensors - {"dim", "keepdim"}
        before = {tuple(arg for arg, _, _ in schema["args"][1:dim + 1]) for schema in dimmed}
        if len(before) != 1 or not set(next(iter(before))) <= free:
            continue
        out[name] = {"dim": dim, "keepdim": keeps.pop() if len(keeps) == 1 else None, "free": tuple(sorted(free))}
    return out


def _tuple_results(torch, schemas) -> dict:
    """Ops with an overload returning several tensors (`max.dim -> (Tensor values, Tensor indices)`) -> the dtype class
    of each output, found by calling the op on a 2x3 float tensor as `op(x)`, else as `op(x, 1)`; dim: other overloads
    return one tensor (`max(x)`, `max(a, b)`), the tuple needs a dim."""
    public: dict[str, list[dict]] = {}
    for schema in schemas:
        if not _is_out(schema) and not schema["name"].startswith("_"):
            public.setdefault(schema["name"], []).append(schema)
    out = {}
    for name, overloads in sorted(public.items()):
        if not any(s["returns"].startswith("(Tensor") for s in overloads):
            continue
        function = getattr(torch.Tensor, name, None) or getattr(torch, name, None)
        sample = torch.arange(6.0).reshape(2, 3) + 0.5
        if function is None and name.startswith("linalg_"):
            # `torch.linalg.eigh` is native `linalg_eigh` (kept under that name): called on a square, symmetric matrix
            function = getattr(torch.linalg, name[len("linalg_"):], None)
            sample = torch.eye(3) * 2.0 + 0.5
        if function is None:
            continue
        for extra in ((), (1,)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = function(sample, *extra)
            except Exception:
                continue
            if isinstance(result, tuple) and len(result) > 1 and all(isinstance(t, torch.Tensor) for t in result):
                fields = getattr(type(result), "__match_args__", ())  # torch.return_types.max: (values, indices)
                out[name] = {"outputs": tuple("float" if (t.dtype.is_floating_point or t.dtype.is_complex) else "int" for t in result),
                             "dim": not all(s["returns"].startswith("(Tensor") for s in overloads), "names": tuple(fields)}
                break
    return out


def _module_wrappers(torch) -> set:
    """Qualified names of the torch.nn.utils functions (and of its parametrizations) that return the module they are
    called with: `conv = weight_norm(conv)` is still that Conv1d, with the same forward."""
    import importlib
    import warnings

    found = set()
    for package in ("torch.nn.utils", "torch.nn.utils.parametrizations"):
        where = importlib.import_module(package)
        for name in sorted(dir(where)):
            function = getattr(where, name)
            if name.startswith("_") or not inspect.isfunction(function):
                continue
            torch.manual_seed(0)
            layer = torch.nn.Linear(3, 3)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = function(layer)
            except Exception:  # (one needing more arguments, or another kind of value)
                continue
            if result is layer:
                found.add(f"{package}.{name}")
    return found


def _distributions(torch) -> set:
    """torch.distributions classes: objects that keep the tensors they are built from (loc, scale, logits...)."""
    import torch.distributions as dist

    return {name for name in dir(dist) if not name.startswith("_") and inspect.isclass(getattr(dist, name))
            and issubclass(getattr(dist, name), dist.Distribution)}


def _distribution_parameters(torch) -> dict:
    """Distributions whose samples are scalars (support.event_dim 0) -> their constructor's tensor parameters in
    signature order, each with the trailing dims that are not batch dims (arg_constraints' event_dim: 1 for
    Categorical's logits). A class whose constraints, or support's event_dim, depend on the instance is left out."""
    import torch.distributions as dist

    found = {}
    for name in sorted(_distributions(torch)):
        cls = getattr(dist, name)
        support, constraints = inspect.getattr_static(cls, "support", None), inspect.getattr_static(cls, "arg_constraints", None)
        if not isinstance(constraints, dict) or support is None:
            continue  # (a support that depends on the instance still says its event_dim, or raises)
        try:
            if support.event_dim != 0:
                continue
            dims = {arg: constraint.event_dim for arg, constraint in constraints.items()}
        except (NotImplementedError, AttributeError):
            continue
        try:
            order = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        except (TypeError, ValueError):
            continue
        if dims and all(arg in order for arg in dims):
            found[name] = tuple((arg, dims[arg]) if arg in dims else (arg, None) for arg in order)
    return found


def _distribution_shaped_methods(torch) -> dict:
    """Distribution methods -> "batch" (called without argument: the batch shape, as sample() and entropy()) or "value"
    (called with a value: its broadcast with the batch shape, as log_prob(x)); found by calling them on distributions
    of batch shape (3,) with a value of shape (2, 1)."""
    import torch.distributions as dist

    built = [(dist.Normal(torch.zeros(3), torch.ones(3)), torch.zeros(2, 1)),
             (dist.Categorical(logits=torch.zeros(3, 4)), torch.zeros(2, 1, dtype=torch.long)),
             (dist.Bernoulli(logits=torch.zeros(3)), torch.zeros(2, 1))]
    found = {}
    for name in dir(dist.Distribution):
        if name.startswith("_") or not inspect.isfunction(inspect.getattr_static(dist.Distribution, name)):
            continue
        kinds = set()
        for distribution, value in built:
            for kind, args, shape in (("batch", (), (3,)), ("value", (value,), (2, 3))):
                try:
                    result = getattr(distribution, name)(*args)
                except Exception:  # (not implemented for it, or wants an argument)
                    continue
                kinds.add(kind if isinstance(result, torch.Tensor) and tuple(result.shape) == shape else None)
                break
            else:
                kinds.add(None)
        if len(kinds) == 1 and None not in kinds:
            found[name] = kinds.pop()
    return found


def _distribution_grad_methods(torch) -> set:
    """Methods of torch.distributions.Distribution whose result carries the graph of the tensors the distribution was
    built from (found by calling each, with no argument or a sample, on distributions of tensors that require grad:
    log_prob, entropy, rsample...; not sample())."""
    import torch.distributions as dist

    logits = torch.zeros(3, requires_grad=True)
    built = [dist.Normal(logits * 1, logits.exp()), dist.Categorical(logits=logits * 1), dist.Bernoulli(logits=logits * 1)]
    found = set()
    for name in dir(dist.Distribution):
        if name.startswith("_") or not inspect.isfunction(inspect.getattr_static(dist.Distribution, name)):
            continue
        results = []
        for distribution in built:
            for args in ((), (distribution.sample(),)):
                try:
                    result = getattr(distribution, name)(*args)
                except Exception:  # (not implemented for it, or wants an argument)
                    continue
                results.append(isinstance(result, torch.Tensor) and result.requires_grad)
                break
        if results and all(results):
            found.add(name)
    return found


def _losses(F) -> dict:
    out = {}
    for name in dir(F):
        function = getattr(F, name)
        if name.startswith("_") or not callable(function):
            continue
        try:
            parameters = list(inspect.signature(function).parameters)
        except (TypeError, ValueError):
            continue
        if "reduction" in parameters:
            out[name] = parameters.index("reduction")
    return out


def _legacy_reduce(F) -> dict:
    """Losses that still take the deprecated `reduce` argument -> its position (`reduce=False` means reduction='none')."""
    out = {}
    for name in _losses(F):
        parameters = list(inspect.signature(getattr(F, name)).parameters)
        if "reduce" in parameters:
            out[name] = parameters.index("reduce")
    return out


def _dtype_class(torch, dtype) -> str:
    return "float" if dtype.is_floating_point or dtype.is_complex else "int"


def _factory_dtype(torch, name: str) -> str:
    """The dtype class a factory gives without dtype=: call it with small sizes; "data" when its values decide."""
    function = getattr(torch, name, None)
    results = []
    for args in ((2,), (2, 3), (3, (2,)), (0.0, 2.0), (2, 2.5), ((2,), 1), ((2,), 1.5)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = function(*args)
        except Exception:
            continue
        if isinstance(value, torch.Tensor):
            results.append(_dtype_class(torch, value.dtype))
    if not results:
        return "float"
    if len(set(results)) > 1:
        return "data"
    return results[0]


def _recurrent_keeps_parameters(torch, cls) -> bool:
    """A recurrent layer fed data that needs no grad still keeps its weights (the hidden state of every step after the
    first requires grad): changing them in place before the backward fails the version check. Tried once."""
    try:
        layer = cls(2, 3)
        out = layer(torch.randn(4, 1, 2))
        out = out[0] if isinstance(out, tuple) else out
        with torch.no_grad():
            for parameter in layer.parameters():
                parameter.add_(1.0)
        out.sum().backward()
    except RuntimeError as error:
        return "modified by an inplace operation" in str(error)
    except Exception:  # noqa: BLE001 (a layer this probe cannot build: no claim)
        return False
    return False


def _modules(torch, nn, F) -> dict:
    """torch.nn layers and losses: the functional op their forward calls, `inplace`/`reduction` arguments, parameters."""
    out = {}
    for name in sorted(dir(nn)):
        cls = getattr(nn, name)
        if not (isinstance(cls, type) and issubclass(cls, nn.Module)) or name.startswith("_") or cls.__module__.startswith("torch.nn.modules.module"):
            continue
        if not cls.__module__.startswith("torch.nn.modules."):
            continue
        try:
            signature = inspect.signature(cls.__init__)
        except (TypeError, ValueError):
            continue
        parameters = [p for p in signature.parameters.values() if p.name != "self"]
        positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        entry = {}
        op = _forward_op(cls)
        if op is not None:
            entry["op"] = op
        else:
            method = _forward_method(cls, torch, signature, positional)
            if method is not None:
                entry["method"] = method
        for argument in ("inplace", "reduction", "reduce"):
            if argument in positional or any(p.name == argument for p in parameters):
                entry[argument] = positional.index(argument) if argument in positional else -1
        if "reduction" in entry:
            default = signature.parameters["reduction"].default
            entry["default_reduction"] = default if isinstance(default, str) else "mean"
        entry["parameters"] = _has_parameters(cls, parameters)
        geometry = _geometry(parameters, positional)
        if geometry:
            entry["geometry"] = geometry
        if issubclass(cls, nn.modules.rnn.RNNBase) and _recurrent_keeps_parameters(torch, cls):
            entry["keeps_parameters"] = True
        out[name] = entry
    return out


# The __init__ arguments that set a convolution's or pooling layer's output sizes (torch's own names for them).
GEOMETRY = ("kernel_size", "stride", "padding", "dilation", "output_padding", "ceil_mode")


def _geometry(parameters, positional) -> dict:
    """{argument: [__init__ position (-1: keyword only), default]} of a layer taking `kernel_size`, for the arguments
    its output sizes depend on (a default that is not a literal int/bool/str/None is left out: unknown)."""
    if not any(p.name == "kernel_size" for p in parameters):
        return {}
    found = {}
    for parameter in parameters:
        if parameter.name not in GEOMETRY:
            continue
        default = parameter.default
        if default is not inspect.Parameter.empty and not isinstance(default, (int, str, type(None))):
            continue
        found[parameter.name] = [positional.index(parameter.name) if parameter.name in positional else -1,
                                 None if default is inspect.Parameter.empty else default]
    return found


def _forward_method(cls, torch, signature, positional) -> dict | None:
    """`return input.flatten(self.start_dim, self.end_dim)` -> {"name": "flatten", "arguments": [["start_dim", 0, 1],
    ["end_dim", 1, -1]]}: the Tensor method a forward returns of its input, with each argument's __init__ name,
    position (-1: keyword only) and default, when every argument is an attribute named after an __init__ parameter."""
    forward = cls.__dict__.get("forward")
    if forward is None:
        return None
    try:
        function = ast.parse(textwrap.dedent(inspect.getsource(forward))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    arguments = [a.arg for a in function.args.args]
    returns = [node for node in function.body if isinstance(node, ast.Return)]
    if len(arguments) != 2 or len(returns) != 1 or not isinstance(returns[0].value, ast.Call):
        return None
    call = returns[0].value
    if not (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id == arguments[1]):
        return None
    if not hasattr(torch.Tensor, call.func.attr) or call.keywords:
        return None
    found = []
    for argument in call.args:
        if not (isinstance(argument, ast.Attribute) and isinstance(argument.value, ast.Name) and argument.value.id == "self"):
            return None
        parameter = signature.parameters.get(argument.attr)
        if parameter is None or parameter.default is inspect.Parameter.empty or not isinstance(parameter.default, (int, type(None))):
            return None
        found.append([argument.attr, positional.index(argument.attr) if argument.attr in positional else -1, parameter.default])
    return {"name": call.func.attr, "arguments": found}


def _forward_op(cls, forward=None, depth: int = 0) -> str | None:
    """`return F.relu(input, inplace=self.inplace)` -> "relu": the torch/F call a forward returns (directly, or through
    one helper method of its own: Conv2d's `_conv_forward`)."""
    if forward is None:
        owner = next((base for base in cls.__mro__ if "forward" in base.__dict__), None)  # ReLU6 inherits Hardtanh's
        if owner is None or not owner.__module__.startswith("torch.nn.modules.") or owner.__module__.endswith(".module"):
            return None
        forward = owner.__dict__["forward"]
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(forward)))
    except (OSError, TypeError, SyntaxError):
        return None
    helper = None
    for node in ast.walk(tree):
        call = node.value if isinstance(node, ast.Return) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
            if call.func.value.id in ("F", "torch") and not call.func.attr.startswith("_"):
                return call.func.attr
            if call.func.value.id == "self" and helper is None:
                helper = call.func.attr  # `return self._conv_forward(input, self.weight, self.bias)`
    method = getattr(cls, helper, None) if helper else None
    if method is not None and depth < 1:
        return _forward_op(cls, method, depth + 1)
    return None


def _has_parameters(cls, parameters) -> tuple | None:
    """The parameters a default-built instance owns (sizes filled with small integers); None when it cannot be built."""
    kwargs = {}
    for p in parameters:
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            kwargs[p.name] = 2
    module = None
    for args, keywords in (((), kwargs), ((2, 2), {})):  # LSTM & co. take (*args, **kwargs)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = cls(*args, **keywords)
            break
        except Exception:
            continue
    if module is None:
        return None
    if cls.__module__ == "torch.nn.modules.container":
        return None  # Sequential, ModuleList...: their parameters are their children's
    return tuple(name for name, _ in module.named_parameters())


def render(facts: dict) -> str:
    lines = [
        f'"""torch {facts["version"]}\'s op facts, generated from its native_functions.yaml, derivatives.yaml and torch.nn by',
        "tools/generate_torch_ops.py. Do not edit: run `python -m tools.generate_torch_ops` after a torch upgrade.",
        "",
        "Names are unqualified (`add_`, `relu`, `mse_loss`): a function of torch / torch.nn.functional or a Tensor method.",
        '"""',
        "# ruff: noqa: E501",
        f"TORCH_VERSION = {facts['version']!r}",
        "",
    ]
    comments = {
        "INPLACE": "In-place ops that write their first tensor (`Tensor(a!) self`) -> their out-of-place twin (None: no twin).",
        "INPLACE_VIEWS": ("In-place ops that change only a tensor's shape or strides (tagged `inplace_view`: `unsqueeze_`, `t_`) -> their "
                          "out-of-place twin: no value is written, but the version counter moves as for any in-place op."),
        "VIEWS": "Ops whose result may share storage with their input (torchgen's RETURNS_VIEWS_OF_INPUT, detach excluded).",
        "ALIAS_VIEWS": "Views that never copy (a copy on a non-contiguous input: `reshape`, `flatten`, `contiguous` are not).",
        "OUT_VARIANTS": "Ops with an `out=` variant.",
        "POINTWISE": "Ops tagged `pointwise`: the result has the broadcast shape of the inputs.",
        "REDUCTIONS": "Ops that reduce (a `keepdim` argument, or one element from a 2x3 input).",
        "REDUCTION_DIMS": ("Reductions along a `dim` -> dim: its position after self (the same in every overload taking an "
                           "int dim); keepdim: its position, None where not positional in every one; free: the other "
                           "arguments, never tensors (`p`, `dtype`, `unbiased`), which do not shape the result."),
        "INT_RESULT": "Tensor methods/functions whose result is an integer or bool tensor on float input.",
        "FLOAT_RESULT": "Tensor methods/functions whose result is floating point on integer input.",
        "NONDIFFERENTIABLE": "No gradient flows through the result (output_differentiability False, no derivative, or an integer result).",
        "ZERO_GRADIENT": "Differentiable only formally: every gradient formula is zeros_like (round, sign, floor...).",
        "TENSOR_OPS": "Differentiable ops returning tensors: the result is in the graph of its inputs.",
        "SAME_SHAPE": "Ops whose result has their input's shape (pointwise, or found so by calling them on 2x3 and 1-element tensors).",
        "KEEPS_NUMEL": "Differentiable tensor methods whose result never has fewer elements than the receiver (found by calling them "
                       "with small dims/sizes on a 2x3 tensor of distinct values and of zeros: view, reshape, squeeze, expand...).",
        "LOSSES": "torch.nn.functional losses -> position of their `reduction` argument.",
        "LEGACY_REDUCE": "torch.nn.functional losses -> position of their deprecated `reduce` argument (False: no reduction).",
        "SAVED": "op -> {tensor argument i (0: the receiver of a method call): what computing its gradient saves, tensor arguments "
                 "by position and \"result\" for the output (of a tuple, a floating one: `sort` keeps only its indices)}. Autograd "
                 "saves them only when input i requires grad. An op returning a tuple only when given a dim: its other forms.",
        "SAVED_WITH_DIM": "Ops returning one tensor, or a tuple when given a dim (`max(x)`, `max(x, 1)`) -> SAVED's entry of the "
                          "tuple forms (`max.dim` keeps its indices and the input's sizes: no tensor argument, no floating output).",
        "FACTORIES": "Factories -> dtype class of their result without dtype=: float, int, like (the input's), data (the values'); "
                     "values: data taken as the first argument (torch.tensor([...])).",
        "RANDOM_FACTORIES": "Factories whose values are drawn at random (their schema takes a `Generator? generator`).",
        "LEGACY_CONSTRUCTORS": "torch.FloatTensor & co. -> the dtype they make.",
        "DTYPES": "torch dtypes -> class: float (floating and complex) or int (integer and bool).",
        "METADATA_METHODS": "Tensor methods that read facts or do autograd bookkeeping, not values.",
        "METADATA_ATTRIBUTES": "Tensor attributes that are facts about it, not its values.",
        "QUERY_FUNCTIONS": "torch functions whose result is a fact about their argument (type, size), not its values.",
        "GRAPH_CUTS": "Reads whose result has no autograd history: a Python value, or a tensor sharing storage without a graph.",
        "PYTHON_VALUES": "Tensor methods whose result is a Python or NumPy value.",
        "SAME_VALUES": "Tensor methods whose result holds the same values (copies, dtype/device/layout conversions; maybe the tensor itself).",
        "BOOKKEEPING": "Tensor methods ending in `_` that change flags, sharing or shape, never values (requires_grad_, resize_...).",
        "DEVICE_MOVES": "Tensor methods whose result's device is chosen by the call (to, cuda, type_as, new_zeros...).",
        "FACTORY_METHODS": "Tensor methods that make a new tensor taking only the receiver's dtype and device, never its values "
                           "(new_zeros, new_empty..., the legacy `new(*sizes)` / `new(data)`).",
        "GRAPH_RUNS": "Tensor methods that run the autograd graph rooted at the receiver, never reading its values "
                      "(probed: two leaves of different values given the same gradient get the same gradients).",
        "OVERWRITES": "In-place ops that replace every value without reading it (their gradient for self is zeros_like).",
        "PARTIAL_WRITES": "In-place ops that replace some values without reading them (gradient zero where written).",
        "METHODS": "Callable attributes of torch.Tensor.",
        "MODULE_ITERATORS": "nn.Module generator methods (parameters(), named_buffers(), modules()...).",
        "MODULE_METHODS": "Methods of nn.Module (a subclass's override of one may be run by torch itself: train, _apply...).",
        "FUNCTIONAL": "Functions of torch.nn.functional.",
        "MODULES": "torch.nn classes -> op: functional op called by forward; keeps_parameters: a recurrent layer keeps its weights even fed data; inplace/reduction/reduce: __init__ position (-1 keyword only); "
                   "parameters: names of its own parameters when built (None: could not build one); method: the Tensor method "
                   "a forward returns of its input instead (nn.Flatten), with its arguments' __init__ positions and defaults; "
                   "geometry: the __init__ position and default of each argument its output sizes depend on (kernel_size, "
                   "stride, padding, dilation, output_padding, ceil_mode) for layers taking a kernel_size.",
        "TUPLE_RESULTS": "Ops returning several tensors (an overload's `(Tensor values, Tensor indices)`) -> dtype class of each "
                         "output on float input (int: indices; float: the input's own dtype); dim: only when called with a dim (max(x) is one tensor); "
                         "names: the fields of its named tuple (`.indices`).",
        "DISTRIBUTIONS": "torch.distributions classes (Distribution subclasses): they keep the tensors they are built from.",
        "MODULE_WRAPPERS": "torch.nn.utils functions that hand back the very module they were given, changed in place "
                           "(found by calling each with a fresh nn.Linear alone): weight_norm, spectral_norm...",
        "DISTRIBUTION_GRAD_METHODS": "Distribution methods whose result carries the graph of the tensors it was built from "
                                     "(found by calling them on distributions of tensors requiring grad): log_prob, entropy...",
        "DISTRIBUTION_PARAMETERS": "Distributions of scalar samples (support.event_dim 0) -> their constructor's parameters in order, "
                                   "each with its trailing non-batch dims (arg_constraints' event_dim; None: not a constrained tensor).",
        "DISTRIBUTION_SHAPED_METHODS": "Distribution methods -> batch: without argument, the batch shape (sample, entropy); value: the "
                                       "broadcast of the value given with the batch shape (log_prob) (found by calling them).",
        "INDEX_SHAPED": "Ops whose result has the shape of their index tensor -> its position (0: the receiver of a method call): "
                        "gather, take... (found by calling them with indices of several shapes).",
        "FACTORY_SIZES": "Factories -> {number of positional arguments without a default: position of the `size` argument} "
                         "(native_functions.yaml: randint(high, size), randint(low, high, size)).",
        "BETA_SCALED": "Ops computing beta * self + ... (derivatives.yaml: self's gradient is maybe_multiply(grad, beta)) -> "
                       "position of `beta` (0: self): with beta=0 the result ignores self's values.",
        "PER_INPUT_VIEWS": "Ops taking a list of tensors whose i-th output is a view of the i-th input alone (found by calling "
                           "them on two tensors): broadcast_tensors, meshgrid...",
        "SHAPE_FUNCTIONS": "op -> names of the shape functions torch.jit._shape_functions maps its overloads to (unary: the "
                           "input's shape; linear, conv2d, max_pool2d...: how the result's dims follow from the input's).",
        "ONE_TENSOR": "Ops whose every overload takes exactly one tensor (the rest: sizes, dims, flags, scalars): "
                      "`x.repeat(n, 1)`, `torch.multinomial(p, k)` meet no other tensor.",
        "RESIZES": "torch.nn.functional functions whose result keeps the input's dims before the spatial ones and has "
                   "`size` as its spatial dims (found by calling them on 3- to 5-dim inputs) -> the position of `size`.",
        "SHAPE_OPERANDS": "Tensor methods `x.op(other)` whose result takes only metadata (dtype, shape, device) from `other` "
                          "(found by calling them with only `other` requiring grad): type_as, view_as, expand_as...",
        "CLOSURE_LOOPS": "torch.optim optimizers whose step(closure) evaluates the closure in a loop, updating the parameters in between.",
        "TRACKING_ATTRIBUTES": "Tensor attributes whose value tells a tensor requiring grad from a `.detach().clone()` of it "
                               "taken before an in-place update (found by reading both after a backward and an update).",
    }
    for key, comment in comments.items():
        lines.append(f"# {comment}")
        lines.append(f"{key} = {_literal(facts[key])}")
        lines.append("")
    return "\n".join(lines)


def _literal(value) -> str:
    if isinstance(value, (set, frozenset)):
        items = sorted(value)
        return "frozenset({\n" + "".join(f"    {item!r},\n" for item in items) + "})" if items else "frozenset()"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{\n" + "".join(f"    {key!r}: {_flat(item)},\n" for key, item in sorted(value.items())) + "}"
    return repr(value)


def _flat(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_flat(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, (set, frozenset)):
        return repr(tuple(sorted(value)))
    return repr(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the checked-in module instead of writing it")
    options = parser.parse_args(argv)
    text = render(collect())
    if options.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True), str(TARGET), "regenerated", n=1))
            print(f"\n{TARGET} is out of date with torch: run `python -m tools.generate_torch_ops`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
