"""Where a value is backpropagated: `.backward()` and its wrappers, for the rules about what reaches a backward.

Not a rule module (the registry loads only the catalog's names). A *site* pairs the backpropagated
expression with its provenance: `loss.backward()`, `torch.autograd.backward(loss)`,
`torch.autograd.grad(loss, ...)`, `scaler.scale(loss).backward()`, `accelerator.backward(loss)`,
`self.manual_backward(loss)`, and the loss a Lightning `training_step` returns (the trainer calls
backward on it).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from ..analysis.model import CallEvent, ModuleModel
from ..analysis.provenance import Kind, Provenance
from ..analysis.training import BACKWARD_WRAPPERS


@dataclass
class LossSite:
    node: ast.AST  # where the backward happens: the call, or the returned expression
    value: ast.expr  # the expression that is backpropagated
    prov: Provenance | None
    form: str  # "method" | "function" | "grad" | "wrapper" | "training_step"
    gradient: bool  # an explicit gradient / grad_tensors / grad_outputs was given
    event: CallEvent | None = None
    function: ast.AST | None = None  # training_step sites: the method that returns the loss

    @property
    def is_tensor(self) -> bool:
        return self.prov is not None and self.prov.kind is Kind.TENSOR


def loss_sites(model: ModuleModel) -> list[LossSite]:
    """Every site of the module, found once per model (four rules ask; a model's rebase drops the list)."""
    found = model.__dict__.get("_loss_sites")
    if found is None:
        found = model.__dict__["_loss_sites"] = list(_sites(model))
    return found


def _sites(model: ModuleModel) -> Iterator[LossSite]:
    for event in model.calls():
        call = event.node
        if event.method == "backward" and event.role == "backward":
            site = _method_site(model, event)
            if site is not None:
                yield site
        elif event.method == "manual_backward" and call.args:
            yield LossSite(call, call.args[0], model.prov(call.args[0]), "wrapper", False, event)
        elif event.qualname in ("torch.autograd.backward", "torch.autograd.grad"):
            value = call.args[0] if call.args else _keyword(call, "tensors" if event.qualname.endswith("backward") else "outputs")
            if value is None or isinstance(value, (ast.List, ast.Tuple)):
                continue
            if event.qualname.endswith("backward"):
                gradient = len(call.args) > 1 or _keyword(call, "grad_tensors") is not None
                form = "function"
            else:
                gradient = len(call.args) > 2 or _keyword(call, "grad_outputs") is not None
                form = "grad"
            yield LossSite(call, value, model.prov(value), form, gradient, event)
    yield from _training_step_returns(model)


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _method_site(model: ModuleModel, event: CallEvent) -> LossSite | None:
    call, receiver, prov = event.node, event.receiver, event.receiver_prov
    gradient = bool(call.args) or _keyword(call, "gradient") is not None
    if prov is not None and prov.kind is Kind.TENSOR:
        return LossSite(call, receiver, prov, "method", gradient, event)
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "scale" and len(receiver.args) == 1:
        value = receiver.args[0]  # torch.cuda.amp.GradScaler: scaler.scale(loss).backward()
        return LossSite(call, value, model.prov(value), "wrapper", gradient, event)
    owner = receiver.attr if isinstance(receiver, ast.Attribute) else (receiver.id if isinstance(receiver, ast.Name) else None)
    if owner in BACKWARD_WRAPPERS and call.args:
        return LossSite(call, call.args[0], model.prov(call.args[0]), "wrapper", False, event)
    return None


def _training_step_returns(model: ModuleModel) -> Iterator[LossSite]:
    """A LightningModule's `training_step` return value (or its "loss" entry): the trainer backpropagates it."""
    for info in model.functions.values():
        if info.name != "training_step" or info.cls is None or not info.cls.is_module:
            continue
        for node in _own_returns(info.node):
            value = node.value
            if isinstance(value, ast.Dict):
                value = next((v for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant) and k.value == "loss"), None)
            if value is None:
                continue
            yield LossSite(value, value, model.prov(value), "training_step", False, function=info.node)


def _own_returns(function: ast.AST) -> Iterator[ast.Return]:
    stack = list(getattr(function, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            yield node
        stack.extend(ast.iter_child_nodes(node))
