"""The server's plain-Python state: client options, effective settings, and keeping findings while a file
does not parse. Nothing here knows about LSP messages, so it is tested without a server.
"""
from __future__ import annotations

import ast
import difflib
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .config import ConfigError, Settings, expand_selector, expand_selectors, find_pyproject, load_settings
from .findings import Finding, Fix, Related, Severity, Span
from .analysis.walker import label as _label

SECTION = "autogradLsp"
DEVICES = ("cpu", "cuda")
CLIENT_KEYS = {"select", "ignore", "extendSelect", "extend-select", "extend_select", "severity", "python", "confirm",
               "confirm.enabled", "confirm.timeout", "confirm.device", "workspaceDiagnostics", "debounce", "crossModule",
               "interpreter", "trace", "trace.server"}  # the VS Code extension's own keys: an alias and a client-side one


@dataclass(frozen=True)
class ClientOptions:
    """What the editor can set (section `autogradLsp`); the rule options layer on top of pyproject.toml."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    severity: dict = field(default_factory=dict)  # code -> Severity
    python: str | None = None  # interpreter for runtime confirmation (None: the server's own)
    confirm_enabled: bool = True
    confirm_timeout: float = 30.0
    confirm_device: str = "cpu"
    workspace_diagnostics: bool = False  # answer workspace/diagnostic for every file, not only open ones
    debounce_ms: int = 50
    cross_module: bool = True  # resolve workspace imports with jedi in the background

    def apply(self, base: Settings) -> Settings:
        settings = base.with_selection(select=self.select, ignore=self.ignore, extend_select=self.extend_select)
        if self.severity:
            settings = replace(settings, severity={**settings.severity, **self.severity})
        return settings


def unwrap(raw) -> object:
    """initializationOptions / didChangeConfiguration payloads come as `{autogradLsp: {...}}`, `{settings: ...}` or bare."""
    if isinstance(raw, dict):
        if SECTION in raw:
            return raw[SECTION]
        if "settings" in raw and isinstance(raw["settings"], dict) and set(raw) <= {"settings"}:
            return unwrap(raw["settings"])
    return raw


def parse_client_options(raw) -> tuple[ClientOptions, list[str]]:
    """Options from the client's settings object; each invalid entry is reported and left at its default."""
    raw = unwrap(raw)
    if raw is None:
        return ClientOptions(), []
    if not isinstance(raw, dict):
        return ClientOptions(), [f"{SECTION}: expected an object, got {type(raw).__name__}"]
    problems: list[str] = []
    values: dict = {}
    flat = dict(raw)
    confirm = flat.pop("confirm", None)
    if isinstance(confirm, dict):
        for key, value in confirm.items():
            flat[f"confirm.{key}"] = value
    elif confirm is not None:
        problems.append(f"{SECTION}.confirm: expected an object like {{\"enabled\": true}}, got {confirm!r}")
    for key in sorted(set(flat) - CLIENT_KEYS):
        problems.append(f"{SECTION}: unknown setting {key!r}")

    def selectors(key: str) -> tuple[str, ...] | None:
        value = flat.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            problems.append(f"{SECTION}.{key}: expected a list of rule codes, got {value!r}")
            return None
        try:
            expand_selectors(value, f"{SECTION}.{key}")
        except ConfigError as error:
            problems.append(str(error))
            return None
        return tuple(value)

    select = selectors("select")
    if select is not None:
        values["select"] = select
    for key, name in (("ignore", "ignore"), ("extendSelect", "extend_select"), ("extend-select", "extend_select"), ("extend_select", "extend_select")):
        chosen = selectors(key)
        if chosen is not None:
            values[name] = chosen

    severity = flat.get("severity")
    if severity is not None:
        if not isinstance(severity, dict):
            problems.append(f"{SECTION}.severity: expected an object like {{\"AG001\": \"warning\"}}, got {severity!r}")
        else:
            parsed = {}
            for selector, level in severity.items():
                try:
                    level_value = Severity(str(level).lower())
                    for code in expand_selector(str(selector), f"{SECTION}.severity.{selector}"):
                        parsed[code] = level_value
                except ValueError:
                    problems.append(f"{SECTION}.severity.{selector}: {level!r} is not one of error, warning, info")
                except ConfigError as error:
                    problems.append(str(error))
            values["severity"] = parsed

    python = flat.get("python")
    if python is None or python == "":
        python = flat.get("interpreter")
    if python is not None:
        if isinstance(python, str) and python.strip():
            values["python"] = python.strip()
        elif python != "":
            problems.append(f"{SECTION}.python: expected the path of a Python interpreter, got {python!r}")

    def boolean(key: str, name: str):
        value = flat.get(key)
        if value is None:
            return
        if isinstance(value, bool):
            values[name] = value
        else:
            problems.append(f"{SECTION}.{key}: expected true or false, got {value!r}")

    boolean("confirm.enabled", "confirm_enabled")
    boolean("workspaceDiagnostics", "workspace_diagnostics")
    boolean("crossModule", "cross_module")

    timeout = flat.get("confirm.timeout")
    if timeout is not None:
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 < timeout <= 3600:
            values["confirm_timeout"] = float(timeout)
        else:
            problems.append(f"{SECTION}.confirm.timeout: expected seconds between 0 and 3600, got {timeout!r}")
    device = flat.get("confirm.device")
    if device is not None:
        if isinstance(device, str) and device.lower() in DEVICES:
            values["confirm_device"] = device.lower()
        else:
            problems.append(f"{SECTION}.confirm.device: expected one of {', '.join(DEVICES)}, got {device!r}")
    debounce = flat.get("debounce")
    if debounce is not None:
        if isinstance(debounce, int) and not isinstance(debounce, bool) and 0 <= debounce <= 2000:
            values["debounce_ms"] = debounce
        else:
            problems.append(f"{SECTION}.debounce: expected milliseconds between 0 and 2000, got {debounce!r}")
    return ClientOptions(**values), problems


class ProjectSettings:
    """pyproject.toml `[tool.autograd-lsp]` per directory, cached until a pyproject.toml changes."""

    def __init__(self):
        self._cache: dict[Path, Settings] = {}
        self.problems: list[str] = []  # errors not yet shown to the user

    def clear(self) -> None:
        self._cache.clear()

    def for_path(self, path: str | None, root: str | None) -> Settings:
        start = Path(path).parent if path else (Path(root) if root else None)
        if start is None:
            return Settings()
        if start in self._cache:
            return self._cache[start]
        try:
            settings = load_settings(start if start.exists() else Path(root or "."))
        except ConfigError as error:
            where = find_pyproject(start) if start.exists() else None
            message = str(error) if where is None or str(where) in str(error) else f"{where}: {error}"
            self.problems.append(f"{message} — using the default settings")
            settings = Settings()
        self._cache[start] = settings
        return settings


# -- keeping findings while the user types a syntax error ----------------------------------------------
def changed_region(old_lines: list[str], new_lines: list[str]) -> tuple[int, int, int]:
    """(first changed line, lines kept at the end, line delta): the region between the unchanged prefix and
    suffix of two versions, as 1-based `first` and a count of common trailing lines."""
    limit = min(len(old_lines), len(new_lines))
    prefix = 0
    while prefix < limit and old_lines[prefix] == new_lines[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old_lines[-1 - suffix] == new_lines[-1 - suffix]:
        suffix += 1
    return prefix + 1, suffix, len(new_lines) - len(old_lines)


MAX_DIFF_LINES = 500  # beyond this, the middle of an edit counts as changed as a whole (difflib is quadratic)


def line_mover(old_lines: list[str], new_lines: list[str]):
    """A function from old 1-based lines to new ones, None for lines inside the edited region. The unchanged
    prefix and suffix move trivially; a small middle is aligned line by line with difflib."""
    first, suffix, delta = changed_region(old_lines, new_lines)
    suffix_start = len(old_lines) - suffix + 1  # first old line of the unchanged tail
    inner: dict[int, int] = {}
    old_middle = old_lines[first - 1: len(old_lines) - suffix]
    new_middle = new_lines[first - 1: len(new_lines) - suffix]
    if old_middle and new_middle and len(old_middle) <= MAX_DIFF_LINES and len(new_middle) <= MAX_DIFF_LINES:
        for a, b, size in difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False).get_matching_blocks():
            for k in range(size):
                inner[first + a + k] = first + b + k

    def move(line: int) -> int | None:
        if line < first:
            return line
        if line >= suffix_start:
            return line + delta
        return inner.get(line)

    return move


def carry_over(old_text: str, old_findings: list[Finding], new_text: str, error: Finding | None = None) -> list[Finding]:
    """The findings shown for `old_text` that lie wholly outside what changed in `new_text` (and off the
    syntax error's lines), moved to their new lines. Fixes and related locations that touch a changed line
    are dropped with them."""
    move = line_mover(old_text.split("\n"), new_text.split("\n"))

    def move_span(span: Span) -> Span | None:
        start, end = move(span.line), move(span.end_line)
        if start is None or end is None or end - start != span.end_line - span.line:
            return None
        if error is not None and start <= error.span.end_line and error.span.line <= end:
            return None
        return Span(start, span.col, end, span.end_col)

    kept = []
    for finding in old_findings:
        if finding.code == "AG000":
            continue
        span = move_span(finding.span)
        if span is None:
            continue
        fixes = []
        for fix in finding.fixes:
            edits = [replace(edit, span=moved) for edit in fix.edits if (moved := move_span(edit.span)) is not None]
            if len(edits) == len(fix.edits):
                fixes.append(Fix(fix.title, fix.safety, tuple(edits)))
        related = tuple(Related(moved, item.message) for item in finding.related if (moved := move_span(item.span)) is not None)
        kept.append(replace(finding, span=span, fixes=tuple(fixes), related=related))
    return kept


# -- hover: what a name holds --------------------------------------------------------------------------
def node_at(tree: ast.AST, line: int, byte_col: int) -> ast.expr | None:
    """The innermost Name or `a.b` Attribute at (1-based line, UTF-8 byte column)."""
    best = None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        if node.lineno != line or (node.end_lineno or node.lineno) != line:
            continue
        start = node.col_offset
        end = node.end_col_offset or start
        if isinstance(node, ast.Attribute):
            # only the attribute part (`w` in `self.w`) selects the whole expression
            start = end - len(node.attr)
        if start <= byte_col <= end and (best is None or end - start < _width(best)):
            best = node
    return best


def _width(node: ast.AST) -> int:
    if isinstance(node, ast.Attribute):
        return len(node.attr)
    return (node.end_col_offset or node.col_offset) - node.col_offset


def describe_provenance(model, node: ast.expr) -> str | None:
    """One line about a tensor name: "leaf · requires grad · float · composed into `w` at line 12"."""
    prov = model.prov(node)
    if isinstance(getattr(node, "ctx", None), ast.Store):
        # an assignment target records the value it replaces; the hover wants the value it receives
        bound = next((event for event in model.events if getattr(event, "target", None) is node and hasattr(event, "alias_of")), None)
        prov = bound.prov if bound is not None else prov
    if prov is None:
        return None
    kind = getattr(prov.kind, "value", str(prov.kind))
    if kind != "tensor":
        parts = [kind]
        if prov.origin:
            parts.append(f"from `{prov.origin}`")
        if prov.line:
            parts.append(f"line {prov.line}")
        return " · ".join(parts)
    parts = []
    if prov.leaf is True:
        parts.append("leaf")
    elif prov.leaf is False:
        parts.append("non-leaf")
    if prov.requires_grad is True:
        parts.append("requires grad")
    elif prov.requires_grad is False:
        parts.append("no grad")
    if prov.dtype:
        parts.append(prov.dtype)
    if prov.no_grad:
        parts.append("made under no_grad")
    if prov.detached:
        parts.append("detached")
    if prov.composed_from:
        parts.append("composed from " + ", ".join(f"`{name}`" for name in sorted(prov.composed_from)))
    name = _label(node)
    if name and prov.is_trainable_leaf:
        into = _composed_into(model, name)
        if into:
            parts.append(into)
    if prov.origin:
        parts.append(f"made by `{prov.origin}`" + (f" at line {prov.line}" if prov.line else ""))
    return " · ".join(parts) if parts else None


def _composed_into(model, name: str) -> str | None:
    """`composed into `w` at line 12`: the first binding built from this leaf."""
    for event in model.events:
        prov = getattr(event, "prov", None)
        target = getattr(event, "name", None)
        if type(event).__name__ != "BindEvent" or prov is None or not target or target == name:
            continue
        if name in prov.composed_from:
            return f"composed into `{target}` at line {event.node.lineno}"
    return None


class Stopwatch:
    def __init__(self):
        self.start = time.perf_counter()

    @property
    def ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000
