"""## What it does
Flags calls to `torch.range(start, end, step)` (under any import alias).

## Why is this bad?
`torch.range` is deprecated and will be removed. It is also easy to misread: unlike Python's `range`
and `torch.arange`, it *includes* its end point, and it always returns a floating point tensor
(the default dtype) even for integer arguments: `torch.range(1, 4)` is `tensor([1., 2., 3., 4.])`.

## Example
```python
idx = torch.range(0, n - 1)       # 0., 1., ..., n - 1.
grid = torch.range(0, 1, 0.25)    # 0., 0.25, 0.5, 0.75, 1.
```

## Use instead
```python
idx = torch.arange(0, n, dtype=torch.float32)
grid = torch.arange(0, 1.25, 0.25)
```
`torch.arange(start, end + step, step)` gives the same values when `end - start` is a whole number
of steps. With integer arguments `arange` returns `int64`, so the fix adds `dtype=torch.float32` to
keep `range`'s float result; drop it where integers were what you wanted.

## Fix safety
Safe when the fix can show that the values and the dtype are unchanged: literal bounds (the new end is
computed and checked against torch's size formulas; `torch.range(1, 4)` becomes
`torch.arange(1, 5, dtype=torch.float32)`), and integer counts such as `torch.range(0, n - 1)`, which
becomes `torch.arange(0, n, dtype=torch.float32)`. Unsafe when a bound or the step may be fractional
(a variable end with a float step: `torch.arange` may then produce one element more), and when the
module changes torch's default dtype.

## Runtime signature
`UserWarning: torch.range is deprecated and will be removed in a future release because its behavior is
inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).`
"""
from __future__ import annotations

import ast
import math
import sys
from decimal import Decimal, InvalidOperation

from ..analysis.model import ModuleModel
from ..analysis.provenance import Kind
from ..analysis import uses
from ..analysis.torch_api import DEFAULT_DTYPE_SETTERS, INT
from ..findings import Edit, Fix, Safety, Severity, Span

CODE = "AG011"
NAME = "deprecated-range"
SEVERITY = Severity.INFO
SUMMARY = "torch.range is deprecated (and includes its end point); use torch.arange"
RUNTIME_SIGNATURE = "UserWarning: torch.range is deprecated"
RULE = sys.modules[__name__]


def check(model: ModuleModel):
    default_dtype_changed = any(event.qualname in DEFAULT_DTYPE_SETTERS for event in model.calls())
    calls = [event.node for event in model.calls() if event.qualname == "torch.range"]
    calls += _unwalked_calls(model, {id(call) for call in calls})
    for call in sorted(calls, key=lambda node: (node.lineno, node.col_offset)):
        fix = _fix(model, call, default_dtype_changed)
        message = ("`torch.range` is deprecated: it includes its end point, unlike `range` and `torch.arange`, "
                   "and returns floats even for integer arguments. Use `torch.arange` with the end moved one step further")
        if fix is not None:
            message += f": `{fix[1]}`"
        yield model.finding(RULE, call, message, fixes=[fix[0]] if fix is not None else [])


def _unwalked_calls(model: ModuleModel, seen: set) -> list[ast.Call]:
    """`torch.range` where the walk does not evaluate code (class bodies, default arguments, lambdas); rare, so only
    looked for when the text mentions it."""
    names = [local for local, qualname in model.imports.names.items() if qualname == "torch"]
    direct = [local for local, qualname in model.imports.names.items() if qualname == "torch.range"]
    text = model.source.text
    if not any(f"{name}.range" in text for name in names) and not direct:
        return []
    return [node for node in ast.walk(model.tree) if isinstance(node, ast.Call) and id(node) not in seen
            and model.imports.qualname(node.func) == "torch.range"]


# -- the fix ------------------------------------------------------------------------------------------

def _arguments(call: ast.Call):
    """(start, end, step) argument nodes, None where absent; None for calls torch.range would reject."""
    args = list(call.args)
    if any(isinstance(arg, ast.Starred) for arg in args) or any(kw.arg is None for kw in call.keywords) or len(args) > 3:
        return None
    keywords = {kw.arg: kw.value for kw in call.keywords}
    slots = args + [None] * (3 - len(args))
    for index, name in enumerate(("start", "end", "step")):
        if name in keywords:
            if slots[index] is not None:
                return None
            slots[index] = keywords[name]
    if slots[0] is None or slots[1] is None:
        return None
    return slots


def _literal(node: ast.AST | None):
    """The value of an int/float literal (`-1` included), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    return None


def _decimal(model: ModuleModel, node: ast.AST, value) -> Decimal:
    """The literal as the user wrote it (0.1 stays 0.1), for arithmetic without binary rounding."""
    try:
        return Decimal(model.text(node).replace(" ", ""))
    except (InvalidOperation, ValueError):
        return Decimal(repr(value))


def _format(number: Decimal, is_float: bool) -> str:
    text = format(number.normalize(), "f")
    if text == "-0":
        text = "0"
    if is_float and "." not in text:
        text += ".0"
    return text


def _range_size(start: float, end: float, step: float) -> int:
    return int((end - start) / step + 1)  # torch.range: trunc((end - start) / step + 1), in double


def _arange_size(start: float, end: float, step: float) -> int:
    return max(math.ceil((end - start) / step), 0)  # torch.arange: ceil((end - start) / step), in double


def _is_whole(model: ModuleModel, node: ast.AST) -> bool:
    """Known to hold a whole number: an int literal, an int variable, len()/size()/shape[...], sums of those."""
    value = _literal(node)
    if value is not None:
        return isinstance(value, int)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        return _is_whole(model, node.left) and _is_whole(model, node.right)
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else None)
        return name in uses.INT_RESULTS
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        return True
    prov = model.prov(node)
    return prov is not None and prov.kind is Kind.NUMBER and prov.dtype == INT


def _needs_parens(node: ast.AST) -> bool:
    return isinstance(node, (ast.IfExp, ast.Lambda, ast.BoolOp, ast.Compare, ast.NamedExpr, ast.Starred))


def _dyadic(number: Decimal) -> bool:
    """Exact in binary with a small denominator (0.25, 1.5, 3): torch.range and torch.arange then agree bit for bit."""
    return (number * 1024) == (number * 1024).to_integral_value()


def _offset(node: ast.AST) -> bool:
    """`n - 1`, `n + 2`: a count shifted by a whole number, so almost surely whole itself."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and isinstance(_literal(node.right), int)


def _shifted(model: ModuleModel, node: ast.AST, step: int) -> tuple[str, bool]:
    """`node + step` as source text, folding `n - 1` + 1 into `n`; and whether the fold assumed a whole `n`."""
    value = _literal(node)
    if isinstance(value, int):
        return str(value + step), False
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        constant = _literal(node.right)
        if isinstance(constant, int):
            offset = (constant if isinstance(node.op, ast.Add) else -constant) + step
            left = model.text(node.left)
            if _needs_parens(node.left):
                left = f"({left})"
            if offset == 0:
                return left, True
            return (f"{left} + {offset}" if offset > 0 else f"{left} - {-offset}"), True
    text = model.text(node)
    if _needs_parens(node):
        text = f"({text})"
    return (f"{text} + {step}" if step > 0 else f"{text} - {-step}"), False


def _new_end(model: ModuleModel, start, end, step) -> tuple[str, bool] | None:
    """The end for torch.arange and whether the rewrite is known to keep every value."""
    start_value, end_value = _literal(start), _literal(end)
    step_value = 1 if step is None else _literal(step)
    if step_value == 0:
        return None
    if start_value is not None and end_value is not None and step_value is not None:
        # Everything literal: compute the new end, and check torch would make the same number of elements.
        is_float = any(isinstance(v, float) for v in (start_value, end_value, step_value))
        d_end = _decimal(model, end, end_value)
        d_step = Decimal(1) if step is None else _decimal(model, step, step_value)
        wanted = _range_size(float(start_value), float(end_value), float(step_value))
        bitwise = _dyadic(_decimal(model, start, start_value)) and _dyadic(d_step)
        for candidate in (d_end + d_step, d_end + d_step / 2):
            text = _format(candidate, is_float)
            if _arange_size(float(start_value), float(text), float(step_value)) == wanted:
                return text, bitwise
        return None
    if isinstance(step_value, int):
        # Exact when end - start is a whole number of steps: whole bounds (a shifted count `n - 1` counts as whole).
        text, folded = _shifted(model, end, step_value)
        whole = (folded or _is_whole(model, end)) and (_offset(start) or _is_whole(model, start))
        return text, whole
    if step is not None:
        step_text = model.text(step)
        end_text = model.text(end)
        if _needs_parens(end):
            end_text = f"({end_text})"
        if isinstance(step, (ast.BinOp, ast.IfExp, ast.BoolOp, ast.Compare, ast.Lambda, ast.NamedExpr)):
            step_text = f"({step_text})"
        return f"{end_text} + {step_text}", False
    return None


def _fix(model: ModuleModel, call: ast.Call, default_dtype_changed: bool) -> tuple[Fix, str] | None:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None  # `from torch import range`: the rewrite would need a new import
    slots = _arguments(call)
    if slots is None:
        return None
    start, end, step = slots
    computed = _new_end(model, start, end, step)
    if computed is None:
        return None
    end_text, exact = computed
    keywords = {kw.arg for kw in call.keywords}
    literals = [_literal(node) for node in (start, end, step) if node is not None]
    float_literal = any(isinstance(value, float) for value in literals)
    add_dtype = "dtype" not in keywords and "out" not in keywords and not float_literal
    safe = exact and not (add_dtype and default_dtype_changed)
    func_span = model.span(func)
    edits = [Edit(Span(func_span.end_line, func_span.end_col - len("range"), func_span.end_line, func_span.end_col), "arange"),
             Edit(model.span(end), end_text)]
    torch_text = model.text(func.value)
    if add_dtype:
        last = max([*call.args, *(kw.value for kw in call.keywords)], key=lambda n: (n.end_lineno, n.end_col_offset))
        last_span = model.span(last)
        edits.append(Edit(Span(last_span.end_line, last_span.end_col, last_span.end_line, last_span.end_col), f", dtype={torch_text}.float32"))
    preview = _preview(model, call, edits)
    title = f"Replace with `{preview}`"
    return Fix(title, Safety.SAFE if safe else Safety.UNSAFE, tuple(edits)), preview


def _preview(model: ModuleModel, call: ast.Call, edits: list[Edit]) -> str:
    """The call's text after the edits (single-line calls; others are shortened)."""
    from ..fixes import apply_edits

    span = model.span(call)
    if span.line != span.end_line:
        return f"{model.text(call.func)[:-len('range')]}arange(...)"
    line = model.source.line_text(span.line)
    shifted = [Edit(Span(1, e.span.col - span.col, 1, e.span.end_col - span.col), e.text) for e in edits]
    return apply_edits(line[span.col:span.end_col], shifted)
