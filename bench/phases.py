"""Where the CLI's time goes, phase by phase, in one process: read+decode, ast.parse, build_model, each rule,
and the full ``check_source`` (which adds noqa, sorting and dedupe). Uses the package's internal API, so
it may need adjusting when that changes; the harness treats a failure here as a missing figure.

Usage: ``python -m bench.phases PATH...`` (directories walked for .py/.ipynb); prints JSON.
"""
from __future__ import annotations

import ast
import gc
import json
import sys
import time
from pathlib import Path


def _files(args):
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in (".py", ".ipynb") and not any(part.startswith(".") for part in p.relative_to(path).parts))
        else:
            yield path


def main(args) -> dict:
    from autograd_lsp import checker
    from autograd_lsp.analysis import build_model
    from autograd_lsp.rules import ALL_RULES
    from autograd_lsp.source import read_source

    timings = {"read": 0.0, "ast.parse": 0.0, "build_model": 0.0, "rules": 0.0, "check_source (all)": 0.0}
    per_rule: dict[str, float] = {}
    files = lines = 0
    errors: list[str] = []
    perf = time.perf_counter
    for path in _files(args):
        t = perf()
        source = read_source(path)
        timings["read"] += perf() - t
        files += 1
        lines += len(source.lines)
        t = perf()
        try:
            tree = ast.parse(source.text, filename=str(path))
        except SyntaxError:
            continue
        timings["ast.parse"] += perf() - t
        t = perf()
        try:
            model = build_model(tree, source)
        except Exception as error:  # noqa: BLE001 - report, keep measuring
            errors.append(f"{path}: build_model: {type(error).__name__}: {error}")
            continue
        timings["build_model"] += perf() - t
        for rule in ALL_RULES:
            t = perf()
            try:
                for _ in rule.check(model):
                    pass
            except Exception as error:  # noqa: BLE001
                errors.append(f"{path}: {rule.code}: {type(error).__name__}: {error}")
            spent = perf() - t
            per_rule[rule.code] = per_rule.get(rule.code, 0.0) + spent
            timings["rules"] += spent
        t = perf()
        checker.check_source(source)
        timings["check_source (all)"] += perf() - t
    return {"files": files, "lines": lines, "timings": timings, "per_rule": dict(sorted(per_rule.items(), key=lambda kv: -kv[1])),
            "errors": errors[:20], "error_count": len(errors), "gc_enabled": gc.isenabled()}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=1))
