"""`autograd-lsp explain PATH:LINE`: the autograd graph at a line and what broke it.

    autograd-lsp explain train.py:42 [--device cpu|cuda] [--python PATH] [--timeout S]
                         [--memory-limit 4G] [--format text|json|markdown|dot|svg] [--expand] [--output FILE]

Runs the program once (confirm's reproducer: loops bounded, in a separate limited process).
Exit status: 0 explained, clean; 1 explained, a culprit was found; 2 usage error; 3 nothing to
explain (timeout, torch missing, the run failed before the line...).
"""
from __future__ import annotations

import argparse
import sys

EXIT_CLEAN, EXIT_CULPRIT, EXIT_USAGE, EXIT_OTHER = 0, 1, 2, 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..confirm.cli import _positive, _size

    parser.description = ("Run the program once under instrumentation and show the autograd graph at a line, with the "
                          "user's names and lines, saved-tensor versions, and the in-place change or earlier backward that broke it.")
    parser.epilog = "exit status: 0 clean, 1 culprit found, 2 usage error, 3 could not explain (timeout, torch missing, error)"
    parser.add_argument("target", metavar="PATH:LINE", help="the file and the line whose graph to explain")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--timeout", type=_positive, default=60.0, metavar="S", help="wall-clock limit in seconds (default 60)")
    parser.add_argument("--python", metavar="PATH", help="the interpreter to run it with (default: this one)")
    parser.add_argument("--memory-limit", type=_size, default=4 << 30, metavar="SIZE", help="address-space limit on cpu (default 4G)")
    parser.add_argument("--format", choices=["text", "json", "markdown", "dot", "svg"], default="text", dest="explain_format")
    parser.add_argument("--expand", action="store_true", help="one node per autograd node (no collapsing of layers and lines)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the result to FILE instead of stdout")


def run(args) -> int:
    from ..confirm.cli import resolve_target
    from . import ExplainError, explain

    target = resolve_target(args.target)
    if isinstance(target, str):
        return _usage(target)
    _, source, line = target
    try:
        result = explain(source, line, device=args.device, timeout=args.timeout, python=args.python,
                         memory_limit=args.memory_limit, expand=args.expand)
    except ExplainError as error:
        return _usage(str(error))
    render = {"text": result.to_text, "json": result.to_json, "markdown": result.to_markdown,
              "dot": result.to_dot, "svg": result.to_svg}[args.explain_format]
    text = render()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if result.doc["status"] != "explained":
        return EXIT_OTHER
    return EXIT_CULPRIT if result.doc["culprit"] else EXIT_CLEAN


def _usage(message: str) -> int:
    print(f"autograd-lsp explain: error: {message}", file=sys.stderr)
    return EXIT_USAGE
