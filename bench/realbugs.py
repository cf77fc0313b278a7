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
    python -m bench.realbugs --set bench/holdout   # another set of the same shape (see bench/holdout/README.md)

A set may also hold clean twins, `<name>_fixed.py`: the same program with the bug fixed the way the thread fixed it,
with no markers. Every finding on a twin is a false finding; `--reproduce` checks that a twin exits 0 and that its
symptom regex does NOT match (the fix really removes the symptom).
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


TWIN_SUFFIX = "_fixed.py"


def programs(root: Path = BUGS) -> list[Path]:
    """The bug programs of a set (its clean twins excluded)."""
    return sorted(p for p in root.glob("*.py") if not p.name.startswith("_") and not p.name.endswith(TWIN_SUFFIX))


def twins(root: Path = BUGS) -> list[Path]:
    """The clean twins of a set: `<name>_fixed.py`, no markers, any finding on them is false."""
    return sorted(p for p in root.glob("*" + TWIN_SUFFIX) if not p.name.startswith("_"))


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


def _run(path: Path, timeout: float) -> tuple[int | None, str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout, cwd=path.parent, env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    return done.returncode, done.stdout + done.stderr


def _last_line(output: str) -> str:
    return output.strip().splitlines()[-1][:160] if output.strip() else "(no output)"


def _run_with_symptom(path: Path, timeout: float) -> tuple[str | None, int | None, str]:
    """(symptom regex, exit code or None on timeout, output) of running the program with torch; (None, None, why)
    when the program has no symptom header."""
    symptom = header(path, "symptom")
    if not symptom:
        return None, None, "no symptom header"
    code, output = _run(path, timeout)
    return symptom, code, output


def reproduce(path: Path, timeout: float = 120) -> tuple[bool, str]:
    """Run the program with torch; its symptom regex must match what it printed."""
    symptom, code, output = _run_with_symptom(path, timeout)
    if symptom is None or code is None:
        return False, output
    return bool(re.search(symptom, output, re.S)), _last_line(output)


def reproduce_twin(path: Path, timeout: float = 120) -> tuple[bool, str]:
    """Run a clean twin with torch: it must exit 0 and its symptom regex must NOT match what it printed."""
    symptom, code, output = _run_with_symptom(path, timeout)
    if symptom is None or code is None:
        return False, output
    if code != 0:
        return False, f"exit {code}: {_last_line(output)}"
    if re.search(symptom, output, re.S):
        return False, f"symptom still seen: {_last_line(output)}"
    return True, _last_line(output)


def score(run_programs: bool = False, audit: bool = False, root: Path = BUGS) -> dict:
    paths, clean = programs(root), twins(root)
    by_file = audit_findings(paths + clean) if audit else findings(paths + clean)
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
    result = {"rules": dict(sorted(rules.items())), "total": total, "programs": rows}
    if clean:
        twin_rows = []
        for path in clean:
            got = sorted(by_file.get(str(path.resolve()), []), key=lambda f: (f["line"], f["code"]))
            row = {"program": path.name, "source": header(path, "source"), "markers": len(markers(path)),
                   "false": [{"code": f["code"], "severity": f.get("severity"), "line": f["line"]} for f in got]}
            if run_programs:
                row["clean_run"], row["output"] = reproduce_twin(path)
            twin_rows.append(row)
        result["twins"] = twin_rows
    return result


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
    if "twins" in result:
        lines += render_twins(result["twins"], markdown)
    return "\n".join(lines)


def render_twins(rows: list[dict], markdown: bool) -> list[str]:
    """The clean twins: every finding on one is a false finding (code, severity, line)."""
    false = [(r["program"], f) for r in rows for f in r["false"]]
    by_severity: dict[str, int] = defaultdict(int)
    for _, f in false:
        by_severity[f["severity"]] += 1
    flagged = sum(1 for r in rows if r["false"])
    summary = ", ".join(f"{n} {sev}" for sev, n in sorted(by_severity.items())) or "none"
    lines = ["", f"clean twins: {len(rows)}, with a false finding: {flagged}, false findings: {len(false)} ({summary})"]
    if markdown and false:
        lines += ["", "| twin | code | severity | line |", "|---|---|---|---|"]
        lines += [f"| {name} | {f['code']} | {f['severity']} | {f['line']} |" for name, f in false]
    else:
        lines += [f"  false finding: {name}: {f['code']} {f['severity']} line {f['line']}" for name, f in false]
    marked = [r["program"] for r in rows if r["markers"]]
    if marked:
        lines.append("twins that carry `expect:` markers (they must not): " + ", ".join(marked))
    if any("clean_run" in r for r in rows):
        failed = [r for r in rows if not r.get("clean_run")]
        lines.append(f"twins clean on torch (exit 0, symptom not seen): {len(rows) - len(failed)}/{len(rows)}"
                     + "".join(f"\n  NOT clean: {r['program']}: {r['output']}" for r in failed))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realbugs", description=__doc__.splitlines()[0])
    parser.add_argument("--reproduce", action="store_true", help="run every program with torch and check its symptom")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--audit", action="store_true", help="score `autograd-lsp audit` (what the run observed) instead of `check`")
    parser.add_argument("--set", dest="root", type=Path, default=BUGS, metavar="DIR",
                        help="the directory of the set to score (default: bench/realbugs); `_fixed.py` files are its clean twins")
    args = parser.parse_args(argv)
    root = args.root if args.root.is_absolute() else (Path.cwd() / args.root)
    if not root.is_dir():
        parser.error(f"--set {args.root}: not a directory")
    result = score(args.reproduce, audit=args.audit, root=root.resolve())
    print(json.dumps(result, indent=1) if args.json else render(result, args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
