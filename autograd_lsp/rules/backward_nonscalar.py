"""## What it does
Flags `.backward()` (and `torch.autograd.backward`, `torch.autograd.grad`, `scaler.scale(y).backward()`,
`accelerator.backward(y)`, a Lightning `training_step`'s returned loss) without a `gradient=` argument, on
a tensor that requires grad and is known to have more than one element: a `torch.tensor([...])` (or legacy
`torch.FloatTensor([...])`, `torch.FloatTensor(2, 3)`) or `linspace` of several values (sizes given as literals or names bound to integers), an element-wise function or a
reshape (`view`, `squeeze`, `flatten`...) of one, a loss with `reduction="none"` or the deprecated `reduce=False`
(by keyword or position, module or functional form, or a name bound to that string; also read from a config: a
class-body string, a dataclass field, an Enum member's `.value`, a constructor's argument kept on `self`, a class picked
by `getattr(torch.nn, name)`), a user's loss module or helper
returning an element-wise function, a reshape or a per-sample pick (`gather`, `take`: the index's shape) of such
inputs, a model whose last layer is wide (an nn.Sequential's last Linear or convolution, when what follows keeps
its width; a helper's layers built from the integers a call passes, `double_conv(16, 32)`), what a forward hook is
given as its layer's output (`layer.register_forward_hook(self.save)`, kept on `self` and read by another method), a stack, a `DataLoader` batch with `batch_size > 1` (also inside a
helper called once with it), or a factory's size argument (`torch.randint(0, k, (n,))`); or a tensor whose *shape*
is known to have a dim of several elements (analysis/shapes.py): followed from factories and literals through
elementwise ops, reshapes, reductions along a dim wherever torch's signature puts it (`x.sum(dim=1)`,
`x.logsumexp(-1)`, `torch.norm(x, 2, -1)`), indexing that keeps a dim (`scores[:, 0]`, also by
a builtin `range` loop's counter: `maps[0, t]`, or an int picked from a list of ints repeated: `out[i, labels[i]]` of
`labels = [label] * n`), a slice of known bounds (`x[2:10]`; `x[i:i + 64]` for a `range(0, n, 64)` counter
over n rows, n a multiple of 64), a comparison's mask, a distribution's
batch shape (`Normal(mu, sigma)`, `Categorical(logits=l)`: l's dims but the last) in `sample()`, `entropy()`, `log_prob(x)`, a pick by an index factory's tensor (`w[torch.randint(0, n, (8,))]`),
the pieces of an even split iterated (`for xb in data.split(64)`, sizes read back as `xb.shape[0]`), torch.nn
layers (Linear, convolutions, pooling, Flatten: dim 0 stays; normalisations keep their width; a convolution's or max
pool's spatial sizes from the kernel, stride, padding and dilation literals it was built with), `F.interpolate(x, size)`,
a reshape to sizes given (`x.view(n, -1)`, `n = x.size(0)` or `x.shape[0]` of a known dim), and a workspace model's forward walked with the input's shape (`model(torch.randn(8, 16))`: 8 rows whatever its
layers' widths), or a method walked with the integer that sizes its factory (`draw(count=16)` making
`torch.zeros(count, 4)`). A helper's or a trainer's method's `backward()` (or `torch.autograd.grad`) of what it is given is
judged at each call site that passes such a tensor (through up to three calls: `fit(batches)` -> `run_epoch` ->
`step(inputs, labels)`; a method handed one `(inputs, targets)` batch is walked with its shapes), with the defaults the call leaves, a tuple spread into its parameters (`score(x, *net(x))`), and the functions it hands over (`self.objective(x)`
of a function given to the constructor, a lambda default); a constructor's string kept on `self` picks the branch a
method takes (`if self.kind == "cosine":`), and a plain loss class's integers kept on `self` the dims its call
reduces (`LpLoss(d=2)` flattening `start_dim=-self.d`, then summing `dim=self.axis`); a plain class's `__call__` inherited from a base class is walked for
the subclass's instance, with its own overriding methods and what `super().__init__(...)` set (keywords too).

## Why is this bad?
`backward()` computes the gradient of a *scalar*. For a tensor of several elements the implicit
gradient `1` is undefined, so PyTorch refuses. The usual intent is either a sum or mean of the elements
(a loss), or the derivative at every point of a grid, which for an element-wise function is also the
gradient of the sum.

## Example
```python
x = torch.linspace(-2.0, 2.0, steps=9, requires_grad=True)
y = torch.sin(x) * x
y.backward()
```

## Use instead
```python
y.sum().backward()                    # or y.mean(), for a loss
# or, equivalently for the sum:
y.backward(torch.ones_like(y))
```

## Fix safety
Unsafe: summing picks one reduction (a mean, or a weighted sum, may be what was meant), and for
outputs that are not element-wise in the inputs the gradient of the sum is not a Jacobian.

## Runtime signature
`RuntimeError: grad can be implicitly created only for scalar outputs`
"""
from __future__ import annotations

import ast
import sys

from ..analysis.model import ModuleModel
from ..analysis.provenance import Kind
from ..findings import Edit, Fix, Safety, Severity, Span
from .loss_sites import LossSite, loss_sites

CODE = "AG005"
NAME = "backward-nonscalar"
SEVERITY = Severity.ERROR
SUMMARY = "backward() without gradient= on a tensor with more than one element"
RUNTIME_SIGNATURE = "RuntimeError: grad can be implicitly created only for scalar outputs"
RULE = sys.modules[__name__]

ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


def check(model: ModuleModel):
    yield from _handovers(model)
    for site in [*loss_sites(model), *_call_site_only(model)]:
        prov = site.prov
        if site.form in ("method", "grad") and not (site.is_tensor and prov.scalar is False and prov.requires_grad is True):
            # a helper's backward of what its caller passes (`do_batch(batch, label)` given batches of 32)
            prov = model.call_site_backwards.get(id(site.node), prov)
        if site.gradient or prov is None or prov.kind is not Kind.TENSOR or prov.scalar is not False or prov.requires_grad is not True:
            continue
        name = " ".join(model.text(site.value).split())
        if len(name) > 40:
            name = name[:37] + "..."
        made = "" if prov.node is site.value else f" (from {model.describe(prov)})"
        reduced = f"{name}.sum()" if isinstance(site.value, ATOMS) else f"({name}).sum()"
        if site.form == "training_step":
            where = "the loss `training_step` returns (the trainer calls `backward()` on it)"
        elif site.form == "grad":
            where = "`torch.autograd.grad` without `grad_outputs=`"
        else:
            where = "`backward()` without a `gradient=` argument"
        message = (f"`{name}` has more than one element{made} but {where} needs a scalar: "
                   f"reduce it first, e.g. `{reduced}` or `.mean()`")
        yield model.finding(RULE, site.node, message, fixes=_fixes(model, site), related=[(prov.node, "non-scalar tensor made here")],
                            target=name)


def _handovers(model: ModuleModel):
    """The calls handing a loss known to have several elements to a helper that calls `backward()` on it."""
    for statement, prov, backward in model.backward_handovers.values():
        name = " ".join(model.text(statement).split())
        if len(name) > 40:
            name = name[:37] + "..."
        message = (f"`{name}` hands over a tensor with more than one element (from {model.describe(prov)}) to a "
                   f"`backward()` without a `gradient=` argument (line {backward.lineno}), which needs a scalar: reduce it "
                   f"first, e.g. with `.sum()` or `.mean()`")
        yield model.finding(RULE, statement, message, related=[(prov.node, "non-scalar tensor made here"),
                                                               (backward, "the backward it reaches")], target=name)


def _call_site_only(model: ModuleModel) -> list[LossSite]:
    """`.backward()` in a helper whose receiver the symbolic walk does not know at all (no site of its own), known wide
    in the walk for one of its calls (model.call_site_backwards)."""
    known = model.call_site_backwards
    if not known:
        return []
    sited = {id(site.node) for site in loss_sites(model)}
    return [LossSite(event.node, event.receiver, known[id(event.node)], "method", False, event)
            for event in model.calls(role="backward", method="backward")
            if id(event.node) in known and id(event.node) not in sited and event.receiver is not None]


def _fixes(model: ModuleModel, site: LossSite) -> list[Fix]:
    value = site.value
    if site.form == "method" and isinstance(site.node.func, ast.Attribute):
        edit = _before_backward(model, site.node.func)
        if edit is None:
            return []
        fixes = [Fix("Sum before backpropagating: `.sum().backward()`", Safety.UNSAFE, (edit,))]
        call = site.node
        if not call.args and not call.keywords and isinstance(value, (ast.Name, ast.Attribute)):
            torch = model.imports.torch_alias
            if torch is not None:
                end = model.span(call)
                inside = Span(end.end_line, end.end_col - 1, end.end_line, end.end_col - 1)
                fixes.append(Fix(f"Pass `gradient={torch}.ones_like(...)`", Safety.UNSAFE,
                                 (Edit(inside, f"{torch}.ones_like({model.text(value)})"),)))
        return fixes
    if site.form == "grad":
        return []  # a sum changes what torch.autograd.grad returns: no automatic rewrite
    text = model.text(value)
    wrapped = f"{text}.sum()" if isinstance(value, ATOMS) else f"({text}).sum()"
    return [Fix("Sum before backpropagating: `.sum()`", Safety.UNSAFE, (Edit(model.span(value), wrapped),))]


def _before_backward(model: ModuleModel, func: ast.Attribute) -> Edit | None:
    """An insertion of `.sum()` just before `.backward` (parenthesised receivers included)."""
    span = model.span(func)
    line = model.source.line_text(span.end_line)
    dot = span.end_col - len(func.attr) - 1
    if dot < 0 or line[dot:span.end_col] != "." + func.attr:
        return None
    return Edit(Span(span.end_line, dot, span.end_line, dot), ".sum()")
