"""Score `check` on the held-out real-bug set (bench/realbugs/), per rule.

Each program in bench/realbugs/ is a standalone re-write of one real user's report (GitHub issue, PR thread,
forum post), never a fixture and never tuned to. Its header comment carries

    # source: <URL of the report>
    # symptom: <regex matched against stdout+stderr of the program on torch 2.13 CPU>

and the line(s) the bug is on carry a trailing `# expect: AGnnn` marker (as in samples/).

    python -m bench.realbugs               # recall per rule (file level and right line) + extra findings
    python -m bench.realbugs --reproduce   # also run every program with torch and check its symptom
    python -m bench.realbugs --markdown    # the table for bench/RESULTS.md
    python -m bench.realbugs --audit       # score `autograd-lsp audit` instead: only what the run observed counts
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUGS = ROOT / "bench" / "realbugs"
_MARKER = re.compile(r"#.*\bexpect:\s*((?:AG\d{3}\b[\s,]*)+)")
_CODE = re.compile(r"AG\d{3}")


def programs() -> list[Path]:
    return sorted(p for p in BUGS.glob("*.py") if not p.name.startswith("_"))


def header(path: Path, key: str) -> str | None:
    for line in path.read_text(encoding="utf-8").splitlines()[:40]:
        match = re.match(rf"#\s*{key}:\s*(.+)", line.strip())
        if match:
            return match.group(1).strip()
    return None


def markers(path: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = _MARKER.search(line)
        if match:
            found.extend((number, code) for code in _CODE.findall(match.group(1)))
    return found


def findings(paths: list[Path]) -> dict[str, list[dict]]:
    """`autograd-lsp check --format json` over the set, as a subprocess (what a user runs)."""
    command = [sys.executable, "-m", "autograd_lsp", "check", "--format", "json", "--exit-zero", "--no-cache", *map(str, paths)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"check failed ({done.returncode}): {done.stderr[-2000:]}")
    by_file: dict[str, list[dict]] = defaultdict(list)
    for item in json.loads(done.stdout or "[]"):
        by_file[str(Path(item["path"]).resolve())].append(item)
    return by_file


def audit_findings(paths: list[Path], steps: int = 3, timeout: float = 120) -> dict[str, list[dict]]:
    """`autograd-lsp audit --format json` on each program, as a subprocess; only findings observed at run time count
    (a static finding the run did not confirm is `check`'s, scored without --audit)."""
    by_file: dict[str, list[dict]] = defaultdict(list)
    for path in paths:
        command = [sys.executable, "-m", "autograd_lsp", "audit", "--format", "json", "--exit-zero", "--steps", str(steps),
                   "--timeout", str(timeout), str(path)]
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        try:
            document = json.loads(done.stdout or "{}")
        except json.JSONDecodeError:
            raise SystemExit(f"audit of {path.name} failed ({done.returncode}): {done.stderr[-2000:]}") from None
        for item in document.get("findings", []):
            if item.get("observed_at_run_time"):
                by_file[str((ROOT / item["path"]).resolve())].append(item)
    return by_file


def reproduce(path: Path, timeout: float = 120) -> tuple[bool, str]:
    """Run the program with torch; its symptom regex must match what it printed."""
    symptom = header(path, "symptom")
    if not symptom:
        return False, "no symptom header"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout, cwd=path.parent, env=env)
    except subprocess.TimeoutExpired:
        return False, "timeout"
    output = done.stdout + done.stderr
    return bool(re.search(symptom, output, re.S)), output.strip().splitlines()[-1][:160] if output.strip() else "(no output)"


def score(run_programs: bool = False, audit: bool = False) -> dict:
    paths = programs()
    by_file = audit_findings(paths) if audit else findings(paths)
    rules: dict[str, dict[str, int]] = defaultdict(lambda: {"bugs": 0, "file": 0, "line": 0})
    rows = []
    for path in paths:
        expected = markers(path)
        got = by_file.get(str(path.resolve()), [])
        got_pairs = {(f["line"], f["code"]) for f in got}
        got_codes = {f["code"] for f in got}
        for code in sorted({c for _, c in expected}):
            lines = [n for n, c in expected if c == code]
            entry = rules[code]
            entry["bugs"] += 1
            entry["file"] += code in got_codes
            entry["line"] += any((n, code) in got_pairs for n in lines)
        extra = sorted(f"{f['code']}@{f['line']}" for f in got if (f["line"], f["code"]) not in set(expected))
        row = {"program": path.name, "expected": [f"{c}@{n}" for n, c in expected], "extra": extra,
               "found": [f"{c}@{n}" for n, c in expected if (n, c) in got_pairs], "source": header(path, "source")}
        if run_programs:
            row["reproduced"], row["output"] = reproduce(path)
        rows.append(row)
    total = {k: sum(r[k] for r in rules.values()) for k in ("bugs", "file", "line")}
    return {"rules": dict(sorted(rules.items())), "total": total, "programs": rows}


def render(result: dict, markdown: bool) -> str:
    lines = []
    if markdown:
        lines += ["| rule | bugs | found in file | on the right line |", "|---|---|---|---|"]
    for code, entry in [*result["rules"].items(), ("total", result["total"])]:
        bugs = entry["bugs"] or 1
        cells = (code, entry["bugs"], f"{entry['file']} ({entry['file'] / bugs:.0%})", f"{entry['line']} ({entry['line'] / bugs:.0%})")
        lines.append("| " + " | ".join(map(str, cells)) + " |" if markdown else "{:<6} {:>4}  file {:<10} line {}".format(*cells))
    missed = [r for r in result["programs"] if len(r["found"]) < len(r["expected"])]
    unfound = lambda r: " ".join(m for m in r["expected"] if m not in r["found"])  # noqa: E731
    extra = [r for r in result["programs"] if r["extra"]]
    lines.append("")
    lines.append(f"markers not found ({len(missed)} programs): " + ", ".join(f"{r['program']} [{unfound(r)}]" for r in missed))
    lines.append(f"extra findings ({len(extra)}): " + ", ".join(f"{r['program']} [{' '.join(r['extra'])}]" for r in extra))
    if any("reproduced" in r for r in result["programs"]):
        failed = [r for r in result["programs"] if not r.get("reproduced")]
        lines.append(f"reproduced on torch: {len(result['programs']) - len(failed)}/{len(result['programs'])}"
                     + "".join(f"\n  NOT reproduced: {r['program']}: {r['output']}" for r in failed))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realbugs", description=__doc__.splitlines()[0])
    parser.add_argument("--reproduce", action="store_true", help="run every program with torch and check its symptom")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--audit", action="store_true", help="score `autograd-lsp audit` (what the run observed) instead of `check`")
    args = parser.parse_args(argv)
    result = score(args.reproduce, audit=args.audit)
    print(json.dumps(result, indent=1) if args.json else render(result, args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
