"""The pipeline shared by the CLI, the server and the confirm runner: text → tree → model → findings."""
from __future__ import annotations

import ast
import logging
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import noqa
from .analysis import ModuleModel, build_model
from .config import Settings
from .findings import Finding, Severity, Span
from .rules import ALL_RULES, SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME
from .source import Source, read_source

log = logging.getLogger(__name__)

DEFAULT_SETTINGS = Settings()

UNREADABLE_NAME = "unreadable"  # AG000 too: a file that cannot be read as Python (missing, undecodable)
NOT_ANALYSED_NAME = "not-analysed"  # AG000 too: a file that parses but that the analysis cannot walk
# A file nested deeper than the walker's recursion allows (a long `a + a + ...` chain) is analysed again on a
# thread of its own with a larger stack and recursion limit. CPython's parser stops at ~3,000 nested terms
# with the default limit and the walk takes ~2 frames per level (measured on chains of operators, attributes,
# calls, `elif`s): ~6,000 frames; 50,000 leaves room for the rules and cross-module resolution. A frame costs
# ~1.3 KiB of C stack at worst (calls through C), hence 256 MiB: reserved, touched only as used.
DEEP_RECURSION_LIMIT = 50_000
DEEP_STACK_BYTES = 256 * 1024 * 1024
_DEEP_LOCK = threading.Lock()  # one deep analysis at a time: the recursion limit is per process


@dataclass
class CheckResult:
    source: Source
    findings: list[Finding]
    model: ModuleModel | None = None  # None when the text does not parse
    rule_errors: list[str] = field(default_factory=list)  # crashes inside rules: logged, rule skipped
    suppressed: int = 0
    walked: str = "module"  # what was walked for it: "module", "function" (one edited body) or "none" (the server's edits)


def parse(source: Source) -> ast.Module | Finding:
    try:
        return ast.parse(source.text, filename=source.path or "<unknown>")
    except SyntaxError as error:
        line = error.lineno or 1
        col = max((error.offset or 1) - 1, 0)
        end_line = error.end_lineno if error.end_lineno and error.end_lineno >= line else line
        end_col = (error.end_offset - 1) if error.end_offset and error.end_lineno == line and error.end_offset - 1 > col else col + 1
        return Finding(SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME, Severity.ERROR, f"SyntaxError: {error.msg}", Span(line, col, end_line, end_col))
    except (RecursionError, MemoryError, ValueError) as error:
        # ValueError: source with NUL bytes; RecursionError: absurdly nested expressions.
        # Python itself cannot compile these either (RecursionError: nested deeper than its parser allows).
        return Finding(SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME, Severity.ERROR, f"cannot parse: {type(error).__name__}: {error}", Span(1, 0, 1, 0))


def unreadable(reason: str) -> Finding:
    """The finding of a file that cannot be read as Python: missing, undecodable, not a notebook."""
    return Finding(SYNTAX_ERROR_CODE, UNREADABLE_NAME, Severity.ERROR, reason, Span(1, 0, 1, 0))


def not_python(reason: str) -> Finding:
    """The finding of a file that is not Python at all (a Julia notebook): information, not an error, and never a pass."""
    return Finding(SYNTAX_ERROR_CODE, NOT_ANALYSED_NAME, Severity.INFO,
                   f"not analysed: {reason}; no rule checked this file", Span(1, 0, 1, 0))


def not_analysed(reason: str) -> Finding:
    """The finding of a file that parses but was not analysed: never reported as passing."""
    return Finding(SYNTAX_ERROR_CODE, NOT_ANALYSED_NAME, Severity.ERROR,
                   f"could not be analysed: {reason}; no rule checked this file", Span(1, 0, 1, 0))


def rule_not_run(rule, error: Exception) -> Finding:
    """The finding of a rule that crashed on a file: the other rules' findings stand, but the file did not pass."""
    return Finding(SYNTAX_ERROR_CODE, NOT_ANALYSED_NAME, Severity.WARNING,
                   f"rule {rule.code} ({rule.name}) could not check this file: internal error "
                   f"({type(error).__name__}: {error}); please report it; the other rules ran", Span(1, 0, 1, 0))


def check_source(source: Source, settings: Settings = DEFAULT_SETTINGS, resolver=None, rules=None,
                 tree: ast.Module | None = None) -> CheckResult:
    """`tree`: the text's tree when the caller parsed it already (the server's incremental parse)."""
    if tree is None:
        tree = getattr(resolver, "parsed", parse)(source)
    if isinstance(tree, Finding):
        if source.cells:
            return _without_broken_cells(source, tree, settings, resolver, rules)
        return CheckResult(source, [tree])
    try:
        return _guarded(tree, source, settings, resolver, rules)
    except RecursionError:
        pass
    outcome: list = []

    def deep() -> None:
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous, DEEP_RECURSION_LIMIT))
        try:
            outcome.append(_guarded(tree, source, settings, resolver, rules))
        except RecursionError:
            pass
        finally:
            sys.setrecursionlimit(previous)

    with _DEEP_LOCK:
        try:
            previous_size = threading.stack_size(DEEP_STACK_BYTES)
            try:
                worker = threading.Thread(target=deep, name="autograd-lsp-deep-analysis", daemon=True)
                worker.start()
            finally:
                threading.stack_size(previous_size)
            worker.join()
        except (RuntimeError, ValueError, MemoryError) as error:  # no thread with such a stack on this system
            log.warning("%s: no thread for a deep analysis: %s", source.path, error)
    if outcome:
        return outcome[0]
    log.warning("%s: too deeply nested to analyse", source.path)
    return CheckResult(source, [not_analysed(f"nested more than {DEEP_RECURSION_LIMIT:,} calls deep for the analysis")])


def _without_broken_cells(source: Source, error: Finding, settings: Settings, resolver, rules) -> CheckResult:
    """A notebook with cells that are not Python (an exercise's `x = # TODO`, `???`): Jupyter compiles each cell
    alone and runs the others, so the others are analysed with those cells blanked (lines keep their numbers),
    and each broken cell is reported where its own parse fails. A notebook that fails only when joined (never a
    cell alone) is reported as before."""
    lines = source.lines
    broken, errors = set(), []
    for cell in source.cells:
        start = cell.first_line - 1 - cell.indented  # (with the `if True:` line before an indented cell)
        found = parse(Source("\n".join(lines[start:cell.first_line - 1 + cell.line_count])))
        if isinstance(found, Finding):
            broken.add(cell.index)
            span = found.span
            errors.append(Finding(found.code, found.name, found.severity,
                                  f"{found.message} (the other cells are analysed without this one)",
                                  Span(span.line + start, span.col, span.end_line + start, span.end_col)))
    if not broken:
        return CheckResult(source, [error])
    kept = list(lines)
    for cell in source.cells:
        if cell.index in broken:
            start = cell.first_line - 1 - cell.indented  # (its `if True:` line too)
            kept[start:cell.first_line - 1 + cell.line_count] = [""] * (cell.line_count + cell.indented)
    blanked = Source("\n".join(kept), source.path, source.cells)
    tree = parse(blanked)
    if isinstance(tree, Finding):
        return CheckResult(source, [error])
    try:
        result = _guarded(tree, blanked, settings, resolver, rules)
    except RecursionError:
        return CheckResult(source, [error])
    findings = sorted([*errors, *result.findings], key=lambda f: (f.span, f.code))
    return CheckResult(source, findings, result.model, result.rule_errors, suppressed=result.suppressed)


def _guarded(tree: ast.Module, source: Source, settings: Settings, resolver, rules) -> CheckResult:
    """`_analyse`, where a defect of the analysis itself (an exception while building the model) is this file's
    AG000 finding: the run goes on with the next file, the server stays up, and the file is never reported as
    passing. The traceback goes with the result (`rule_errors`: the CLI prints it, the server logs it once)."""
    try:
        return _analyse(tree, source, settings, resolver, rules)
    except RecursionError:
        raise  # (check_source retries on a deeper stack)
    except Exception as error:
        trace = f"analysis of {source.path or '<buffer>'} failed:\n{traceback.format_exc()}"
        log.error(trace)
        reason = f"internal error of the analysis ({type(error).__name__}: {error}); please report it"
        return CheckResult(source, [not_analysed(reason)], rule_errors=[trace])


def _analyse(tree: ast.Module, source: Source, settings: Settings, resolver, rules) -> CheckResult:
    """The model and the rules; RecursionError propagates so that check_source can retry on a deeper stack."""
    model = build_model(tree, source, resolver=resolver)
    model.mark_walked()
    return _rule_findings(model, source, settings, rules)


def recheck(model: ModuleModel, source: Source, settings: Settings = DEFAULT_SETTINGS, rules=None,
            walk_kept: bool = False) -> CheckResult:
    """The rules again on the model of a tree an edit left unchanged (a comment, trailing spaces; see
    analysis/incremental.py), under the new text: the findings of a full check of that text without walking
    it again. `walk_kept`: no part of the model was walked again since its rules last ran (ModuleModel.rebase).
    RecursionError propagates (the caller checks in full)."""
    model.rebase(source, walk_kept=walk_kept)
    return _rule_findings(model, source, settings, rules)


def _rule_findings(model: ModuleModel, source: Source, settings: Settings, rules) -> CheckResult:
    findings: list[Finding] = []
    errors: list[str] = []
    broken: list[Finding] = []  # (not suppressible: a defect of the analyzer, not a finding about the code)
    for rule in rules if rules is not None else ALL_RULES:
        if not settings.enabled(rule.code, source.path):
            continue
        try:
            # A rule may set a finding's severity per case (AG003's never-reused graph is a warning); only a
            # configured `severity` for the code replaces it.
            configured = settings.severity.get(rule.code)
            for finding in rule.check(model):
                findings.append(finding if configured in (None, finding.severity) else finding.with_severity(configured))
        except RecursionError:
            raise  # not a broken rule: a tree deeper than this stack; skipping the rule would be a silent pass
        except Exception as error:  # a broken rule must not take the others (or the server) down
            errors.append(f"rule {rule.code} ({rule.name}) failed on {source.path or '<buffer>'}:\n{traceback.format_exc()}")
            log.error(errors[-1])
            broken.append(rule_not_run(rule, error))
    file_level = noqa.file_directive(source.lines, source.text)
    kept = [f for f in findings if not noqa.suppressed(f, source.lines, file_level)] + broken
    kept.sort(key=lambda f: (f.span, f.code))
    return CheckResult(source, _dedupe(kept), model, errors, suppressed=len(findings) - len(kept))


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for finding in findings:
        key = (finding.code, finding.span)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out


def check_text(text: str, path: str | None = None, settings: Settings = DEFAULT_SETTINGS, resolver=None) -> CheckResult:
    return check_source(Source(text, path), settings, resolver)


def check_path(path: str | Path, settings: Settings = DEFAULT_SETTINGS, resolver=None) -> CheckResult:
    """Check one file (.py or .ipynb); raises SourceError for unreadable files."""
    return check_source(read_source(path), settings, resolver)
