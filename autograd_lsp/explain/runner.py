"""Run the user's program once under explain's instrumentation, in confirm's child process.

The reproducer is confirm's (``build_reproducer``: loops bounded, function/method entry points
synthesized, the flagged statement marked by ``__agl__.before()/after()``); ``sandbox.run`` runs it
with confirm's limits and interpreter. One line is added at the top of the program: it ``exec``s
``_child_instrument.py`` (whose text travels inside the program, so the child needs nothing but torch)
with the spec of what to capture. Pure stdlib here: the parent never imports torch.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

from ..findings import Finding, Severity, Span
from ..source import Source

INSTRUMENT = Path(__file__).with_name("_child_instrument.py")
_BACKWARD_CALLS = {"backward", "grad"}


class ExplainError(Exception):
    """Nothing could run (the line holds no statement, no reproducer can be built, ...)."""


def _pure(node: ast.AST) -> bool:
    """A name, attribute chain or constant subscript: safe to evaluate again in the user's frame."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or (node.lineno >= best.lineno and (node.end_lineno or 0) <= (best.end_lineno or 0)):
                best = node
    return best


def what_to_capture(source: Source, line: int) -> dict:
    """The expressions whose graph the line computes (targets) or uses (inputs), and whether it backpropagates."""
    try:
        tree = ast.parse(source.text)
    except (SyntaxError, ValueError) as error:
        raise ExplainError(f"the file does not parse: {error}") from None
    stmt = _statement_at(tree, line)
    if stmt is None:
        raise ExplainError(f"line {line} holds no statement")
    simple = not isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
    targets: list[str] = []
    backward = False
    if simple:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _BACKWARD_CALLS:
                backward = True
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for elt in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
                    if _pure(elt):
                        targets.append(ast.unparse(elt))
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and _pure(stmt.target):
            targets.append(ast.unparse(stmt.target))
        elif isinstance(stmt, ast.Return) and stmt.value is not None and _pure(stmt.value):
            targets.append(ast.unparse(stmt.value))
    inputs: list[str] = []
    if simple and not backward:
        called = {id(n.func) for n in ast.walk(stmt) if isinstance(n, ast.Call)}
        for node in ast.walk(stmt.value if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr)) and stmt.value is not None else stmt):
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(getattr(node, "ctx", None), ast.Load) \
                    and id(node) not in called and _pure(node):
                text = ast.unparse(node)
                if text not in inputs and text not in {"torch", "nn", "F", "np", "self"}:
                    inputs.append(text)
        if isinstance(stmt, ast.AugAssign) and _pure(stmt.target):
            inputs.insert(0, ast.unparse(stmt.target))
        # a receiver of an in-place call (`x.add_(1)`): the tensor the line changes
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") \
                    and not node.func.attr.startswith("_") and _pure(node.func.value):
                receiver = ast.unparse(node.func.value)
                if receiver not in targets:
                    targets.append(receiver)
    return {"targets": targets, "inputs": inputs[:12], "backward": backward,
            "statement": (stmt.lineno, stmt.end_lineno or stmt.lineno)}


def _prelude_line(spec: dict) -> str:
    code = INSTRUMENT.read_text(encoding="utf-8")
    return (f"exec(compile({code!r}, '<autograd-lsp explain>', 'exec'), "
            f"{{'SPEC': __import__('json').loads({json.dumps(spec)!r}), 'USER_GLOBALS': globals(), '__name__': '__agl_explain__'}})")


def _insert_at(program: str) -> int:
    """0-based line index after the docstring and `from __future__` imports (which must come first)."""
    tree = ast.parse(program)
    index = 0
    for i, stmt in enumerate(tree.body):
        docstring = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        if docstring or (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            index = stmt.end_lineno or stmt.lineno
        else:
            break
    # after the reproducer's comment header when nothing has to come first
    lines = program.split("\n")
    while index < len(lines) and lines[index].startswith("#"):
        index += 1
    return index


def instrumented(program: str, line_map: dict[int, int], spec: dict) -> tuple[str, dict[int, int]]:
    """The program with the instrumentation line added, and its line map shifted accordingly."""
    at = _insert_at(program)
    shifted = {(k + 1 if k > at else k): v for k, v in line_map.items()}
    shifted[at + 1] = 0
    spec = dict(spec, line_map={str(k): v for k, v in shifted.items()})
    lines = program.split("\n")
    lines.insert(at, _prelude_line(spec))
    return "\n".join(lines), shifted


def run(source: Source, line: int, *, device: str = "cpu", timeout: float = 60.0, python: str | None = None,
        memory_limit: int | None = 4 << 30) -> tuple[dict, dict]:
    """(facts of the run, what was asked) — facts as the confirm harness reports them, plus "explain"."""
    from ..confirm import build_reproducer, sandbox
    from ..confirm.reproducer import Inconclusive

    wanted = what_to_capture(source, line)
    finding = Finding("EXPLAIN", "explain", Severity.INFO, "explain", Span(line, 0, line, len(source.line_text(line))))
    reproducer = build_reproducer(source, finding)
    if isinstance(reproducer, Inconclusive):
        raise ExplainError(f"no program can be built to run line {line}: {reproducer.reason}")
    first, last = reproducer.flagged
    spec = {"flagged": [first, last], "targets": [] if wanted["backward"] else wanted["targets"],
            "inputs": [] if wanted["backward"] else wanted["inputs"]}
    program, line_map = instrumented(reproducer.code, reproducer.line_map, spec)
    outcome = sandbox.run(program, line_map, probe=None, user_path=source.path, device=device, timeout=timeout,
                          python=python, memory_limit=memory_limit)
    run_info = {"mode": reproducer.mode, "entry": reproducer.entry, "notes": list(reproducer.notes),
                "timed_out": outcome.timed_out, "returncode": outcome.returncode, "killed_by": outcome.killed_by,
                "duration_s": round(outcome.duration_s, 3), "python": outcome.python, "output": outcome.output[-4000:],
                "wanted": wanted, "program": program}
    return outcome.facts or {}, run_info
