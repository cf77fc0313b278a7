"""Findings of two versions of autograd-lsp, compared one by one on the whole benchmark corpus.

    .venv/bin/python -m bench.compare_findings                 # `git merge-base main HEAD` against the working tree
    .venv/bin/python -m bench.compare_findings --base HEAD~3   # any revision
    .venv/bin/python -m bench.compare_findings PATH ...        # other files

The base revision's autograd_lsp/ is copied to bench/.work/snapshots/<sha>/ (as `python -m bench --snapshot` does);
both versions run `check --no-cache --format json` on the same roots from the same directory, one root at a time;
every finding (path, line, column, code, message) only one side reports is printed. Exit status 1 when any differ.
Default roots: the benchmark corpus (the four packages, the widened packages, the generated files), samples/,
tests/ and the real-script corpus of tests/test_real_scripts.py (tests/.cache/realscripts, present once that test
ran; tests/test_real_code.py's wheels are the corpus's four packages).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import corpus  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
WORK_DIR = BENCH_DIR / ".work"
# tests/test_real_code.py checks the same four wheels as the corpus (bench/.corpus/src): only the scripts are added
TEST_CORPORA = [REPO / "tests" / ".cache" / "realscripts" / "src"]


def snapshot(rev: str, python: str) -> Path:
    """A launcher script running `rev`'s autograd_lsp/ (its own directory comes first on sys.path)."""
    sha = subprocess.run(["git", "rev-parse", rev], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    target = WORK_DIR / "snapshots" / sha[:12]
    launcher = target / "autograd-lsp"
    if not launcher.exists():
        tmp = target.with_name(target.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", "--format=tar", sha, "autograd_lsp"], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        launcher_tmp = tmp / "autograd-lsp"
        launcher_tmp.write_text(f"#!{python}\nimport sys\n\nfrom autograd_lsp.cli import main\n\nsys.exit(main())\n")
        launcher_tmp.chmod(0o755)
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
    return launcher


def default_roots() -> tuple[list[Path], list[str]]:
    corpus.ensure_corpus(quiet=False, wide=True)
    roots = [*corpus.corpus_roots(), *(corpus.wide_dir(key) for key in corpus.WIDE_PACKAGES), REPO / "samples", REPO / "tests"]
    notes = []
    for place in TEST_CORPORA:
        if place.is_dir():
            roots.extend(sorted(p for p in place.iterdir() if p.is_dir()))
        else:
            notes.append(f"{os.path.relpath(place, REPO)} missing (run the test that downloads it): not compared")
    return roots, notes


def findings(cmd: list[str], root: Path, jobs: int, env: dict) -> tuple[set, float, str]:
    started = time.perf_counter()
    proc = subprocess.run([*cmd, "check", os.path.relpath(root, REPO), "--no-cache", "--exit-zero", "--format", "json", "--jobs", str(jobs)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - started
    try:
        items = json.loads(proc.stdout or "[]")
    except ValueError:
        return set(), elapsed, f"rc={proc.returncode}: {(proc.stderr or proc.stdout).strip()[-400:]}"
    keys = {(item.get("filename") or item.get("path"), (item.get("location") or {}).get("row", item.get("line")),
             (item.get("location") or {}).get("column", item.get("column")), item.get("code"), item.get("message")) for item in items}
    return keys, elapsed, "" if proc.returncode == 0 else f"rc={proc.returncode}: {proc.stderr.strip()[-400:]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare_findings", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, help="roots to check (default: the whole corpus, see above)")
    parser.add_argument("--base", default="", help="the revision compared against (default: where HEAD left main, `git merge-base main HEAD`)")
    parser.add_argument("--new", default="", help="a revision for the other side (default: the working tree)")
    parser.add_argument("--jobs", type=int, default=1, help="--jobs for both sides (default 1: one resolver, files in order)")
    args = parser.parse_args(argv)
    python = sys.executable
    roots, notes = (list(args.paths), []) if args.paths else default_roots()
    if not args.base:
        args.base = subprocess.run(["git", "merge-base", "main", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()[:12]
    base = [str(snapshot(args.base, python))]
    new = [str(snapshot(args.new, python))] if args.new else [python, "-m", "autograd_lsp"]
    env = dict(os.environ, PYTHONPATH="")
    env_new = dict(os.environ, PYTHONPATH=str(REPO))
    print(f"base: {args.base} ({os.path.relpath(base[0], REPO)}); new: {args.new or 'working tree'}; {len(roots)} roots", flush=True)
    differences = total = 0
    for root in roots:
        old, old_s, old_error = findings(base, root, args.jobs, env)
        now, new_s, new_error = findings(new, root, args.jobs, env_new if not args.new else env)
        total += len(now)
        only_old, only_new = sorted(old - now, key=str), sorted(now - old, key=str)
        differences += len(only_old) + len(only_new)
        status = "same" if not only_old and not only_new else f"{len(only_old)} only in base, {len(only_new)} only in new"
        print(f"{os.path.relpath(root, REPO):55s} {len(now):5d} findings  {status}  ({old_s:.1f} s / {new_s:.1f} s)", flush=True)
        for error, side in ((old_error, "base"), (new_error, "new")):
            if error:
                print(f"    {side} failed: {error}")
                differences += 1
        for key in only_old:
            print(f"    - {key}")
        for key in only_new:
            print(f"    + {key}")
    for note in notes:
        print(f"note: {note}")
    print(f"{total} findings, {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
