"""Findings on code nobody here chose: public repositories of training scripts, tutorials and notebooks.

    python -m bench.external DIR [DIR ...]            # per repository and rule: findings by severity, then each one
    python -m bench.external --judged JUDGED.json DIR  # also: which findings were judged real, which false

Each DIR is a checkout of one repository (brought with the `fetch` tool and unpacked; never committed). The
script runs the installed `check` once per DIR (`--no-cache --format json`) and prints the counts per rule and
severity and every finding (path relative to DIR, line, code, severity, message). Whether a finding is a real bug
is a judgement made by reading the code: JUDGED.json maps "repo/relative/path.py:line:AGnnn" to "real", "info" or
"false" (with a reason in bench/RESULTS.md); findings not in it print as "unjudged". False errors and false
warnings are what issue 11's precision lines count.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path


def findings(directory: Path) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", str(directory), "--no-cache", "--exit-zero",
                           "--format", "json"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"check failed on {directory}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout or "[]")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--judged", type=Path, help="JSON: 'repo/path:line:code' -> real | info | false")
    args = parser.parse_args(argv)
    judged = json.loads(args.judged.read_text()) if args.judged else {}
    verdicts: Counter = Counter()
    for directory in args.dirs:
        found = findings(directory)
        files = sum(1 for path in directory.rglob("*") if path.suffix in (".py", ".ipynb"))
        per_rule = Counter((f["code"], f["severity"]) for f in found)
        summary = ", ".join(f"{code} {severity} x{count}" for (code, severity), count in sorted(per_rule.items())) or "none"
        print(f"{directory.name}: {files} files, {len(found)} findings ({summary})")
        for f in found:
            where = f"{directory.name}/{Path(f['path']).resolve().relative_to(directory.resolve())}:{f['line']}:{f['code']}"
            verdict = judged.get(where, "unjudged")
            verdicts[(verdict, f["severity"])] += 1
            print(f"  {where} {f['severity']} [{verdict}] {f['message'][:160]}")
    print("verdicts: " + (", ".join(f"{v} {s} x{n}" for (v, s), n in sorted(verdicts.items())) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
