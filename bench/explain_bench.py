"""How long `autograd-lsp explain` takes against a bare `python -c "import torch"` (target: import + 3 s on CPU).

    python bench/explain_bench.py [--repeat 3]

Runs the CLI as a user would (a subprocess each time) on the seeds' programs and the 200-layer model, and
prints the median wall time of each next to the median torch import time, and the margin left; and how
readable each graph is: its nodes after collapsing (of the raw autograd nodes) and the text tree's lines
(readable: at most READABLE_NODES nodes, collapsed whenever the raw graph is larger).
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
FIXTURES = ROOT / "tests" / "explain_fixtures"
CASES = [
    ("seed 001 three weights", FIXTURES / "seed001_three_weights.py", 39),
    ("seed 000 composed weight", FIXTURES / "seed000_composed_weight.py", 29),
    ("AG006 in-place on saved", ROOT / "samples" / "ag006_inplace_on_saved_tensor.py", 16),
    ("200-layer MLP", FIXTURES / "deep_mlp.py", 14),
]
BUDGET_S = 3.0
READABLE_NODES = 40


def _timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def _readability(path: Path, line: int) -> tuple[str, bool]:
    """"N nodes of R raw, collapsed, T text lines" and whether that is readable."""
    run = subprocess.run([sys.executable, "-m", "autograd_lsp", "explain", f"{path}:{line}", "--format", "json"],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    try:
        graph = json.loads(run.stdout)["graph"]
    except (ValueError, KeyError):
        return f"no JSON (exit {run.returncode})", False
    text = subprocess.run([sys.executable, "-m", "autograd_lsp", "explain", f"{path}:{line}"], cwd=ROOT,
                          capture_output=True, text=True, check=False).stdout
    nodes, raw = len(graph["nodes"]), graph["raw_nodes"]
    readable = 0 < nodes <= READABLE_NODES and (graph["collapsed"] or raw <= READABLE_NODES)
    return f"{nodes} nodes of {raw} raw{', collapsed' if graph['collapsed'] else ''}, {len(text.splitlines())} text lines", readable


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch_import = statistics.median(_timed([sys.executable, "-c", "import torch"]) for _ in range(args.repeat))
    print(f"python -c 'import torch': {torch_import:.2f} s (median of {args.repeat})")
    worst = float("-inf")
    unreadable = []
    for label, path, line in CASES:
        times = [_timed([sys.executable, "-m", "autograd_lsp", "explain", f"{path}:{line}", "--format", "json"])
                 for _ in range(args.repeat)]
        median = statistics.median(times)
        over = median - torch_import
        worst = max(worst, over)
        shape, readable = _readability(path, line)
        if not readable:
            unreadable.append(label)
        print(f"{label:28s} {median:6.2f} s  = import + {over:5.2f} s  ({'ok' if over < BUDGET_S else 'OVER'} budget {BUDGET_S:.0f} s)"
              f"  graph: {shape}{'' if readable else '  UNREADABLE'}")
    print(f"worst: import + {worst:.2f} s; unreadable: {', '.join(unreadable) or 'none'}")
    return 0 if worst < BUDGET_S and not unreadable else 1


if __name__ == "__main__":
    sys.exit(main())
