"""## What it does
Flags a value that is backpropagated (`.backward()`, `torch.autograd.backward`/`grad`, a GradScaler or
accelerator backward, the loss a Lightning `training_step` returns) when every path from the model to it
goes through a non-differentiable operation: `argmax`/`argmin`/`argsort`, comparisons (`==`, `>`, `eq`…),
casts to integer or bool (`.long()`, `.int()`, `.bool()`), `round`, `floor`, `ceil`, `trunc`, `sign`. The list is
torch's own: ops whose `derivatives.yaml` entry has no differentiable output or only `zeros_like` formulas. A tensor
filled in place from such a result (a one-hot `scatter_` of argmax indices) carries the cut too, also inside a loss
module's forward judged at its call (the message names the cut inside a helper of the workspace that made the value).
A method that backpropagates a prediction another method cut (`self.model(x).round()`) is judged with what its callers
pass: a target that needs no grad leaves no path around the cut. A model whose own forward returns its layers' output cut
(`return self.lin(x).round()`) is judged at each call with the batch it is given. A cut that an option decides, kept
on a loss module and passed down through helpers (`Dice(threshold=0.5)` reaching `if threshold is not None: (x >
threshold).float()`), is judged with the option each instance was built with, also in a training function the instance
is handed to; an option the instance left None, passed on by keyword, is None there too (`if bands is None: return xs`
hands the cut prediction back). Also (a warning) a term of a
backpropagated sum, added as is or scaled by a number (`loss = ce + 0.5 * hits`), whose every path goes through such
an operation: the loss trains through its other terms, that one trains nothing.

## Why is this bad?
Those operations have no gradient. Integer results (argmax, comparisons, casts) cut the graph: the loss
does not require grad and `backward()` raises. Rounding-like functions keep a graph whose gradient is zero
everywhere: training runs and nothing learns (`torch.round(x).sum().backward()`
leaves `x.grad` all zeros). The usual cause is training on a metric, such
as accuracy or an error rate, instead of a differentiable surrogate.

## Example
```python
logits = model(x)
predicted = logits.argmax(dim=1)
loss = (predicted != labels).float().mean()   # the error rate
loss.backward()
```

## Use instead
```python
logits = model(x)
loss = F.cross_entropy(logits, labels)          # a differentiable surrogate
loss.backward()
error_rate = (logits.argmax(dim=1) != labels).float().mean().item()  # reported only
```
Straight-through estimators (`x + (x.round() - x).detach()`) keep a differentiable path and are not flagged.

## Fix safety
No automatic fix: the replacement loss is a modelling decision. The message names the operation that cuts
the gradient.

## Runtime signature
`RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn` (integer cuts), or
all-zero gradients (rounding).
"""
from __future__ import annotations

import ast
import sys

from ..analysis.model import BindEvent, CallEvent, ModuleModel, ThroughEvent
from ..analysis.provenance import Kind
from ..findings import Severity
from .loss_sites import LossSite, loss_sites

CODE = "AG010"
NAME = "nondifferentiable-loss"
SEVERITY = Severity.ERROR
SUMMARY = "A backpropagated value flows only through non-differentiable operations (argmax, comparisons, round...)"
RUNTIME_SIGNATURE = "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn | all-zero gradients"
RULE = sys.modules[__name__]

DESCRIPTION = {"comparison": "a comparison", "to": "a cast to an integer dtype"}


def check(model: ModuleModel):
    reported = set()
    for site in [*loss_sites(model), *_through_sites(model)]:
        prov = site.prov
        if id(site.node) in reported:
            continue
        if not site.is_tensor or prov.nondiff is None or prov.requires_grad is None:
            continue
        op = prov.nondiff
        name = " ".join(model.text(site.value).split())
        if len(name) > 40:
            name = name[:37] + "..."
        cut = _cut_site(model, site, op)
        what = DESCRIPTION.get(op, f"`{op}`")
        where = f" (line {cut.lineno})" if cut is not None else ""
        target = "the loss `training_step` returns" if site.form == "training_step" else f"`{name}`"
        related = [(cut, f"`{op}` has no gradient")] if cut is not None else []
        if prov.requires_grad is False:
            message = (f"{target} is backpropagated but every path to it goes through {what}{where}, which has no gradient: "
                       f"it does not require grad and `backward()` raises. Train on a differentiable loss "
                       f"(e.g. cross-entropy of the logits) and keep `{op}` for metrics")
            reported.add(id(site.node))
            yield model.finding(RULE, site.node, message, related=related, op=op, kind="no-grad")
        else:
            message = (f"{target} is backpropagated but every path to it goes through {what}{where}, whose gradient is zero "
                       f"everywhere: the parameters get all-zero gradients and do not learn. Use a differentiable surrogate, "
                       f"or a straight-through estimator `x + ({op}(x) - x).detach()`")
            reported.add(id(site.node))
            finding = model.finding(RULE, site.node, message, related=related, op=op, kind="zero-grad")
            yield finding.with_severity(Severity.WARNING)
    yield from _dead_terms(model, reported)


def _dead_terms(model: ModuleModel, reported: set):
    """`loss = ce + 0.5 * hits` backpropagated, where `hits` (a term added as is or scaled by a number) went through a
    cut on every path: the sum trains through its other terms, this one adds nothing to any gradient."""
    for site in loss_sites(model):
        prov, event = site.prov, site.event
        if event is None or not site.is_tensor or prov.nondiff is not None or not prov.requires_grad or type(site.value) is not ast.Name:
            continue
        total = _last_bind(model, event, site.value.id, event.seq)
        if total is None or type(total.value) is not ast.BinOp:
            continue
        for term in _terms(model, total.value):
            term_prov = model.prov(term)
            if term_prov is None or term_prov.kind is not Kind.TENSOR or term_prov.nondiff is None or term_prov.requires_grad is None:
                continue
            bind = _last_bind(model, event, term.id, total.seq) if type(term) is ast.Name else None
            node = bind.target if bind is not None else term
            if id(node) in reported:
                continue
            reported.add(id(node))
            op = term_prov.nondiff
            what = DESCRIPTION.get(op, f"`{op}`")
            effect = "has no gradient" if term_prov.requires_grad is False else "has a zero gradient everywhere"
            message = (f"`{model.text(term)}` is a term of the loss backpropagated at line {event.node.lineno}, but every path to it "
                       f"goes through {what}, which {effect}: it changes the loss value and trains nothing. Use a "
                       f"differentiable surrogate (e.g. `F.relu(score - threshold)` for a comparison), or log it apart")
            yield model.finding(RULE, node, message, related=[(event.node, "backpropagated here")], op=op,
                                kind="dead-term").with_severity(Severity.WARNING)


def _last_bind(model: ModuleModel, event, name: str, before: int):
    """The last `name = ...` of the backward's function walked before `before`."""
    found = None
    for bind in model.of_type(BindEvent):
        if bind.seq >= before:
            break
        if bind.ctx.scope is event.ctx.scope and bind.name == name and isinstance(bind.node, ast.Assign):
            found = bind
    return found


def _terms(model: ModuleModel, node: ast.AST) -> list:
    """The added terms of `a + 0.5 * b - c`, each without a numeric scale (a factor that requires grad keeps a path)."""
    if type(node) is ast.BinOp and type(node.op) in (ast.Add, ast.Sub):
        return _terms(model, node.left) + _terms(model, node.right)
    if type(node) is ast.BinOp and type(node.op) in (ast.Mult, ast.Div):
        sides = (node.left, node.right) if type(node.op) is ast.Mult else (node.left,)
        numbers = [side for side in (node.left, node.right) if _number(model, side)]
        if len(numbers) == 1:
            if type(numbers[0]) is ast.Constant and numbers[0].value == 0:
                return []  # `0.0 * out.sign().mean()`: a term kept at no weight on purpose (in the graph, out of the value)
            inner = node.right if numbers[0] is node.left else node.left
            return [inner] if inner in sides else []
        return []
    return [node]


def _number(model: ModuleModel, node: ast.AST) -> bool:
    prov = model.prov(node)
    return type(node) is ast.Constant and type(node.value) in (int, float) or prov is not None and prov.kind is Kind.NUMBER


def _through_sites(model: ModuleModel) -> list[LossSite]:
    """`trainer.step(x, counts)` whose body backpropagates what it made of them: the body's `.backward()` as that call's
    walk of it saw the value (a target known to need no grad leaves no path around a cut that its symbolic walk kept
    open through the parameter)."""
    sites = []
    for event in model.calls(role="backward", through=True):
        if type(event) is not ThroughEvent:  # (one that may not run, in a loop or a branch: when it does, it fails)
            continue
        direct = event.direct
        prov = direct.receiver_prov
        if direct.method == "backward" and prov is not None and prov.kind is Kind.TENSOR and prov.nondiff is not None:
            sites.append(LossSite(direct.node, direct.receiver, prov, "method", bool(direct.node.args), direct))
    return sites


def _cut_site(model: ModuleModel, site: LossSite, op: str) -> ast.AST | None:
    """The last call of `op` in the same function before the backward (for the message and a related location)."""
    if op == "comparison":
        node = site.prov.node
        return node if isinstance(node, ast.Compare) else None
    function = site.event.ctx.scope.node if site.event is not None else site.function
    limit = site.event.seq if site.event is not None else None
    best = None
    for event in model.of_type(CallEvent):
        if limit is not None and event.seq >= limit:
            break
        if event.ctx.scope.node is not function:
            continue
        short = event.method or (event.qualname or "").rsplit(".", 1)[-1]
        if short == op and event.result is not None and event.result.nondiff == op:
            best = event.node
    return best if best is not None else _cut_in_helper(model, site, op, function)


def _cut_in_helper(model: ModuleModel, site: LossSite, op: str, function: ast.AST | None) -> ast.AST | None:
    """`term = direction_loss(pred, y)` then `term.backward()`: the call of `op` inside the function of this workspace
    that made the value (for the message only: the finding stays at the backward, which the call's inputs decide)."""
    value = site.value
    if site.event is None or not isinstance(value, ast.Name):
        return None
    made = None
    for bind in model.of_type(BindEvent):
        if bind.seq >= site.event.seq:
            break
        if bind.ctx.scope.node is function and bind.name == value.id:
            made = bind.value
    if not isinstance(made, ast.Call):
        return None
    helper = next((event.function for event in model.of_type(CallEvent) if event.node is made and event.function is not None), None)
    if helper is None:
        return None
    cuts = [event for event in model.of_type(CallEvent) if event.ctx.scope.node is helper.node and event.result is not None
            and event.result.nondiff == op and (event.method or (event.qualname or "").rsplit(".", 1)[-1]) == op]
    live = [event for event in cuts if event.result.requires_grad]
    return (live or cuts)[-1].node if cuts else None
