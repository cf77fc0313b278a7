"""The rule catalog: one module per rule, each with CODE, NAME, SEVERITY, its doc and `check(model)`.

A rule module's docstring is its user documentation (What it does / Why is this bad / Example /
Use instead / Fix safety / Runtime signature); `autograd-lsp rule`, hover and the README use it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Iterable

from ..findings import Finding, Severity

# Order is the catalog's order (AG001 first). AG000 is the parser, not a rule module.
_MODULES = [
    "inplace_on_leaf",
    "stale_composed_weight",
    "retain_graph_misuse",
    "nonfloat_requires_grad",
    "backward_nonscalar",
    "inplace_on_saved_tensor",
    "no_grad_alias",
    "data_attribute",
    "module_tensor_attribute",
    "nondifferentiable_loss",
    "deprecated_range",
    "uninitialized_tensor",
    "tensor_subscript_typo",
    "requires_grad_toggle_after_forward",
    "loss_accumulation_keeps_graph",
    "missing_zero_grad",
    "missing_detach_shared_graph",
    "requires_grad_typo",
]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str  # one line: what the rule flags
    doc: str  # markdown, the module docstring
    signature: str  # the runtime signature the confirm runner looks for
    check: Callable[..., Iterable[Finding]]
    module: ModuleType

    @property
    def module_name(self) -> str:
        return self.module.__name__.rsplit(".", 1)[-1]


SYNTAX_ERROR_CODE = "AG000"
SYNTAX_ERROR_NAME = "syntax-error"


def _load() -> list[Rule]:
    rules = []
    for name in _MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name == f"{__name__}.{name}":
                continue  # not written yet
            raise
        rules.append(
            Rule(
                code=module.CODE,
                name=module.NAME,
                severity=module.SEVERITY,
                summary=module.SUMMARY,
                doc=(module.__doc__ or "").strip(),
                signature=module.RUNTIME_SIGNATURE,
                check=module.check,
                module=module,
            )
        )
    return rules


ALL_RULES: list[Rule] = _load()
BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
BY_NAME: dict[str, Rule] = {rule.name: rule for rule in ALL_RULES}


def find_rule(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    return BY_CODE.get(key.upper()) or BY_NAME.get(key.lower())
