"""Runtime signatures of the rules, as data: what the confirm runner looks for (from RULES.md).

An *error* signature is matched against the exception the reproducer raised (type name and a
regex over its message). A *probe* names an instrumentation in the harness (``_harness.py``)
that measures a silent symptom; a *warning* signature is matched against warnings the program
emitted. A rule may have several; any one matching confirms the finding.

Nothing here imports torch.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Error messages shared by several rules.
_SECOND_BACKWARD = r"Trying to backward through the graph a second time"
_VERSION = r"one of the variables needed for gradient computation has been modified by an inplace operation"


@dataclass(frozen=True)
class ErrorSignature:
    types: tuple[str, ...]  # exception class names (matched on the class and its bases' names)
    pattern: str  # regex searched in str(exception)
    # True when the error must be raised by the flagged statement itself (or a call made from it):
    # an identical error elsewhere in the program proves nothing about this finding.
    at_flagged_line: bool = False

    def matches(self, type_names: list[str], message: str) -> bool:
        return any(name in self.types for name in type_names) and re.search(self.pattern, message, re.I | re.S) is not None


@dataclass(frozen=True)
class WarningSignature:
    category: str
    pattern: str

    def matches(self, category_names: list[str], message: str) -> bool:
        return self.category in category_names and re.search(self.pattern, message, re.I) is not None


@dataclass(frozen=True)
class RuntimeSignature:
    code: str
    description: str  # what confirmation means, for messages ("a leaf-in-place RuntimeError")
    errors: tuple[ErrorSignature, ...] = ()
    warnings: tuple[WarningSignature, ...] = ()
    probe: str | None = None  # name of a symptom probe in the harness
    notes: tuple[str, ...] = field(default=())


def _err(pattern: str, *types: str, at_line: bool = False) -> ErrorSignature:
    return ErrorSignature(types or ("RuntimeError",), pattern, at_line)


SIGNATURES: dict[str, RuntimeSignature] = {
    s.code: s
    for s in [
        RuntimeSignature(
            "AG001",
            "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation",
            errors=(_err(r"a leaf Variable that requires grad (is being|has been) used in an in-place operation", at_line=True),
                    _err(r"functions with out=\.\.\. arguments don't support automatic differentiation", at_line=True)),
        ),
        RuntimeSignature(
            "AG002",
            "a second-backward or version-counter error, or a forward computing with the composed tensor after optimizer.step() changed its sources but not it",
            errors=(_err(_SECOND_BACKWARD), _err(_VERSION)),
            probe="stale_composed",
        ),
        RuntimeSignature(
            "AG003",
            "RuntimeError: ... modified by an inplace operation (version counter) when the retained graph is reused",
            errors=(_err(_VERSION), _err(_SECOND_BACKWARD)),
            notes=("retain_graph=True that nothing reuses costs memory only; it has no runtime signature",),
        ),
        RuntimeSignature(
            "AG004",
            "RuntimeError: only Tensors of floating point and complex dtype can require gradients",
            errors=(_err(r"only Tensors of floating point( and complex)? dtype can require gradients", at_line=True),),
        ),
        RuntimeSignature(
            "AG005",
            "RuntimeError: grad can be implicitly created only for scalar outputs",
            errors=(_err(r"grad can be implicitly created only for (real )?scalar outputs"),),
        ),
        RuntimeSignature("AG006", "RuntimeError: ... modified by an inplace operation", errors=(_err(_VERSION),)),
        RuntimeSignature("AG007", "the alias made under no_grad read as a frozen copy after an in-place update changed the tensor", probe="requires_grad_alias"),
        RuntimeSignature(
            "AG008",
            "a wrong gradient: backward() computing with values changed through .data after the forward saved them, "
            "or optimizer.step() updating a tensor without the gradient through a value read from its .data",
            errors=(_err(_VERSION),),
            probe="data_invisible",
        ),
        RuntimeSignature(
            "AG009",
            "the tensor attribute stays behind when the module is moved (module.to('meta')), or a device mismatch",
            errors=(_err(r"Expected all tensors to be on the same device"),),
            probe="module_attribute",
        ),
        RuntimeSignature(
            "AG010",
            "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn, or all-zero gradients",
            errors=(_err(r"element 0 of tensors does not require grad and does not have a grad_fn"),),
            probe="zero_grads",
        ),
        RuntimeSignature(
            "AG011",
            "UserWarning: torch.range is deprecated",
            warnings=(WarningSignature("UserWarning", r"torch\.range is deprecated"),),
        ),
        RuntimeSignature(
            "AG012",
            "values read from a tensor before they were written (uninitialized memory)",
            probe="uninitialized_read",
            notes=("the harness fills the uninitialized tensor with NaN (or a sentinel) and watches reads; bool tensors are inconclusive",),
        ),
        RuntimeSignature(
            "AG013",
            "TypeError: 'builtin_function_or_method' object is not subscriptable",
            errors=(_err(r"object is not subscriptable", "TypeError", at_line=True),),
        ),
        RuntimeSignature(
            "AG014",
            "p.grad stays None after backward() although requires_grad was switched on after the forward, or torch refusing "
            "to change requires_grad of a non-leaf",
            errors=(_err(_VERSION), _err(r"you can only change requires_grad flags of leaf variables", at_line=True)),
            probe="unfreeze_grad_none",
        ),
        RuntimeSignature("AG015", "the graph held by the accumulator grows every iteration and no backward() uses it", probe="graph_growth"),
        RuntimeSignature(
            "AG016",
            "backward() accumulating onto gradients that optimizer.step() already consumed",
            probe="grad_accumulation",
        ),
        RuntimeSignature(
            "AG017",
            "a second-backward or version-counter error on the shared forward output",
            errors=(_err(_SECOND_BACKWARD), _err(_VERSION)),
        ),
        RuntimeSignature(
            "AG018",
            "TypeError for a misspelt keyword, or requires_grad still False after setting a misspelt attribute",
            errors=(_err(r"unexpected keyword argument|got an unexpected keyword|invalid keyword argument", "TypeError", at_line=True),),
            probe="typo_attribute",
        ),
    ]
}

# Exceptions that mean "the sandbox's memory limit was hit", not "the program is wrong".
MEMORY_ERRORS = (
    ErrorSignature(("MemoryError",), r""),
    ErrorSignature(("RuntimeError", "OutOfMemoryError"), r"can't allocate memory|DefaultCPUAllocator|out of memory|std::bad_alloc|Cannot allocate memory"),
)


def signature_of(code: str) -> RuntimeSignature | None:
    return SIGNATURES.get(code.upper())
