"""The widened corpus (issue 14): `check` against the ast.parse floor per package and on the whole corpus
(the four packages + generated files + every package of corpus.WIDE_PACKAGES), with jedi's work counted.

Per package: the floor and `check --jobs 1 --no-cache --stats` on that package alone, in alternating order, `reps`
times. Whole corpus: floor, `check --jobs 1 --no-cache --stats`, then an emptied cache (cold) and a warm cache,
rotated, `reps` times. `--stats` (when the CLI has it) prints how often the direct lookup answered, how many jedi
Scripts and queries a run made and the seconds spent inside jedi; they are reported per package and in total.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from . import cli_bench, corpus
from .measure import Series, median, paired_ratio, run_measured

REPO = Path(__file__).resolve().parent.parent
WHOLE_TARGET, PACKAGE_TARGET, RSS_TARGET_MB, WARM_TARGET = 3.0, 4.0, 300.0, 0.1
_STATS = re.compile(r"autograd-lsp: stats: (.*)")


def parse_stats(stderr: str) -> dict:
    """The counters of a `check --stats` run ({} when it printed none)."""
    found = _STATS.findall(stderr or "")
    if not found:
        return {}
    out = {}
    for pair in found[-1].split():
        name, _, value = pair.partition("=")
        try:
            out[name] = float(value) if "." in value else int(value)
        except ValueError:
            pass
    return out


def wide_figures(info, python: str, base_roots: list[Path], reps: int, package_reps: int, log_dir: Path, progress=print,
                 keys: list[str] | None = None) -> dict:
    env = cli_bench.cli_env()
    cli_bench.CLI_CWD.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    stats_flag = ["--stats"] if "--stats" in (info.help or "") else []
    keys = list(corpus.WIDE_PACKAGES) if keys is None else keys
    packages = {}
    for key in keys:
        root = corpus.wide_dir(key)
        files = corpus.wide_files(key)
        packages[key] = {"root": os.path.relpath(root, REPO), "files": len(files), "lines": corpus.count_lines(files),
                         "floor": Series("floor"), "check": Series("check"), "stats": []}
    whole_roots = [*base_roots, *(corpus.wide_dir(key) for key in keys)]
    whole_files = [f for root in whole_roots for f in sorted(root.rglob("*.py"))] + corpus.notebook_files()
    whole = {"roots": [os.path.relpath(r, REPO) for r in whole_roots], "files": len(whole_files), "lines": corpus.count_lines(whole_files),
             "series": {}, "stats": []}
    floor_cmd = lambda roots: [python, str(cli_bench.BENCH_DIR / "floor.py"), *map(str, roots)]  # noqa: E731
    units = [[("floor", floor_cmd(whole_roots), False)],
             [("check", cli_bench.check_cmd(info, whole_roots, 1, cache=False) + stats_flag, False)]]
    if info.flags.get("--no-cache"):
        units.append([("cold", cli_bench.check_cmd(info, whole_roots, 1, cache=True), True),
                      ("warm", cli_bench.check_cmd(info, whole_roots, 1, cache=True), False)])
    for rep in range(max(reps, package_reps)):
        if rep < package_reps:
            for index, (key, entry) in enumerate(packages.items()):
                root = [corpus.wide_dir(key)]
                pair = [("floor", floor_cmd(root)), ("check", cli_bench.check_cmd(info, root, 1, cache=False) + stats_flag)]
                for name, cmd in (pair if (rep + index) % 2 == 0 else pair[::-1]):  # alternate which runs first
                    result = run_measured(cmd, cwd=str(cli_bench.CLI_CWD), env=env, stdout_path=log_dir / f"wide-{key}-{name}.out", timeout=1800)
                    entry[name].runs.append(result)
                    if name == "check":
                        entry["stats"].append(parse_stats(result.stderr))
                progress(f"  wide {key:18s} rep {rep + 1}/{package_reps}: floor {entry['floor'].runs[-1].wall:5.2f} s, check "
                         f"{entry['check'].runs[-1].wall:6.2f} s, {entry['check'].runs[-1].maxrss_mb:4.0f} MB, jedi "
                         f"{(entry['stats'][-1] or {}).get('jedi_queries', '?')} queries {(entry['stats'][-1] or {}).get('jedi_s', '?')} s"
                         + (f"  rc={entry['check'].runs[-1].rc}: {entry['check'].runs[-1].stderr.strip()[-160:]}" if entry["check"].runs[-1].rc else ""))
        if rep < reps:
            order = units[rep % len(units):] + units[:rep % len(units)]
            for unit in order:
                for name, cmd, clear_first in unit:
                    if clear_first:
                        cli_bench.clear_cache(whole_roots)
                    result = run_measured(cmd, cwd=str(cli_bench.CLI_CWD), env=env, stdout_path=log_dir / f"wide-whole-{name}.out", timeout=3600)
                    whole["series"].setdefault(name, Series(name)).runs.append(result)
                    if name == "check":
                        whole["stats"].append(parse_stats(result.stderr))
                    progress(f"  wide whole {name:6s} rep {rep + 1}/{reps}: {result.wall:6.2f} s, maxrss {result.maxrss_mb:5.0f} MB, rc={result.rc}"
                             + (f"  stderr: {result.stderr.strip()[-160:]}" if result.rc not in (0, None) else ""))
    return {"packages": packages, "whole": whole, "reps": reps, "package_reps": package_reps}


def _ratio(entry: dict) -> float | None:
    return paired_ratio(entry["check"], entry["floor"])


def cpu_ratio(a: Series, b: Series) -> float | None:
    """Median over repetitions of a's CPU seconds (user + sys) / b's: what the load of other processes on a shared
    machine changes least (wall-clock ratios are the figures judged)."""
    return median([(x.user + x.sys) / (y.user + y.sys) for x, y in zip(a.runs, b.runs) if y.user + y.sys > 0])


def _stat(stats: list, name: str):
    return median([s.get(name) for s in stats if s])


def report_lines(wide: dict, misses: list) -> list[str]:
    """The report's section on the widened corpus; appends the targets it misses to `misses`."""
    whole, packages = wide["whole"], wide["packages"]
    series = whole["series"]
    lines = ["## Widened corpus (issue 14)", "",
             f"{whole['files']:,} files, {whole['lines']:,} lines: the four packages and generated files above plus "
             f"{len(packages)} packages of other shapes (bench/corpus.py WIDE_PACKAGES). `check --jobs 1 --no-cache` against "
             f"the `ast.parse` floor, alternated: the whole corpus {wide['reps']}×, each package alone {wide['package_reps']}×.", ""]
    floor, check, cold, warm = (series.get(n) for n in ("floor", "check", "cold", "warm"))
    ratio = paired_ratio(check, floor) if check and floor else None
    warm_ratio = paired_ratio(warm, cold) if warm and cold else None
    rss = check.maxrss if check else None
    jedi_q, jedi_s, scripts = (_stat(whole["stats"], n) for n in ("jedi_queries", "jedi_s", "jedi_scripts"))

    def met(value, limit):
        return "—" if value is None else ("✅" if value <= limit else "❌")

    table = ["| whole widened corpus | value | target | met |", "|---|---|---|---|",
             f"| floor (`ast.parse`, one process) | {_s(floor.wall if floor else None)} | — | — |",
             f"| `check --jobs 1 --no-cache` | {_s(check.wall if check else None)} = {_x(ratio)} floor (CPU time: {_x(cpu_ratio(check, floor) if check and floor else None)}) | ≤ {WHOLE_TARGET:g}× | {met(ratio, WHOLE_TARGET)} |",
             f"| peak RSS of that run (ru_maxrss) | {_mb(rss)} | ≤ {RSS_TARGET_MB:g} MB | {met(rss, RSS_TARGET_MB)} |",
             f"| cold cache (emptied, writes it) | {_s(cold.wall if cold else None)} | — | — |",
             f"| warm cache | {_s(warm.wall if warm else None)} = {_x(warm_ratio)} cold | ≤ {WARM_TARGET:g}× cold | {met(warm_ratio, WARM_TARGET)} |",
             f"| jedi per run: Scripts / queries / seconds inside jedi | {_n(scripts)} / {_n(jedi_q)} / {_s(jedi_s)} | — | — |"]
    lines += table + [""]
    if ratio is not None and ratio > WHOLE_TARGET:
        misses.append(f"widened corpus: check is {ratio:.2f}× the floor (target ≤ {WHOLE_TARGET:g}×)")
    if rss is not None and rss > RSS_TARGET_MB:
        misses.append(f"widened corpus: peak RSS {rss:.0f} MB (target ≤ {RSS_TARGET_MB:g} MB)")
    if warm_ratio is not None and warm_ratio > WARM_TARGET:
        misses.append(f"widened corpus: warm cache {warm_ratio:.2f}× cold (target ≤ {WARM_TARGET:g}×)")

    rows = ["| package | shape | files | lines | floor | check | ratio | CPU-time ratio | peak RSS | direct answers | jedi Scripts / queries (skipped) | time in jedi |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ranked = []
    for key, entry in packages.items():
        r = _ratio(entry)
        ranked.append((r if r is not None else -1, key))
        stats = entry["stats"]
        name, version, kind, _, shape = corpus.WIDE_PACKAGES[key]
        rows.append(f"| `{entry['root']}` ({name} {version} {kind}) | {shape} | {entry['files']} | {entry['lines']:,} | {_s(entry['floor'].wall)} | "
                    f"{_s(entry['check'].wall)} | {_x(r)} | {_x(cpu_ratio(entry['check'], entry['floor']))} | {_mb(entry['check'].maxrss)} | {_n(_stat(stats, 'direct'))} | "
                    f"{_n(_stat(stats, 'jedi_scripts'))} / {_n(_stat(stats, 'jedi_queries'))} ({_n(_stat(stats, 'jedi_skipped'))}) | {_s(_stat(stats, 'jedi_s'))} |")
    worst_ratio, worst = max(ranked) if ranked else (None, None)
    lines += rows + [""]
    if worst is not None and worst_ratio >= 0:
        lines += [f"Worst package: **{worst}** at {worst_ratio:.2f}× its floor (target ≤ {PACKAGE_TARGET:g}×) "
                  f"{'✅' if worst_ratio <= PACKAGE_TARGET else '❌'}. Each package runs in its own processes, so the "
                  "ratio includes autograd-lsp's start-up (imports) against a bare interpreter's: it weighs most on the small ones.", ""]
        if worst_ratio > PACKAGE_TARGET:
            misses.append(f"widened corpus: worst package {worst} at {worst_ratio:.2f}× its floor (target ≤ {PACKAGE_TARGET:g}×)")
    return lines


def _s(x):
    return "—" if x is None else f"{x:.2f} s"


def _x(x):
    return "—" if x is None else f"{x:.2f}×"


def _mb(x):
    return "—" if x is None else f"{x:.0f} MB"


def _n(x):
    return "—" if x is None else f"{x:g}"
