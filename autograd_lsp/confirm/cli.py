"""`autograd-lsp confirm PATH:LINE`: run a reproducer of a finding and say whether it really fails.

    autograd-lsp confirm train.py:42 [--code AG002] [--device cpu|cuda] [--timeout S]
                         [--python PATH] [--memory-limit 4G] [--format text|json] [--show]

The finding is the checker's at that line (``--code`` picks one when several rules flag the line).
With ``--code`` and no finding there, the rule's runtime signature is checked anyway (useful on a
fixed version of the file). For notebooks, LINE counts in the code cells joined in order, or use
``PATH:CELL:LINE`` with the cell number and line as ``autograd-lsp check`` prints them.

Exit status: 0 confirmed; 1 not reproduced; 2 usage error (bad PATH:LINE, unreadable file, no or
ambiguous finding at the line, unknown code); 3 anything else (inconclusive, timeout,
resource-limit, cuda-unavailable, torch-missing, error).
"""
from __future__ import annotations

import argparse
import json
import re
import sys

EXIT_CONFIRMED, EXIT_NOT_REPRODUCED, EXIT_USAGE, EXIT_OTHER = 0, 1, 2, 3


def _size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", text, re.I)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 4G, 512M, 1073741824)")
    number, unit = float(match.group(1)), match.group(2).lower()
    return int(number * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[unit])


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Run the smallest program that exercises a finding from your own code, in a separate limited process, and check the rule's runtime signature."
    parser.epilog = "exit status: 0 confirmed, 1 not reproduced, 2 usage error, 3 other (inconclusive, timeout, resource-limit, cuda-unavailable, torch-missing, error)"
    parser.add_argument("target", metavar="PATH:LINE", help="the finding's file and line (notebooks: PATH:LINE in the joined cells, or PATH:CELL:LINE)")
    parser.add_argument("--code", help="the rule to confirm (needed when several rules flag the line, or none does)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="where to run (cuda: factory calls default to cuda)")
    parser.add_argument("--timeout", type=_positive, default=30.0, metavar="S", help="wall-clock limit in seconds (default 30)")
    parser.add_argument("--python", metavar="PATH", help="the interpreter to run it with (default: this one)")
    parser.add_argument("--memory-limit", type=_size, default=4 << 30, metavar="SIZE", help="memory limit of the run: address space on cpu, a cgroup or RLIMIT_DATA on cuda (default 4G)")
    parser.add_argument("--format", choices=["text", "json"], default="text", dest="confirm_format")
    parser.add_argument("--show", action="store_true", help="print the reproducer")


def _parse_target(target: str) -> tuple[str, int, int | None] | str:
    """(path, line, cell or None), or an error message."""
    parts = target.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit() and parts[0].endswith(".ipynb"):
        return parts[0], int(parts[2]), int(parts[1])
    path, _, line = target.rpartition(":")
    if not path or not line.isdigit() or int(line) < 1:
        return f"expected PATH:LINE (e.g. train.py:42), got {target!r}"
    return path, int(line), None


def resolve_target(target: str):
    """PATH:LINE (or PATH:CELL:LINE in a notebook) -> (path, the Source, its joined line), or the usage error's text."""
    from ..source import SourceError, read_source

    parsed = _parse_target(target)
    if isinstance(parsed, str):
        return parsed
    path, line, cell = parsed
    try:
        source = read_source(path)
    except SourceError as error:
        return str(error)
    if cell is not None:
        match = next((c for c in source.cells or [] if c.index == cell - 1), None)
        if match is None or line > match.line_count:
            return f"{path} has no code cell {cell} with a line {line}"
        line = match.first_line + line - 1
    if line > len(source.lines):
        return f"{path} has {len(source.lines)} lines; there is no line {line}"
    return path, source, line


def _usage(message: str) -> int:
    print(f"autograd-lsp confirm: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def run(args) -> int:
    from ..findings import Finding, Severity, Span
    from . import confirm_finding, signature_of

    target = resolve_target(args.target)
    if isinstance(target, str):
        return _usage(target)
    path, source, line = target
    code = args.code.strip().upper() if args.code else None
    if code is not None and signature_of(code) is None:
        return _usage(f"unknown rule code {args.code!r} (AG001-AG018)")

    findings = _findings_at(source, line)
    if code is not None:
        chosen = [f for f in findings if f.code == code]
        if chosen:
            finding = chosen[0]
        else:
            print(f"note: the checker reports no {code} at {path}:{line}; checking {code}'s runtime signature there anyway", file=sys.stderr)
            finding = Finding(code, code, Severity.ERROR, f"{code} (no static finding)", Span(line, 0, line, len(source.line_text(line))))
    else:
        codes = sorted({f.code for f in findings})
        if not codes:
            return _usage(f"no finding at {path}:{line}; pass --code AGnnn to check a rule's runtime signature there")
        if len(codes) > 1:
            return _usage(f"{path}:{line} has {', '.join(codes)}; pass --code to pick one")
        finding = findings[0]

    result = confirm_finding(source, finding, device=args.device, timeout=args.timeout, python=args.python,
                             memory_limit=args.memory_limit, use_cache=False)
    if args.confirm_format == "json":
        print(json.dumps(result.to_json(include_reproducer=args.show), indent=2))
    else:
        if args.show:
            print("--- reproducer " + "-" * 60)
            print(result.reproducer.rstrip() if result.reproducer else "(none)")
            print("-" * 75)
        print(f"{path}:{line}: {result.code} {result.summary()}")
        details = [f"mode: {result.mode}" if result.mode else None, f"{result.duration_s:.1f} s", f"python: {result.python}",
                   "sandbox: bubblewrap" if result.isolation == "bubblewrap" else None]
        if result.forward_line and result.forward_line != result.user_line:
            details.insert(0, f"forward op at line {result.forward_line}")
        print("  " + "; ".join(d for d in details if d))
        for note in result.notes:
            print(f"  note: {note}")
        if result.status == "torch-missing":
            print(f"  hint: {result.python} cannot import torch; pass --python PATH, the interpreter of an environment with torch")
    if result.status == "confirmed":
        return EXIT_CONFIRMED
    if result.status == "not-reproduced":
        return EXIT_NOT_REPRODUCED
    return EXIT_OTHER


def _findings_at(source, line: int) -> list:
    try:
        from ..checker import check_source
    except ImportError:  # the checker is optional for confirmation: --code still works
        return []
    try:
        result = check_source(source)
    except Exception as error:  # a crashing analysis must not hide the runtime check
        print(f"note: the static check failed ({type(error).__name__}: {error}); use --code", file=sys.stderr)
        return []
    findings = [f for f in result.findings if f.code != "AG000"]
    exact = [f for f in findings if f.span.line == line]
    return exact or [f for f in findings if f.span.line <= line <= f.span.end_line]
