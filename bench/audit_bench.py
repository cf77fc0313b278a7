"""How long `autograd-lsp audit` takes on a 200-line training script with a 10-step loop, against a bare
`python -c "import torch"` (target: torch import + 5 s on CPU).

    python -m bench.audit_bench [--repeat 3]

Runs the CLI as a user would (a subprocess each time) with the default bound (3 iterations per loop) and with
`--steps 10` (the whole loop), prints the medians next to the median torch import time and writes them to
bench/RESULTS-audit.md.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "audit_fixtures" / "train200.py"
RESULTS = ROOT / "bench" / "RESULTS-audit.md"
PROBES = ROOT / "autograd_lsp" / "audit" / "_child_probes.py"
BUDGET_S = 5.0


def _timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, out.stdout


def main() -> int:
    from bench.machine import describe

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    imports = [_timed([sys.executable, "-c", "import torch"])[0] for _ in range(args.repeat)]
    torch_import = statistics.median(imports)
    rows, worst = [], 0.0
    for label, options in (("default bound (3 iterations per loop)", []), ("--steps 10 (the whole loop)", ["--steps", "10"])):
        runs = [_timed([sys.executable, "-m", "autograd_lsp", "audit", str(SCRIPT.relative_to(ROOT)), "--format", "json", *options])
                for _ in range(args.repeat)]
        median = statistics.median(t for t, _ in runs)
        doc = json.loads(runs[-1][1])
        over = median - torch_import
        worst = max(worst, over)
        rows.append((label, median, over, len(doc["findings"]), doc["run"]["stopped"], len(doc["run"]["reached_lines"])))
        print(f"{label:40s} {median:6.2f} s = import + {over:5.2f} s ({'ok' if over < BUDGET_S else 'OVER'} budget {BUDGET_S:.0f} s); "
              f"{len(doc['findings'])} findings, stopped: {doc['run']['stopped']}")
    machine = describe(sys.executable)
    lines = [
        "# `autograd-lsp audit` timing (written by `python -m bench.audit_bench`)",
        "",
        f"Script: `{SCRIPT.relative_to(ROOT)}` ({len(SCRIPT.read_text().splitlines())} lines, a 10-step training loop). "
        f"Median of {args.repeat} runs of the CLI as a subprocess; target: torch import + {BUDGET_S:.0f} s on CPU.",
        f"Probes: {'autograd_lsp/audit/_child_probes.py' if PROBES.exists() else 'none yet (_child_probes.py had not landed: the run had no probes)'}.",
        "",
        f"`python -c 'import torch'`: {torch_import:.2f} s (runs: {', '.join(f'{t:.2f}' for t in imports)})",
        "",
        "| run | wall time | over the torch import | findings | stopped | lines reached |",
        "|---|---|---|---|---|---|",
        *(f"| {label} | {median:.2f} s | {over:+.2f} s | {found} | {stopped['reason'] if stopped else 'no'} | {reached} |"
          for label, median, over, found, stopped, reached in rows),
        "",
        f"Worst: import {worst:+.2f} s ({'within' if worst < BUDGET_S else 'OVER'} the {BUDGET_S:.0f} s budget).",
        "",
        "Machine: " + ", ".join(f"{k}: {v}" for k, v in machine.items()),
        "",
    ]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    return 0 if worst < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
