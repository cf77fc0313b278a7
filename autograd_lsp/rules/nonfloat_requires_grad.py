"""## What it does
Flags `requires_grad=True`, `.requires_grad_()` or `x.requires_grad = True` on a tensor whose dtype is known
to be integer or bool: integer literals in `torch.tensor`, `arange` with integer arguments,
`dtype=torch.long`, `.long()`/`.int()`, `randint`, comparison results, the indices of ops returning
`(values, indices)` (`_, i = x.max(1)`, `x.topk(k).indices`, from torch's own return types), and helpers that
return one of these; in a helper, `torch.arange(n)` / `torch.tensor(values)` of its parameter when a call passes an
integer (or a list of them), whether the helper asks for grad later or in the factory itself (`requires_grad=True`);
also a key of a dict parameter (`torch.arange(cfg["n"])`) and parameters passed on by the callers' own bodies
(`Binning(cfg["lo"], cfg["hi"])` in a constructor given `{"lo": 20, "hi": 80}`).

## Why is this bad?
Gradients are only defined for floating point (and complex) tensors; PyTorch refuses at once ("Only Tensors of
floating point and complex dtype can require gradients").
The usual cause is a literal written as `[1, 2, 3]` instead of `[1., 2., 3.]`.

## Example
```python
e = torch.arange(1, 5).view(2, 2)
e.requires_grad_(True)
```

## Use instead
```python
e = torch.arange(1, 5, dtype=torch.float32).view(2, 2)
e.requires_grad_(True)
```

## Fix safety
Adding `dtype=torch.float32` to a factory whose values are small integer literals or integer ranges is
safe: the values are exactly representable. Replacing an explicit integer `dtype=` or inserting `.float()`
is unsafe.

## Runtime signature
`RuntimeError: Only Tensors of floating point and complex dtype can require gradients`
"""
from __future__ import annotations

import ast
import sys

from ..analysis.model import AttrStoreEvent, CallEvent, ModuleModel
from ..analysis.provenance import Kind
from ..analysis.torch_api import INT
from ..findings import Edit, Fix, Safety, Severity, Span
from . import edits

CODE = "AG004"
NAME = "nonfloat-requires-grad"
SEVERITY = Severity.ERROR
SUMMARY = "requires_grad on a tensor whose dtype is integer or bool"
RUNTIME_SIGNATURE = "RuntimeError: Only Tensors of floating point and complex dtype can require gradients"
RULE = sys.modules[__name__]

EXACT = 2 ** 24  # integers up to this magnitude are exact in float32


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def check(model: ModuleModel):
    for event in model.of_type(CallEvent):
        if event.role == "requires_grad_":
            prov = event.receiver_prov
            value = event.node.args[0] if event.node.args else (event.keyword("requires_grad").value if event.keyword("requires_grad") else None)
            if prov is not None and prov.kind is Kind.TENSOR and prov.dtype == INT and (value is None or _is_true(value)):
                yield _method_finding(model, event, prov)
        elif event.result is not None and event.result.kind is Kind.TENSOR and event.qualname and event.result.dtype == INT:
            keyword = event.keyword("requires_grad")
            is_parameter = event.result.origin == "nn.Parameter" and event.result.requires_grad
            if keyword is not None and _is_true(keyword.value) or is_parameter:
                yield _factory_finding(model, event, keyword)
    for event in model.of_type(AttrStoreEvent):
        prov = event.prov
        if event.target.attr == "requires_grad" and prov is not None and prov.kind is Kind.TENSOR and prov.dtype == INT and _is_true(event.value):
            yield _attribute_finding(model, event, prov)


def _factory_finding(model, event: CallEvent, keyword):
    call = event.node
    torch = model.imports.torch_alias or "torch"
    name = model.text(call.func)
    if event.result.origin in ("nn.Parameter", "Variable"):  # a wrapper takes no dtype=: convert what it wraps
        what = "a Parameter requires grad" if event.result.origin == "nn.Parameter" else "it is asked to require grad"
        message = f"`{name}(...)` wraps an integer tensor: {what}, which needs a floating point dtype"
        fixes = []
        if call.args:
            fixes.append(Fix("Convert the data with `.float()`", Safety.UNSAFE, (Edit(_end(model, call.args[0]), ".float()"),)))
        return model.finding(RULE, call, message, fixes=fixes)
    dtype_kw = event.keyword("dtype")
    short = name.rsplit(".", 1)[-1]
    if dtype_kw is not None:
        why = f"`dtype={model.text(dtype_kw.value)}`"
    elif short in ("randint", "randperm", "randint_like") or short.endswith(("LongTensor", "IntTensor", "BoolTensor", "ByteTensor")):
        why = "an integer dtype by definition"
    elif short.endswith("_like"):
        why = "the integer dtype of the tensor it copies"
    elif event.ctx.via is not None:  # (a helper's factory, walked for a call that passes integers)
        why = f"the call at line {event.ctx.via.statement.lineno} passes integers"
    else:
        why = "its values are integer literals"
    message = (f"`{name}(...)` makes an integer tensor ({why}) but asks for `requires_grad=True`: "
               f"only floating point tensors can require gradients. Use float values or `dtype={torch}.float32`")
    fixes = []
    if dtype_kw is not None:
        fixes.append(Fix(f"Use `dtype={torch}.float32`", Safety.UNSAFE, (Edit(model.span(dtype_kw.value), f"{torch}.float32"),)))
    else:
        # (values a caller passes are not seen here: exact only for a range)
        safety = Safety.SAFE if _exact(call) and (event.ctx.via is None or short == "arange") else Safety.UNSAFE
        fixes.append(Fix(f"Add `dtype={torch}.float32`", safety, (Edit(_end(model, keyword.value), f", dtype={torch}.float32"),)))
    return model.finding(RULE, keyword, message, fixes=fixes)


def _exact(call: ast.Call) -> bool:
    """All literal integers small enough to be exact in float32 (non-literal sizes/bounds count as exact only for ranges)."""
    for node in ast.walk(call):
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool) and abs(node.value) > EXACT:
            return False
    return True


def _end(model, node) -> Span:
    span = model.span(node)
    return Span(span.end_line, span.end_col, span.end_line, span.end_col)


def _method_finding(model, event: CallEvent, prov):
    receiver = model.text(event.receiver)
    message = (f"`{receiver}` is an integer tensor ({model.describe(prov)}); `requires_grad_()` needs a floating point dtype. "
               f"Convert it first with `.float()`")
    fixes = []
    stmt = event.ctx.statement
    bare = isinstance(stmt, ast.Expr) and stmt.value is event.node
    if bare and isinstance(event.receiver, (ast.Name, ast.Attribute)):
        call_text = model.text(event.node)
        fixes.append(Fix(f"Rebind `{receiver}` to a float copy: `{receiver} = {receiver}.float().requires_grad_(…)`", Safety.UNSAFE,
                         (Edit(model.span(stmt), f"{receiver} = {receiver}.float(){call_text[len(receiver):]}"),)))
    elif not bare:
        # the result is used (`x = (a > 0).requires_grad_()`): convert the receiver in the chain
        func = event.node.func  # insert right before the method name, after any closing parenthesis of the receiver
        line = func.end_lineno or func.lineno
        col = model.char_col(line, func.end_col_offset or 0) - len(func.attr)
        fixes.append(Fix("Convert with `.float()` before `requires_grad_()`", Safety.UNSAFE, (Edit(Span(line, col, line, col), "float()."),)))
    return model.finding(RULE, event.node, message, fixes=fixes, related=[(prov.node, "integer tensor made here")], target=receiver)


def _attribute_finding(model, event: AttrStoreEvent, prov):
    receiver = model.text(event.target.value)
    message = f"`{receiver}` is an integer tensor ({model.describe(prov)}); setting `requires_grad = True` needs a floating point dtype"
    fixes = []
    stmt = event.node
    if isinstance(event.target.value, (ast.Name, ast.Attribute)) and edits.own_line(model, stmt):
        fixes.append(Fix(f"Convert `{receiver}` with `.float()` first", Safety.UNSAFE,
                         (edits.insert_before(model, stmt, f"{receiver} = {receiver}.float()"),)))
    return model.finding(RULE, event.target, message, fixes=fixes, related=[(prov.node, "integer tensor made here")], target=receiver)
