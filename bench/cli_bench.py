"""Command-line figures: ``autograd-lsp check`` (one process / --jobs N, no cache / cold cache / warm cache)
against the ast.parse floor, flake8 (default rules) and TorchFix, alternated in one run."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import corpus
from .measure import Series, median, paired_ratio, run_measured

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
WORK_DIR = BENCH_DIR / ".work"
CLI_CWD = WORK_DIR / "cli-cwd"
CLI_XDG = WORK_DIR / "cli-xdg"
CACHE_DIR = WORK_DIR / "cli-cache"
CACHE_NAME = ".autograd-lsp-cache"


@dataclass
class CliInfo:
    cmd: list[str]  # the executable, or e.g. [python, "-m", "autograd_lsp"]
    exists: bool
    help: str = ""
    flags: dict = field(default_factory=dict)  # flag → supported
    error: str = ""

    @property
    def missing(self) -> list[str]:
        return [flag for flag in REQUIRED_FLAGS if not self.flags.get(flag)]


REQUIRED_FLAGS = ["--exit-zero", "--jobs", "--no-cache"]  # reported as missing when absent
WANTED_FLAGS = [*REQUIRED_FLAGS, "--cache-dir", "--no-cross-module"]  # optional ones are used when present


def detect_cli(cmd: list[str]) -> CliInfo:
    info = CliInfo(cmd, Path(cmd[0]).exists() or shutil.which(cmd[0]) is not None)
    if not info.exists:
        info.error = f"{cmd[0]} does not exist (pip install -e . not run yet?)"
        return info
    try:
        proc = subprocess.run([*cmd, "check", "--help"], capture_output=True, text=True, timeout=60, cwd=str(REPO))
    except (OSError, subprocess.TimeoutExpired) as error:
        info.error = str(error)
        return info
    info.help = proc.stdout + proc.stderr
    if proc.returncode != 0:
        info.error = f"`check --help` exited {proc.returncode}: {info.help.strip()[-300:]}"
    for flag in WANTED_FLAGS:
        info.flags[flag] = re.search(re.escape(flag) + r"\b", info.help) is not None
    return info


def cli_env() -> dict:
    CLI_XDG.mkdir(parents=True, exist_ok=True)
    return with_repo_path(dict(os.environ, XDG_CACHE_HOME=str(CLI_XDG)))


def with_repo_path(env: dict) -> dict:
    """Make the package importable from any cwd (needed for `python -m autograd_lsp` before pip install -e .)."""
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def cache_candidates(roots: list[Path]) -> list[Path]:
    """Where a content-hashed cache may land when there is no --cache-dir flag."""
    places = {CACHE_DIR, CLI_CWD / CACHE_NAME, REPO / CACHE_NAME, CLI_XDG / "autograd-lsp", CLI_XDG / "autograd_lsp", corpus.CORPUS_DIR / CACHE_NAME}
    for root in roots:
        for parent in [root, *root.parents]:
            places.add(parent / CACHE_NAME)
    return sorted(places)


def clear_cache(roots: list[Path]) -> list[Path]:
    removed = []
    for place in cache_candidates(roots):
        if place.exists():
            shutil.rmtree(place, ignore_errors=True)
            removed.append(place)
    return removed


def existing_caches(roots: list[Path]) -> list[Path]:
    return [p for p in cache_candidates(roots) if p.exists()]


def check_cmd(info: CliInfo, roots: list[Path], jobs: int | None, cache: bool, cross_module: bool = True) -> list[str]:
    cmd = [*info.cmd, "check", *map(str, roots)]
    if not cross_module and info.flags.get("--no-cross-module"):
        cmd.append("--no-cross-module")
    if info.flags.get("--exit-zero"):
        cmd.append("--exit-zero")
    if jobs is not None and info.flags.get("--jobs"):
        cmd += ["--jobs", str(jobs)]
    if cache:
        if info.flags.get("--cache-dir"):
            cmd += ["--cache-dir", str(CACHE_DIR)]
    elif info.flags.get("--no-cache"):
        cmd.append("--no-cache")
    return cmd


def cli_figures(info: CliInfo | None, python: str, roots: list[Path], reps: int, log_dir: Path, flake8: Path | None,
                jobs: int, progress=print) -> dict:
    """Alternated repetitions of every variant; returns {name: Series} plus notes."""
    log_dir.mkdir(parents=True, exist_ok=True)
    CLI_CWD.mkdir(parents=True, exist_ok=True)
    env = cli_env()
    floor_cmd = [python, str(BENCH_DIR / "floor.py"), *map(str, roots)]
    units: list[list[tuple[str, list[str], bool]]] = [[("floor", floor_cmd, False)]]
    notes: list[str] = []
    if info and info.exists and not info.error:
        has_jobs = info.flags.get("--jobs")
        has_cache = info.flags.get("--no-cache") or info.flags.get("--cache-dir")
        units.append([("cli_1_nocache", check_cmd(info, roots, 1, cache=False), False)])
        if info.flags.get("--no-cross-module"):
            units.append([("cli_1_nocache_nocross", check_cmd(info, roots, 1, cache=False, cross_module=False), False)])
        if has_jobs:
            units.append([(f"cli_{jobs}_nocache", check_cmd(info, roots, jobs, cache=False), False)])
        else:
            notes.append("`--jobs` missing: no parallel figure")
        if info.flags.get("--no-cache"):
            # the cache unit: empty cache (writes it), then a warm run of each width
            pair = [("cli_1_cold", check_cmd(info, roots, 1, cache=True), True), ("cli_1_warm", check_cmd(info, roots, 1, cache=True), False)]
            if has_jobs:
                pair.append((f"cli_{jobs}_warm", check_cmd(info, roots, jobs, cache=True), False))
            units.append(pair)
        elif not has_cache:
            notes.append("`--no-cache` missing: cache figures not measured")
        else:
            notes.append("`--no-cache` missing (but --cache-dir present): cold = emptied cache dir")
    if flake8:
        units.append([("flake8_j1", [str(flake8), "--exit-zero", "--jobs", "1", *map(str, roots)], False)])
        units.append([(f"flake8_j{jobs}", [str(flake8), "--exit-zero", "--jobs", str(jobs), *map(str, roots)], False)])
    series: dict[str, Series] = {}
    cache_seen: set[str] = set()
    for rep in range(reps):
        order = units[rep % len(units):] + units[:rep % len(units)]  # rotate: no variant always first
        for unit in order:
            for name, cmd, clear_first in unit:
                if clear_first:
                    clear_cache(roots)
                result = run_measured(cmd, cwd=str(CLI_CWD), env=env, stdout_path=log_dir / f"{name}.out", timeout=1800)
                series.setdefault(name, Series(name)).runs.append(result)
                if name.startswith("cli_") and "nocache" not in name:
                    cache_seen.update(os.path.relpath(p, REPO) for p in existing_caches(roots))
                progress(f"  cli {name:16s} rep {rep + 1}/{reps}: {result.wall:6.2f} s, maxrss {result.maxrss_mb:5.0f} MB, "
                         f"tree peak {result.tree_peak_mb:5.0f} MB, rc={result.rc}" + (" TORCH MAPPED" if result.torch_maps else "") + (f"  stderr: {result.stderr.strip()[-160:]}" if result.rc not in (0, None) else ""))
    if cache_seen:
        notes.append("cache found at: " + ", ".join(sorted(cache_seen)))
    return {"series": series, "notes": notes}


def torchfix_figures(info: CliInfo | None, python: str, torchfix: Path, roots: list[Path], reps: int, log_dir: Path,
                     progress=print) -> dict:
    """TorchFix (default rules, default --jobs = all cores) against the floor and the one-process CLI on the
    same roots, alternated."""
    env = cli_env()
    units = [("floor", [python, str(BENCH_DIR / "floor.py"), *map(str, roots)]), ("torchfix", [str(torchfix), *map(str, roots)])]
    if info and info.exists and not info.error:
        units.append(("cli_1_nocache", check_cmd(info, roots, 1, cache=False)))
    series: dict[str, Series] = {}
    for rep in range(reps):
        for name, cmd in units:
            result = run_measured(cmd, cwd=str(CLI_CWD), env=env, stdout_path=log_dir / f"tf-{name}.out", timeout=3600)
            series.setdefault(name, Series(name)).runs.append(result)
            progress(f"  torchfix-set {name:14s} rep {rep + 1}/{reps}: {result.wall:7.2f} s, maxrss {result.maxrss_mb:5.0f} MB, rc={result.rc}")
    return {"series": series}


def profile_cli(info: CliInfo, python: str, roots: list[Path], out_dir: Path, top: int = 30) -> str:
    """cProfile of the one-process, no-cache CLI over the roots; the top entries by cumulative and own time."""
    import pstats
    import io
    out_dir.mkdir(parents=True, exist_ok=True)
    prof = out_dir / "cli.prof"
    prof.unlink(missing_ok=True)
    args = check_cmd(info, roots, 1, cache=False)[len(info.cmd) + 1:]
    if len(info.cmd) >= 3 and info.cmd[1] == "-m":  # python -m autograd_lsp
        run, argv0 = f"runpy.run_module({info.cmd[2]!r}, run_name='__main__', alter_sys=True)", info.cmd[2]
    else:  # a Python script: the venv entry point or a snapshot launcher
        run, argv0 = f"runpy.run_path({info.cmd[-1]!r}, run_name='__main__')", info.cmd[-1]
    # Not `python -m cProfile`: the CLI's entry ends a check with os._exit (no heap teardown), which would end the
    # process before cProfile writes its file. Here os._exit raises SystemExit, and the profile is written after.
    code = "\n".join([
        "import cProfile, os, runpy, sys",
        "def _exit(code):",
        "    raise SystemExit(code)",
        "os._exit = _exit",
        f"sys.argv = {[argv0, 'check', *map(str, args)]!r}",
        "profile = cProfile.Profile()",
        "try:",
        f"    profile.runcall(lambda: {run})",
        "except SystemExit:",
        "    pass",
        f"profile.dump_stats({str(prof)!r})",
    ])
    cmd = [python, "-c", code]
    proc = subprocess.run(cmd, cwd=str(CLI_CWD), env=cli_env(), capture_output=True, text=True, timeout=3600)
    if not prof.exists():
        return f"profiling failed (rc={proc.returncode}): {proc.stderr.strip()[-500:]}"
    text = io.StringIO()
    stats = pstats.Stats(str(prof), stream=text)
    stats.strip_dirs()
    text.write("## by cumulative time\n")
    stats.sort_stats("cumulative").print_stats(top)
    text.write("## by own time\n")
    stats.sort_stats("tottime").print_stats(top)
    report = text.getvalue()
    (out_dir / "cli-profile.txt").write_text(report)
    return report


def lines_per_s(lines: int, seconds: float | None) -> float | None:
    return lines / seconds if seconds else None


__all__ = ["detect_cli", "cli_figures", "torchfix_figures", "profile_cli", "paired_ratio", "median"]
