"""## What it does
Flags a torch factory that is subscripted instead of called: `torch.tensor[[1., 2.], [3., 4.]]`,
`torch.ones[2, 3]`, `torch.zeros[n]`, any import alias (`th.tensor[...]`, `from torch import tensor`), also inside a
lambda (`field(default_factory=lambda: torch.tensor[...])`) or a class attribute (annotations are left alone).

## Why is this bad?
`torch.tensor` is a function; square brackets try to index the function object itself, which Python
refuses the moment the line runs ("'builtin_function_or_method' object is not
subscriptable"). The brackets were meant as the list literal, or as the call.

## Example
```python
h.backward(torch.tensor[[1., 1.], [1., 1.], [1., 1.]])
```

## Use instead
```python
h.backward(torch.tensor([[1., 1.], [1., 1.], [1., 1.]]))
```

## Fix safety
Safe: the subscript always raises, so no working program changes. Data constructors (`tensor`,
`as_tensor`, `Tensor`, `FloatTensor`…) keep the brackets as the list literal and gain the call's
parentheses; other factories (`ones`, `zeros`, `arange`, `randn`…) take the subscript's contents as
their arguments. A subscript holding a slice (`a:b`) is reported without a fix.

## Runtime signature
`TypeError: 'builtin_function_or_method' object is not subscriptable`
"""
from __future__ import annotations

import ast
import sys

from ..analysis.model import ModuleModel
from ..analysis.torch_api import LEGACY_CONSTRUCTORS, VALUE_FACTORIES
from ..findings import Edit, Fix, Safety, Severity

CODE = "AG013"
NAME = "tensor-subscript-typo"
SEVERITY = Severity.ERROR
SUMMARY = "A torch factory subscripted (`torch.tensor[...]`) instead of called"
RUNTIME_SIGNATURE = "TypeError: 'builtin_function_or_method' object is not subscriptable"
RULE = sys.modules[__name__]


def check(model: ModuleModel):
    rebound = None
    for node, qualname in model.torch_subscripts:
        if not isinstance(node.ctx, ast.Load):
            continue
        if isinstance(node.value, ast.Name):
            # `from torch import tensor` and later `tensor = batch[0]`: the name no longer means the factory
            rebound = _rebound_names(model.tree) if rebound is None else rebound
            if node.value.id in rebound:
                continue
        short = qualname.rsplit(".", 1)[-1]
        func = model.text(node.value)
        is_class = short[:1].isupper()
        what = "the class" if is_class else "the function"
        error = f"type '{short}' is not subscriptable" if is_class else "'builtin_function_or_method' object is not subscriptable"
        fix = _fix(model, node, func, short)
        call = fix.edits[0].text if fix is not None else f"{func}(...)"
        if len(call) > 60:
            call = f"{func}([...])" if short in VALUE_FACTORIES or short in LEGACY_CONSTRUCTORS else f"{func}(...)"
        message = f"`{func}[...]` subscripts {what} `{func}` instead of calling it, which raises `TypeError: {error}`; call it: `{call}`"
        yield model.finding(RULE, node, message, fixes=[fix] if fix is not None else [], factory=qualname)


def _fix(model: ModuleModel, node: ast.Subscript, func: str, short: str) -> Fix | None:
    index = node.slice
    elements = index.elts if isinstance(index, ast.Tuple) else [index]
    if any(isinstance(element, (ast.Slice, ast.Starred)) for element in elements):
        return None
    inner = model.text(index)
    if short in VALUE_FACTORIES or short in LEGACY_CONSTRUCTORS:
        text = f"{func}([{inner}])"
        title = f"Call `{func}` with the bracketed data: `{func}([...])`"
    else:
        text = f"{func}({inner})"
        title = f"Call `{func}(...)` instead of subscripting it"
    return Fix(title, Safety.SAFE, (Edit(model.span(node), text),))


def _rebound_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names
