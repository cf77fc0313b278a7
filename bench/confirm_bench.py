"""Confirmation figures: wall time of ``autograd-lsp confirm samples/<file>:<line> [--code AGnnn] --format json`` for every
``# expect: AGnnn`` marker in samples/, each paired with a fresh ``python -c "import torch"`` run."""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .measure import median, run_measured

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
MARKER = re.compile(r"#\s*expect:\s*((?:AG\d{3}[\s,]*)+)")


@dataclass
class Marker:
    path: Path
    line: int
    codes: list[str]

    @property
    def target(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


@dataclass
class ConfirmResult:
    marker: Marker
    walls: list[float] = field(default_factory=list)
    torch_walls: list[float] = field(default_factory=list)
    verdict: str = "?"
    rc: int | None = None
    error: str = ""
    maxrss_mb: float | None = None

    @property
    def wall(self):
        return median(self.walls)

    @property
    def overhead(self):
        """Median over repetitions of (confirm − paired torch import), seconds."""
        return median([a - b for a, b in zip(self.walls, self.torch_walls)])


def markers(samples: Path = SAMPLES) -> list[Marker]:
    out = []
    for path in sorted(samples.glob("*.py")):
        for number, line in enumerate(path.read_text("utf-8").split("\n"), 1):
            match = MARKER.search(line)
            if match:
                out.append(Marker(path, number, re.findall(r"AG\d{3}", match.group(1))))
    return out


def _verdict(stdout: str) -> str:
    """Best effort: the verdict field(s) of the JSON answer, whatever its exact shape."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return "(no JSON)"
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("verdict", "status", "result", "outcome"):
                if isinstance(node.get(key), str):
                    found.append(node[key])
                    return
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(data)
    return ",".join(dict.fromkeys(found)) or "(json: " + ",".join(sorted(data)[:5] if isinstance(data, dict) else ["list"]) + ")"


def confirm_figures(cli: list[str], python: str, reps: int, log_dir: Path, limit: int | None = None, progress=print) -> dict:
    log_dir.mkdir(parents=True, exist_ok=True)
    found = markers()
    if limit is not None:
        found = found[:limit]
    results = [ConfirmResult(m) for m in found]
    torch_alone: list[float] = []
    for rep in range(reps):
        for result in results:
            # A/B: the torch import floor right before each confirmation
            base = run_measured([python, "-c", "import torch"], cwd=str(REPO), sample_tree=False)
            torch_alone.append(base.wall)
            result.torch_walls.append(base.wall)
            out_path = log_dir / f"confirm-{result.marker.path.stem}-{result.marker.line}.json"
            code = ["--code", result.marker.codes[0]] if len(result.marker.codes) == 1 else []
            run = run_measured([*cli, "confirm", result.marker.target, *code, "--format", "json"], cwd=str(REPO),
                               stdout_path=out_path, timeout=300)
            result.walls.append(run.wall)
            result.rc = run.rc
            result.maxrss_mb = max(result.maxrss_mb or 0, run.maxrss_mb)
            result.verdict = _verdict(out_path.read_text("utf-8", "replace"))
            if run.rc not in (0, 1, 3):  # 0 confirmed, 1 not reproduced, 3 inconclusive/timeout/…; 2 = usage error
                result.error = (run.stderr.strip().splitlines() or ["?"])[-1][:200]
            progress(f"  confirm {result.marker.target} ({','.join(result.marker.codes)}) rep {rep + 1}/{reps}: "
                     f"{run.wall:.2f} s (torch import {base.wall:.2f} s) rc={run.rc} verdict={result.verdict} {result.error}")
    return {"results": results, "torch_import": median(torch_alone), "torch_import_runs": len(torch_alone)}


if __name__ == "__main__":
    for m in markers():
        print(m.target, m.codes, file=sys.stdout)
