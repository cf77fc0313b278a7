"""How a value is used, classified once for every rule: a metadata read, a passive (reporting) use, a view, an in-place
write, an alias (same values), a graph cut, or a computation.

torch's part is the generated table (torch_ops); the Python part (print, len, logging) is the only list kept here.
"""
from __future__ import annotations

import ast

from . import torch_ops as ops
from .syntax import basic_index

_ALIAS_PROPERTIES = ops.ALIAS_VIEWS - ops.METHODS  # `.T`, `.mT`: read as attributes, not called
METADATA, PASSIVE, VIEW, WRITE, ALIAS, CUT, COMPUTE = "metadata", "passive", "view", "write", "alias", "cut", "compute"

# Python builtins that show a value (they read it) and ones that only look at the object.
PRINTERS = frozenset({"print", "repr", "str", "format", "pprint"})
INSPECTORS = frozenset({"len", "isinstance", "type", "id", "hasattr", "getattr", "setattr", "callable", "vars", "dir"})
REPORTER_FUNCTIONS = PRINTERS | INSPECTORS
# Methods of loggers, writers and progress bars (logging, TensorBoard, tqdm, Lightning, wandb): they record a value.
REPORTER_METHODS = frozenset({"info", "debug", "warning", "warn", "error", "critical", "exception", "log", "log_dict", "log_metrics",
                              "add_scalar", "add_scalars", "add_histogram", "append_text", "set_postfix", "set_postfix_str",
                              "set_description", "write", "report", "format"})
# Builtins that turn a one-element tensor into a Python number (the result has no graph).
NUMBER_CASTS = frozenset({"float", "int", "round", "bool", "complex"})
# Methods of Python containers that hold values without computing with them.
CONTAINER_METHODS = frozenset({"clear", "__len__", "copy", "keys", "values", "items"})
# Those whose result holds the stored values themselves (`sum(losses.values())` computes with them).
CONTAINER_VALUES = frozenset({"copy", "values", "items"})
# Builtins whose result is a Python int whatever they are given (`len(x)`, `int(n)`); tensor reads add theirs.
INT_RESULTS = frozenset({"len", "int", "size", "numel", "dim", "__len__", "item"})
# Ways to put values in a Python container (`losses.append(loss)`), with their number of positional arguments: a call
# of another shape (`meter.append(loss, count=n)`) is some other object's method.
APPENDERS = {"append": 1, "extend": 1, "insert": 2}


def list_append(call: ast.Call) -> bool:
    """`x.append(v)` / `x.extend(vs)` / `x.insert(i, v)` in the shape a list's method is called with."""
    func = call.func
    return isinstance(func, ast.Attribute) and APPENDERS.get(func.attr) == len(call.args) and not call.keywords and \
        not any(isinstance(arg, ast.Starred) for arg in call.args)
# Calls that hold the values they are given (a state dict, a record) without computing with them.
CONTAINERS = frozenset({"dict", "list", "tuple", "set", "frozenset", "OrderedDict", "defaultdict", "namedtuple", "SimpleNamespace"})
# attribute bags built from keywords (`SimpleNamespace(mean=[...])`, `argparse.Namespace(...)`): their attributes are the keywords
NAMESPACES = frozenset({"types.SimpleNamespace", "argparse.Namespace"})
# Python aggregates over a container: the result is still the values (a float for floats, a tensor for tensors).
AGGREGATES = frozenset({"sum", "min", "max", "mean", "average", "median", "fsum", "array", "asarray", "sorted", "list", "tuple", "abs"})
# Building a new tensor from values: a container of tensors stays a tensor (`torch.stack(losses)`).
STACKERS = frozenset({"stack", "cat", "tensor", "as_tensor"}) & (ops.TENSOR_OPS | set(ops.FACTORIES))
# Helpers that copy whatever they are given without computing with it (`copy.deepcopy(model)`).
COPIERS = frozenset({"deepcopy", "copy"})
# Test helpers that compare values.
CHECKERS = frozenset({"assert_close", "assert_allclose", "allclose"})
# Calls that replace a model's values wholesale (torch, Lightning, Hugging Face).
WEIGHT_LOADERS = frozenset({"load_state_dict", "load", "from_pretrained", "load_from_checkpoint", "load_checkpoint", "apply"})


def method(name: str) -> str:
    """The use a call `x.name(...)` makes of the tensor x."""
    if name in ops.METADATA_METHODS or name in ops.BOOKKEEPING:
        return METADATA
    if name in ops.GRAPH_CUTS:
        return CUT
    if name in ops.INPLACE:
        return WRITE
    if name in ops.VIEWS or name in ops.INPLACE_VIEWS:  # (`x.t_()` returns x itself, reshaped)
        return VIEW
    if name in ops.SAME_VALUES:
        return ALIAS
    if name in REPORTER_METHODS:
        return PASSIVE
    return COMPUTE


def reads_device(node: ast.AST) -> bool:
    """`x.device`, `x.is_cuda`, `x.get_device()`, `x.type()`: the expression tells where the receiver lives (a test
    that guards moving it). `Tensor.type()` with no argument names the type, device included
    (`'torch.cuda.FloatTensor'`); given one it converts, which is no inspection."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args and not node.keywords:
        return node.func.attr in ("get_device", "type")
    return isinstance(node, ast.Attribute) and node.attr in ("device", "is_cuda")


def attribute(name: str) -> str:
    """The use a read `x.name` makes of the tensor x."""
    if name in ops.GRAPH_CUTS:  # .data
        return CUT
    if name in ops.METADATA_ATTRIBUTES:
        return METADATA
    if name in ops.VIEWS:  # .T, .mT, .real
        return VIEW
    return COMPUTE


def receiver(callee: str | None) -> str:
    """The use of a UseEvent with usage "receiver": its callee is "name" for `x.name(...)`, ".name" for `x.name`, "[]" for
    `x[...]`."""
    if not callee or callee == "[]":
        return COMPUTE
    if callee.startswith("."):
        return attribute(callee[1:])
    return method(callee)


def passive_receiver(callee: str | None) -> bool:
    """`x.item()`, `x.shape`, `x.detach()`, `x.size(0)`, `x.data`: the read neither computes with x nor changes it."""
    return receiver(callee) in (METADATA, CUT, PASSIVE)


def is_reporter(name: str | None) -> bool:
    """`print(x)`, `len(x)`, `logger.info(x)`, `writer.add_scalar(tag, x)`: the value is looked at, not computed with."""
    return name in REPORTER_FUNCTIONS or name in REPORTER_METHODS


def is_query(qualname: str | None) -> bool:
    """`torch.is_tensor(x)`, `torch.numel(x)`: a torch function that answers a question about its argument, not its values."""
    return bool(qualname) and qualname.startswith("torch.") and qualname[len("torch."):] in ops.QUERY_FUNCTIONS


def is_metadata(name: str) -> bool:
    """`x.shape`, `x.size()`, `x.dtype`, `x.requires_grad`, `x.register_hook(...)`: facts, not values."""
    return name in ops.METADATA_METHODS or name in ops.METADATA_ATTRIBUTES


def is_bookkeeping(name: str) -> bool:
    """`x.requires_grad_()`, `x.share_memory_()`, `x.resize_(n)`: flags, sharing or shape change; the values stay."""
    return name in ops.BOOKKEEPING


def is_conversion(name: str) -> bool:
    """`x.long()`, `x.float()`, `x.bool()`: the same values in another dtype (named after it)."""
    return name in ops.DTYPES and name in ops.METHODS


def runs_graph(name: str) -> bool:
    """`x.backward(...)`: runs the graph rooted at x (its history, its shape), never reads x's values."""
    return name in ops.GRAPH_RUNS


def is_tensor_factory_method(name: str) -> bool:
    """`x.new_zeros(n)`, `x.new_empty(n)`, the legacy `x.new(n)`: a new tensor that takes only x's dtype and device."""
    return name in ops.FACTORY_METHODS


def is_tensor_method(name: str) -> bool:
    return name in ops.METHODS


def is_cut(name: str) -> bool:
    """`x.item()`, `x.detach()`, `x.data`, `x.numpy()`: the result carries no graph."""
    return name in ops.GRAPH_CUTS


def to_python(name: str) -> bool:
    """`x.item()`, `x.tolist()`, `x.numpy()`: a Python or NumPy value."""
    return name in ops.PYTHON_VALUES


def is_view(name: str) -> bool:
    return name in ops.VIEWS


def aliased_base(node: ast.expr) -> ast.expr:
    """`x.transpose(1, 2)`, `x[:, 0]`, `x.T`: the expression whose storage (and version counter) the view shares;
    a view that may copy (`reshape`, `.contiguous()`) ends the chain."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ops.ALIAS_VIEWS:
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr in _ALIAS_PROPERTIES:
            node = node.value
        elif isinstance(node, ast.Subscript) and basic_index(node.slice):
            node = node.value
        else:
            return node


def is_write(name: str) -> bool:
    return name in ops.INPLACE


def writes_without_reading(name: str) -> bool:
    """`fill_`, `zero_`, `copy_`, `normal_`, `masked_fill_`, `index_copy_`...: the old values do not matter (all or
    the written part)."""
    return name in ops.OVERWRITES or name in ops.PARTIAL_WRITES


def keeps_values(name: str) -> bool:
    """`clone()`, `float()`, `contiguous()`, `cpu()`, `to(...)`, views: the result holds the same values."""
    return name in ops.SAME_VALUES or name in ops.VIEWS


def may_return_self(name: str) -> bool:
    """Views, and conversions that hand back the tensor itself when it already is what they ask (`to(device)`, `cpu()`,
    `contiguous()`, `float()` of a float32 parameter): the result shares the tensor's storage."""
    return name in ops.VIEWS or (name in ops.DEVICE_MOVES and not name.startswith("new_")) or name in ("contiguous", "float")


# Python container methods that add an item (a list's, a deque's): what they are given is held by the container.
ADDS_ITEMS = frozenset({"append", "extend", "insert"})


def may_share_input(name: str) -> bool:
    """Views, conversions that may hand back the tensor itself, `detach()`, and methods returning `self` (in-place ops,
    `requires_grad_`): the result may be, or share storage with, the tensor it is called on. Not `clone()` (a copy)."""
    return (may_return_self(name) or name in ops.VIEWS or name in ops.SAME_VALUES and name != "clone"
            or name in ops.GRAPH_CUTS or name in ops.BOOKKEEPING or name in ops.INPLACE)


def moves_device(name: str) -> bool:
    """`to`, `cuda`, `cpu`, `type_as`, `new_zeros`...: the result's device is chosen by the call."""
    return name in ops.DEVICE_MOVES


def may_ignore_input(name: str, call: ast.Call) -> bool:
    """`torch.baddbmm(buf, q, k, beta=0)`, `torch.addmm(m, a, b, beta=scale)`: beta * input + ...; with beta zero the
    input's values are not read (only its shape and dtype), and a beta that is not a constant may be zero."""
    if name not in ops.BETA_SCALED:
        return False
    beta = next((kw.value for kw in call.keywords if kw.arg == "beta"), None)
    if beta is None:
        return False
    return not isinstance(beta, ast.Constant) or not isinstance(beta.value, bool) and beta.value == 0


def beta_zero(call: ast.Call) -> bool:
    """`beta=0` given as the constant zero."""
    beta = next((kw.value for kw in call.keywords if kw.arg == "beta"), None)
    return isinstance(beta, ast.Constant) and not isinstance(beta.value, bool) and beta.value == 0


def overwrites_all(name: str) -> bool:
    """`torch.fill(t, v)`, `t.fill(v)`: the out-of-place twin of an in-place op that replaces every value without
    reading it (`fill_`): the result does not depend on t's values."""
    return ops.INPLACE.get(name + "_", "") == name and name + "_" in ops.OVERWRITES


def per_input_view(name: str) -> bool:
    """`torch.broadcast_tensors(a, b)`, `torch.meshgrid(a, b)`: the i-th result is a view of the i-th input alone."""
    return name in ops.PER_INPUT_VIEWS


def compares_values(name: str | None) -> bool:
    """`torch.allclose(w, before)`, `torch.equal(a, b)`, `(w != before).any()`: a result no gradient flows through, so
    the call looks at the values without building on them (checking a snapshot against the live tensor)."""
    return name in ops.NONDIFFERENTIABLE or name in CHECKERS


def passive(name: str) -> bool:
    """A use that neither computes with the value nor changes it: metadata, reporting, a graph cut."""
    return is_metadata(name) or is_cut(name) or is_reporter(name)
