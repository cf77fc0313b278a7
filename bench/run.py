"""Run the autograd-lsp benchmark and write bench/RESULTS.md.

    .venv/bin/python -m bench            # full run (≈ 15–20 min on 2 cores), writes bench/RESULTS.md
    .venv/bin/python -m bench --quick    # < 2 min harness smoke test (CI), writes bench/.work/RESULTS-quick.md

See bench/README.md for every option.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, is_dataclass
from pathlib import Path

if __package__ in (None, ""):  # `python bench/run.py` as well as `python -m bench`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli_bench, confirm_bench, corpus, machine, server_bench, tools  # noqa: E402
from bench.measure import median, paired_ratio, percentile  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
WORK_DIR = BENCH_DIR / ".work"
LOG_DIR = WORK_DIR / "logs"

# the quick subset: one package of a small real project (≈ 5k lines) plus the generated files
QUICK_PROJECTS = ["skorch"]
QUICK_SUBDIR = "skorch/callbacks"
QUICK_WIDE = ["einops", "pl-examples"]  # two small packages of the widened corpus


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small subset, 1 repetition, no TorchFix, < 2 min (CI smoke test)")
    parser.add_argument("--reps", type=int, help="CLI repetitions (alternated); default 3 (one CLI run over the corpus takes ~1 min idle), quick 1")
    parser.add_argument("--server-reps", type=int, help="server sessions per kind; default 3, quick 1")
    parser.add_argument("--confirm-reps", type=int, help="repetitions per confirm sample; default 2, quick 1")
    parser.add_argument("--edits", type=int, help="sequential one-character edits; default 200, quick 40")
    parser.add_argument("--burst", type=int, help="edits sent in one burst; default 200, quick 40")
    parser.add_argument("--torchfix", choices=["full", "subset", "off"], help="TorchFix on the whole corpus (1 run), on the "
                        "pytorch-ignite+skorch subset (3 alternated runs, scaled), or not at all; default full, quick off")
    parser.add_argument("--torchfix-reps", type=int, help="TorchFix repetitions (default: 1 for full, 3 for subset)")
    parser.add_argument("--only", default="cli,wide,torchfix,server,confirm,profile",
                        help="comma list of parts: cli,wide,torchfix,server,confirm,profile (default: all)")
    parser.add_argument("--wide-reps", type=int, help="repetitions of each widened-corpus package alone (default 2, quick 1); "
                        "the whole widened corpus runs --reps times")
    parser.add_argument("--cli", default=str(Path(sys.executable).parent / "autograd-lsp"),
                        help="the autograd-lsp command (default: the venv's entry point; e.g. '.venv/bin/python -m autograd_lsp' before pip install -e .)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="the parallel width (default: all cores)")
    parser.add_argument("--output", help="report path; default bench/RESULTS.md (quick: bench/.work/RESULTS-quick.md)")
    parser.add_argument("--snapshot", action="store_true", help="measure the committed HEAD of autograd_lsp/ (copied to "
                        "bench/.work/snapshots/<sha>/), not the working tree: figures stay consistent while others edit the package")
    parser.add_argument("--wait-cli", type=float, default=0, metavar="SECONDS", help="poll this long for the CLI to appear")
    parser.add_argument("--wait-load", type=float, default=0, metavar="LOAD", help="first wait (up to 30 min) until the 1-minute "
                        "load average is below LOAD (default: don't wait)")
    args = parser.parse_args(argv)
    quick = args.quick
    args.reps = args.reps or (1 if quick else 3)
    args.wide_reps = args.wide_reps or (1 if quick else 2)
    args.server_reps = args.server_reps or (1 if quick else 3)
    args.confirm_reps = args.confirm_reps or (1 if quick else 2)
    args.edits = args.edits or (40 if quick else 200)
    args.burst = args.burst if args.burst is not None else (40 if quick else 200)
    args.torchfix = args.torchfix or ("off" if quick else "full")
    args.output = Path(args.output) if args.output else (WORK_DIR / "RESULTS-quick.md" if quick else BENCH_DIR / "RESULTS.md")
    args.parts = {p.strip() for p in args.only.split(",") if p.strip()}
    return args


def _shown(path: Path) -> str:
    """A corpus root for the report: relative to the checkout, or to the corpus directory when
    AUTOGRAD_LSP_CORPUS_DIR puts it elsewhere (never the machine's absolute path)."""
    for base, prefix in ((REPO, ""), (corpus.CORPUS_DIR, "$AUTOGRAD_LSP_CORPUS_DIR/")):
        try:
            return prefix + str(Path(path).resolve().relative_to(Path(base).resolve()))
        except ValueError:
            continue
    return Path(path).name


def log(message: str) -> None:
    print(message, flush=True)


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.time()
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    lock = _exclusive_run()  # held until exit: two runs at once would share caches/logs and slow each other down
    shutil.rmtree(LOG_DIR, ignore_errors=True)  # logs describe the latest run only
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    command = shlex.join([os.path.relpath(python, REPO), "-m", "bench", *(argv if argv is not None else sys.argv[1:])])
    log(f"$ {command}")
    data: dict = {"command": command, "quick": args.quick, "notes": [], "args": {k: (str(v) if isinstance(v, Path) else sorted(v) if isinstance(v, set) else v) for k, v in vars(args).items()}}
    if args.wait_load:
        waited = time.time()
        while os.getloadavg()[0] >= args.wait_load and time.time() - waited < 1800:
            time.sleep(15)
        log(f"waited {time.time() - waited:.0f} s for load < {args.wait_load} (now {os.getloadavg()[0]:.2f})")
    data["machine"] = machine.describe(python)

    log("corpus …")
    corpus.ensure_corpus(quiet=False, wide="wide" in args.parts)
    if args.quick:
        roots = [corpus.project_dir(QUICK_PROJECTS[0]) / QUICK_SUBDIR, corpus.GENERATED_DIR]
        files = sorted(roots[0].rglob("*.py")) + [corpus.TRAIN_SCRIPT] + corpus.notebook_files()
    else:
        roots = corpus.corpus_roots()
        files = corpus.corpus_files() + corpus.notebook_files()
    data["corpus"] = {"roots": [_shown(r) for r in roots], "files": len(files), "lines": corpus.count_lines(files),
                      "projects": {p: v for p, v in corpus.PACKAGES.items() if not args.quick or p in QUICK_PROJECTS}}
    log(f"corpus: {data['corpus']['files']} files, {data['corpus']['lines']:,} lines ({', '.join(data['corpus']['roots'])})")

    cli = shlex.split(args.cli)
    if not os.path.isabs(cli[0]) and (REPO / cli[0]).exists():
        cli[0] = str(REPO / cli[0])
    package_path = REPO
    if args.snapshot:
        launcher, sha = _snapshot(python)
        cli, package_path = [str(launcher)], launcher.parent
        data["machine"]["autograd-lsp"] = f"{data['machine']['autograd-lsp'].split(' @ ')[0]} @ {sha[:12]} (snapshot of the committed tree)"
        log(f"measuring a snapshot of HEAD {sha[:12]} in {launcher.parent}")
    # An installed package imports from bytecode; with PYTHONDONTWRITEBYTECODE=1 (set on this machine) every run would
    # compile the analyzer's sources again, ~0.1 s per process against a floor that imports only the stdlib's bytecode.
    subprocess.run([python, "-m", "compileall", "-q", str(package_path / "autograd_lsp")], capture_output=True, timeout=600)
    deadline = time.time() + args.wait_cli
    while not Path(cli[0]).exists() and time.time() < deadline:
        time.sleep(10)
    info = cli_bench.detect_cli(cli)
    data["cli"] = {"command": shlex.join(cli), "exists": info.exists, "flags": info.flags, "missing_flags": info.missing, "error": info.error}
    if info.error:
        data["notes"].append(f"CLI unusable: {info.error}")
        log(f"CLI unusable: {info.error}")
    if info.missing:
        data["notes"].append("CLI flags missing: " + ", ".join(info.missing))
        log("CLI flags missing: " + ", ".join(info.missing))
    cli_ok = info.exists and not info.error

    data["part_s"] = {}
    mark = time.time()

    def done(part):
        nonlocal mark
        data["part_s"][part] = time.time() - mark
        mark = time.time()

    done("setup")
    if "cli" in args.parts:
        log("flake8 venv …")
        try:
            flake8 = tools.ensure_tool("flake8")
            data["machine"]["flake8"] = tools.tool_version("flake8")
        except tools.ToolUnavailable as error:
            flake8 = None
            data["notes"].append(str(error))
        log("CLI figures …")
        result = cli_bench.cli_figures(info if cli_ok else None, python, roots, args.reps, LOG_DIR, flake8, args.jobs, progress=log)
        data["cli_series"] = result["series"]
        data["notes"].extend(result["notes"])
        done("cli")

    if "wide" in args.parts and cli_ok:
        from bench import wide_bench
        log("widened corpus figures …")
        data["wide"] = wide_bench.wide_figures(info, python, roots, args.reps, args.wide_reps, LOG_DIR, progress=log,
                                               keys=QUICK_WIDE if args.quick else None)
        done("wide")

    if "torchfix" in args.parts and args.torchfix != "off":
        log("TorchFix venv …")
        try:
            torchfix = tools.ensure_tool("torchfix")
            data["machine"]["torchfix"] = tools.tool_version("torchfix", "TorchFix")
            if args.torchfix == "full":
                tf_roots, tf_reps = roots, args.torchfix_reps or 1
            else:
                tf_roots = [r for r in roots if r.name in ("pytorch_ignite", "skorch")] or roots
                tf_reps = args.torchfix_reps or 3
            tf_files = [f for r in tf_roots for f in (corpus.corpus_files([r.name], generated=False) if r != corpus.GENERATED_DIR else [corpus.TRAIN_SCRIPT])]
            data["torchfix"] = {"mode": args.torchfix, "roots": [_shown(r) for r in tf_roots], "lines": corpus.count_lines(tf_files), "reps": tf_reps}
            log(f"TorchFix figures ({args.torchfix}: {data['torchfix']['lines']:,} lines, {tf_reps} rep(s)) …")
            data["torchfix_series"] = cli_bench.torchfix_figures(info if cli_ok else None, python, torchfix, tf_roots, tf_reps, LOG_DIR, progress=log)["series"]
        except tools.ToolUnavailable as error:
            data["notes"].append(str(error))
        done("torchfix")

    if "server" in args.parts:
        log("server figures …")
        product = [*cli, "serve"] if cli_ok else None
        if not cli_ok:
            data["notes"].append("server: autograd-lsp unusable, only the bare floor measured")
        data["server"] = server_bench.server_figures(product, args.server_reps, args.edits, args.burst, LOG_DIR, progress=log)
        done("server")

    if "confirm" in args.parts and cli_ok:
        log("confirmation figures …")
        data["confirm"] = confirm_bench.confirm_figures(cli, python, args.confirm_reps, LOG_DIR, limit=2 if args.quick else None, progress=log)
        done("confirm")

    if "profile" in args.parts and cli_ok:
        log("profile …")
        data["profile"] = cli_bench.profile_cli(info, python, roots, WORK_DIR)
        env = dict(os.environ, PYTHONPATH=str(package_path))
        proc = subprocess.run([python, str(BENCH_DIR / "phases.py"), *map(str, roots)], cwd=str(package_path), env=env,
                              capture_output=True, text=True, timeout=3600)
        try:
            data["phases"] = json.loads(proc.stdout)
        except ValueError:
            data["phases"] = {"error": (proc.stderr.strip() or proc.stdout.strip())[-800:]}
        done("profile")

    data["elapsed_s"] = time.time() - started
    data["machine"]["load_at_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    from bench.report import write_report
    text = write_report(data, args)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    (WORK_DIR / ("results-quick.json" if args.quick else "results.json")).write_text(json.dumps(data, default=_jsonable, indent=1))
    log(f"wrote {args.output} in {data['elapsed_s']:.0f} s")
    return 0


def _snapshot(python: str) -> tuple[Path, str]:
    """Copy HEAD's autograd_lsp/ to bench/.work/snapshots/<sha>/ with an `autograd-lsp` launcher script in it
    (a script's own directory is first on sys.path, so the copy wins over the editable install)."""
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    target = WORK_DIR / "snapshots" / sha[:12]
    launcher = target / "autograd-lsp"
    if not launcher.exists():
        tmp = target.with_name(target.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", "--format=tar", sha, "autograd_lsp"], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        (tmp / "autograd-lsp").write_text(f"#!{python}\nimport sys\n\nfrom autograd_lsp.cli import main\n\nsys.exit(main())\n")
        (tmp / "autograd-lsp").chmod(0o755)
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
    return launcher, sha


def _exclusive_run():
    """Take bench/.work/run.lock, waiting while another benchmark run holds it."""
    import fcntl
    handle = open(WORK_DIR / "run.lock", "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        log(f"another benchmark run holds {WORK_DIR / 'run.lock'} ({handle.read().strip() or '?'}); waiting for it to finish …")
        fcntl.flock(handle, fcntl.LOCK_EX)
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}: {' '.join(sys.argv)}\n")
    handle.flush()
    return handle


def _jsonable(value):
    if hasattr(value, "runs"):  # a Series: keep the measurements, not the tools' output
        return {"name": value.name, "walls": value.walls, "runs": [asdict(r) | {"stdout": "", "stderr": r.stderr[-300:]} for r in value.runs]}
    if is_dataclass(value):
        return asdict(value)
    if isinstance(value, Path):
        return str(value)
    return repr(value)


if __name__ == "__main__":
    raise SystemExit(main())
