"""`autograd-lsp audit SCRIPT [-- ARGS...]`: run a script with its loops bounded under every rule's runtime probe.

    autograd-lsp audit train.py [--steps 3] [--device cpu|cuda] [--python PATH] [--timeout S]
                      [--format text|json|sarif] [--select ...] [--ignore ...] [-- ARGS...]

Exit status as `check`: 0 nothing found, 1 findings, 2 error (unreadable file, the run could not start).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _steps(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..confirm.cli import _positive, _size
    from ..cli import _csv

    parser.description = ("Run a script (or a notebook's cells in order) in confirm's sandbox with every loop bounded to its "
                          "first iterations, watch every rule's runtime signature, and merge what ran with `check`'s findings.")
    parser.epilog = "arguments after `--` are the script's own (sys.argv[1:]); exit status: 0 clean, 1 findings, 2 error"
    parser.add_argument("script", metavar="SCRIPT", help="a .py script or .ipynb notebook")
    parser.add_argument("--steps", type=_steps, default=3, help="iterations each loop runs (default 3)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="where to run (cuda: factory calls default to cuda)")
    parser.add_argument("--python", metavar="PATH", help="the interpreter to run it with (default: this one)")
    parser.add_argument("--timeout", type=_positive, default=120.0, metavar="S", help="wall-clock limit in seconds (default 120)")
    parser.add_argument("--memory-limit", type=_size, default=4 << 30, metavar="SIZE", help="memory limit of the run (default 4G)")
    parser.add_argument("--format", choices=["text", "json", "sarif"], default="text", dest="audit_format")
    parser.add_argument("--select", type=_csv, help="only these rules (codes, names or prefixes, comma-separated)")
    parser.add_argument("--ignore", type=_csv, default=[], help="skip these rules")
    parser.add_argument("--extend-select", type=_csv, default=[], help="add rules to the selection")
    parser.add_argument("--config", type=Path, help="pyproject.toml to read [tool.autograd-lsp] from")
    # Probes under development (and the tests' small ones) instead of the package's _child_probes.py.
    parser.add_argument("--probes", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when problems are found")


def run(args) -> int:
    from ..config import load_settings
    from . import AuditError, audit
    from . import report as audit_report

    script_args = list(getattr(args, "script_args", None) or [])
    settings = load_settings(Path(args.script) if Path(args.script).exists() else Path("."), args.config)
    settings = settings.with_selection(select=args.select, ignore=args.ignore, extend_select=args.extend_select)
    for warning in settings.warnings:
        print(f"autograd-lsp: warning: {warning}", file=sys.stderr)
    if not Path(args.script).is_file():
        print(f"autograd-lsp audit: error: {args.script}: no such file", file=sys.stderr)
        return EXIT_ERROR
    try:
        probes = args.probes.read_text(encoding="utf-8") if args.probes else None
        result = audit(args.script, script_args, steps=args.steps, device=args.device, python=args.python,
                       timeout=args.timeout, memory_limit=args.memory_limit, settings=settings, probes=probes)
    except OSError as error:
        print(f"autograd-lsp audit: error: {args.probes}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    except AuditError as error:
        print(f"autograd-lsp audit: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    if args.audit_format == "json":
        print(audit_report.as_json(result))
    elif args.audit_format == "sarif":
        print(audit_report.as_sarif(result))
    else:
        print(audit_report.text(result))
    if not result.run.started:
        if args.audit_format != "text":
            print(f"autograd-lsp audit: error: {audit_report.stop_line(result)}", file=sys.stderr)
        return EXIT_ERROR
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN
