"""What the analyzer reports: findings, their fixes and the text edits those fixes make.

Positions are 1-based lines and 0-based columns counted in Python characters (code points);
the edges (CLI output, LSP, SARIF) convert to their own conventions.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace


class Severity(str, enum.Enum):
    ERROR = "error"  # raises at runtime
    WARNING = "warning"  # silently wrong results
    INFO = "info"  # smell or deprecation


class Safety(str, enum.Enum):
    SAFE = "safe"  # behaviour-preserving for correct code: --fix and fixAll may apply it
    UNSAFE = "unsafe"  # changes behaviour: offered one at a time, never in bulk


@dataclass(frozen=True, order=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def of(cls, node) -> "Span":
        """The span of an ast node, assuming its offsets were converted to characters (see source.py)."""
        return cls(node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)


@dataclass(frozen=True)
class Edit:
    span: Span
    text: str


@dataclass(frozen=True)
class Fix:
    title: str
    safety: Safety
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Related:
    """The other end of a two-place bug (where a composed weight was built, the first backward...)."""

    span: Span
    message: str


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    span: Span
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    # Extra facts for the confirm runner and hover (e.g. {"composed": "w", "optimizer": "opt"}).
    data: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def safe_fix(self) -> Fix | None:
        return next((fix for fix in self.fixes if fix.safety is Safety.SAFE), None)

    def with_severity(self, severity: Severity) -> "Finding":
        return replace(self, severity=severity)


# -- serialisation (the CLI cache, the confirm runner's command line) ---------------------------------
def _span_list(span: Span) -> list[int]:
    return [span.line, span.col, span.end_line, span.end_col]


def finding_to_dict(finding: Finding) -> dict:
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "span": _span_list(finding.span),
        "fixes": [{"title": f.title, "safety": f.safety.value, "edits": [[*_span_list(e.span), e.text] for e in f.edits]} for f in finding.fixes],
        "related": [[*_span_list(r.span), r.message] for r in finding.related],
        "data": {k: v for k, v in finding.data.items() if isinstance(v, (str, int, float, bool, list, type(None)))},
    }


def finding_from_dict(data: dict) -> Finding:
    return Finding(
        code=data["code"],
        name=data["name"],
        severity=Severity(data["severity"]),
        message=data["message"],
        span=Span(*data["span"]),
        fixes=tuple(Fix(f["title"], Safety(f["safety"]), tuple(Edit(Span(*e[:4]), e[4]) for e in f["edits"])) for f in data["fixes"]),
        related=tuple(Related(Span(*r[:4]), r[4]) for r in data["related"]),
        data=data.get("data", {}),
    )
