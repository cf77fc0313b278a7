"""The `autograd-lsp` command: check, rule, serve, confirm, explain, audit."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import __version__, report
from .checker import check_source, not_python, unreadable
from .config import ConfigError, Settings, load_settings
from .docs import AG000_DOC, AG000_NAMES, is_ag000
from .findings import Edit, Finding, Span
from .fixes import apply_edits, apply_edits_keeping_newlines, choose_fixes
from .notebook import with_cells
from .rules import ALL_RULES, SYNTAX_ERROR_CODE, find_rule
from .source import NotPythonSource, Source, SourceError, decode_python, join_cells, normalise, read_source

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
MAX_FIX_PASSES = 10


def _csv(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """`command`: the only subcommand whose arguments are needed (None: all). The runtime subcommands' options come
    from their packages, which a `check` run never needs to import."""
    parser = argparse.ArgumentParser(prog="autograd-lsp", description="Catch PyTorch autograd mistakes before they run.")
    parser.add_argument("--version", action="version", version=f"autograd-lsp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check files and directories (default: .)")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    check.add_argument("--select", type=_csv, help="only these rules (codes, names or prefixes, comma-separated)")
    check.add_argument("--ignore", type=_csv, default=[], help="skip these rules")
    check.add_argument("--extend-select", type=_csv, default=[], help="add rules to the selection")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, apply unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when problems are found")
    check.add_argument("--statistics", action="store_true", help="count problems per rule")
    check.add_argument("--show-fixes", action="store_true", help="list the available fixes under each problem")
    check.add_argument("--format", choices=["text", "json", "sarif", "github"], default="text")
    check.add_argument("--config", type=Path, help="pyproject.toml to read [tool.autograd-lsp] from")
    check.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: one per core for many files)")
    check.add_argument("--no-cross-module", action="store_true", help="do not resolve helpers from other modules with jedi")
    check.add_argument("--no-cache", action="store_true", help="analyse every file, ignoring and not writing .autograd-lsp-cache")
    check.add_argument("--stats", action="store_true", help="print counters of the cross-module work (jedi queries, time in jedi) to stderr")

    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", nargs="?", help="code or name, e.g. AG002 or stale-composed-weight")
    rule.add_argument("--all", action="store_true", help="list every rule")
    rule.add_argument("--format", choices=["text", "markdown"], default="text", help="markdown: the README's rule table")

    serve = commands.add_parser("serve", help="run the language server")
    serve.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead")

    confirm = commands.add_parser("confirm", help="run a reproducer of a finding and report whether it really fails")
    explain = commands.add_parser("explain", help="show the autograd graph at a line and the in-place change that broke it")
    audit = commands.add_parser("audit", help="run a script with its loops bounded and report every autograd problem it hits")
    if command not in (None, "confirm", "explain", "audit"):
        return parser
    try:
        from .confirm import cli as confirm_cli

        confirm_cli.add_arguments(confirm)
    except ImportError:  # pragma: no cover - the runtime confirmation package is part of the distribution
        confirm.set_defaults(_confirm_missing=True)

    from .explain import cli as explain_cli

    explain_cli.add_arguments(explain)

    from .audit import cli as audit_cli

    audit_cli.add_arguments(audit)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(next((arg for arg in argv if not arg.startswith("-")), None))
    script_args = None
    if "--" in argv and "audit" in argv[: argv.index("--")]:  # `audit SCRIPT [options] -- ARGS`: ARGS are the script's
        script_args, argv = argv[argv.index("--") + 1:], argv[: argv.index("--")]
    args = parser.parse_args(argv)
    if args.command == "audit":
        args.script_args = script_args or []
    try:
        if args.command == "check":
            return run_check(args)
        if args.command == "rule":
            return run_rule(args)
        if args.command == "serve":
            from .server import serve

            return serve(args.tcp)
        if args.command == "confirm":
            from .confirm import cli as confirm_cli

            return confirm_cli.run(args)
        if args.command == "explain":
            from .explain import cli as explain_cli

            return explain_cli.run(args)
        if args.command == "audit":
            from .audit import cli as audit_cli

            return audit_cli.run(args)
    except ConfigError as error:
        print(f"autograd-lsp: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN
    parser.print_help()
    return EXIT_ERROR


def entry() -> None:
    """The console script. After `check`, exit without tearing the heap down: freeing the trees and models of a
    large run one object at a time took longer than a third of the run (mypy exits the same way)."""
    code = main()
    if sys.argv[1:2] != ["check"]:
        raise SystemExit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(code)


def run_rule(args) -> int:
    if args.all and args.format == "markdown":
        from .docs import rule_table

        print(rule_table())
        return EXIT_CLEAN
    if args.all or not args.code:
        width = max(len(rule.name) for rule in ALL_RULES)
        for rule in ALL_RULES:
            print(f"{rule.code}  {rule.name:<{width}}  {rule.severity.value:<7}  {rule.summary}")
        return EXIT_CLEAN
    if is_ag000(args.code):
        print(f"# {SYNTAX_ERROR_CODE} {' / '.join(AG000_NAMES)} (error)\n\n{AG000_DOC}")
        return EXIT_CLEAN
    rule = find_rule(args.code)
    if rule is None:
        print(f"autograd-lsp: error: unknown rule {args.code!r} (see `autograd-lsp rule --all`)", file=sys.stderr)
        return EXIT_ERROR
    print(f"# {rule.code} {rule.name} ({rule.severity.value})\n\n{rule.doc}")
    return EXIT_CLEAN


def _settings(args) -> Settings:
    start = Path(args.paths[0]) if args.paths else Path(".")
    settings = load_settings(start if start.exists() else Path("."), args.config)
    return settings.with_selection(select=args.select, ignore=args.ignore, extend_select=args.extend_select)


_CACHES: dict = {}


def _cache(spec) -> "object | None":
    if spec is None:
        return None
    if spec not in _CACHES:
        from .cache import Cache

        _CACHES[spec] = Cache(*spec)
    return _CACHES[spec]


def _check_one(job) -> tuple[str, object, list[Finding], bool, bool, tuple]:
    """Check one file (in a worker process when parallel); the first bool says whether the cache answered, the
    second whether the analyzer failed on it (a defect: the run exits EXIT_ERROR), the tuple is what the file added
    to the cross-module counters (crossmodule.Stats, summed for --stats)."""
    from .analysis.crossmodule import STATS

    before = STATS.snapshot()
    path, settings, cross_module, cache_spec = job
    try:
        source = read_source(path)
    except NotPythonSource as error:
        return str(path), None, [not_python(str(error).split(": ", 1)[-1])], False, False, ()
    except SourceError as error:
        return str(path), None, [unreadable(str(error).split(": ", 1)[-1])], False, False, ()
    cache = _cache(cache_spec)
    if cache is not None and (cached := cache.get(path, source.text)) is not None:
        return str(path), source if cached else None, cached, True, False, ()
    resolver = _resolver(path) if cross_module else None
    if resolver is not None:
        resolver.trim()
        resolver.touched = set()
    result = check_source(source, settings, resolver=resolver)
    if result.model is not None:
        result.model.release()  # freed now by reference counting, not by a collection of the whole heap later
    _collect_if_grown()
    failed = bool(result.rule_errors)
    if cache is not None and not failed:  # (a defect's finding is not kept: the next run tries again)
        cache.put(path, source.text, result.findings, resolver.touched if resolver is not None else set())
    # A clean file's source is not needed for the report or fixes: kept for every file of a large tree, the texts and
    # their split lines were most of a run's memory (and, with --jobs, pickled back to the parent).
    return (str(path), source if result.findings else None, result.findings, False, failed,
            tuple(b - a for a, b in zip(before, STATS.snapshot())))


_RESOLVERS: dict = {}


def _resolver(path: Path):
    from .analysis.crossmodule import MAX_MODELS, MAX_TREE_LINES, JediResolver

    root = JediResolver.project_root(Path(path))
    if root not in _RESOLVERS:
        _RESOLVERS[root] = JediResolver(root, max_models=_WORKER_MODELS or MAX_MODELS,
                                        max_tree_lines=_WORKER_TREE_LINES or MAX_TREE_LINES)
        _RESOLVERS[root].stat_memo = None if _FILES_MAY_CHANGE else {}
    resolver = _RESOLVERS[root]
    global _LAST_RESOLVER
    if _LAST_RESOLVER is not None and _LAST_RESOLVER is not resolver:
        _LAST_RESOLVER.forget_models()  # files come grouped by directory: the project left keeps no modules in memory
    _LAST_RESOLVER = resolver
    return resolver


_LAST_RESOLVER = None
_FILES_MAY_CHANGE = True  # outside the checks of a run (--fix / --diff rewrite files): resolvers stat() files each time


_WORKER_MODELS: int | None = None  # consulted modules kept by a worker process (None: not a worker)
_WORKER_TREE_LINES: int | None = None  # ... and lines of parsed trees


def _start_worker(workers: int) -> None:
    # Workers share the run's memory: together they keep up to 192 consulted modules (96 each on 2 cores), and the
    # run's one budget of kept trees (MAX_TREE_LINES, ~1.2 KB a line). 1.5x that budget (75k lines a worker on 2 cores)
    # summed 337 MB over the process tree on the benchmark corpus, 50k: 277 MB, for 169 trees reused instead of 179
    # and no measurable CPU.
    global _WORKER_MODELS, _WORKER_TREE_LINES
    from .analysis.crossmodule import MAX_TREE_LINES

    _WORKER_MODELS = max(32, 192 // workers)
    _WORKER_TREE_LINES = max(10_000, MAX_TREE_LINES // workers)
    _quiet_gc()
    _files_may_change(False)  # (a worker only checks)


# A check allocates millions of short-lived, acyclic nodes, freed by reference counting (models release their cycles,
# ModuleModel.release): the automatic collector found nothing to free but rescanned them, 7% of a run over the widened
# corpus at the 50,000 threshold. It is off during a check; _collect_if_grown is the safety net for cycles it leaves.
_GC_NET_OBJECTS = 2_000_000  # tracked objects allocated and still alive since the last collection (~200 MB of nodes)


def _quiet_gc() -> None:
    import gc

    gc.freeze()
    gc.disable()


def _collect_if_grown() -> None:
    """A full collection between two files once the net count of tracked objects since the last one is large: what
    reference counting could not free (a cycle a rule or jedi left) stays bounded."""
    import gc

    if not gc.isenabled() and gc.get_count()[0] > _GC_NET_OBJECTS:
        gc.collect()


def run_check(args) -> int:
    import gc

    enabled = gc.isenabled()
    _files_may_change(False)
    try:
        return _run_check(args)
    finally:
        _files_may_change(True)
        if enabled:
            gc.enable()  # (an in-process caller, a test: its collector as it was)


def _files_may_change(changing: bool) -> None:
    """While a run checks its files (before any fix), each file is stat()ed once per resolver (JediResolver.stat_memo)."""
    global _FILES_MAY_CHANGE
    _FILES_MAY_CHANGE = changing
    for resolver in _RESOLVERS.values():
        resolver.stat_memo = None if changing else {}


def _run_check(args) -> int:
    from .discovery import iter_files

    _quiet_gc()

    settings = _settings(args)
    for warning in settings.warnings:
        print(f"autograd-lsp: warning: {warning}", file=sys.stderr)
    # A path that does not exist is reported like an unreadable file (as ruff does): the others are still checked.
    missing = [p for p in args.paths if not Path(p).exists()]
    files = list(iter_files([p for p in args.paths if p not in missing], settings))
    cache_spec = None
    if not args.no_cache:
        settings_key = repr((sorted(settings.select), sorted((k, v.value) for k, v in settings.severity.items()),
                             settings.per_file_ignores, not args.no_cross_module))
        cache_spec = (str(settings.root or Path.cwd()), settings_key)
    jobs = [(path, settings, not args.no_cross_module, cache_spec) for path in files]
    workers = args.jobs or (os.cpu_count() or 1 if len(files) >= 16 else 1)
    if workers > 1 and len(files) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(workers,)) as pool:
            results = list(pool.map(_check_one, jobs, chunksize=max(1, len(jobs) // (workers * 8))))
    else:
        results = [_check_one(job) for job in jobs]

    _files_may_change(True)
    unsafe = args.unsafe_fixes
    fixed_total = 0
    entries = [report.FileFindings(path, None, [unreadable("no such file or directory")]) for path in missing]
    if args.stats:
        _print_stats(results)
    failed = sum(1 for result in results if result[4])
    for path, source, findings, *_ in results:
        if (args.fix or args.diff) and source is not None:
            fix = _fix_notebook if source.cells is not None else _fix_file
            findings, fixed = fix(source, findings, settings, unsafe, path, not args.no_cross_module, args.diff)
            fixed_total += fixed
        entries.append(report.FileFindings(path, source, findings))

    all_findings = [f for entry in entries for f in entry.findings]
    if args.diff:
        for path in missing:
            print(f"autograd-lsp: error: {path}: no such file or directory", file=sys.stderr)
        print(f"Would fix {fixed_total} problem{'s' if fixed_total != 1 else ''}.", file=sys.stderr)
        return EXIT_FINDINGS if (fixed_total or missing) and not args.exit_zero else EXIT_CLEAN
    if args.format == "json":
        print(report.as_json(entries))
    elif args.format == "sarif":
        print(report.as_sarif(entries))
    elif args.format == "github":
        output = report.as_github(entries)
        if output:
            print(output)
    else:
        output = report.text(entries, args.show_fixes)
        if output:
            print(output)
        if args.statistics and all_findings:
            print(report.statistics(entries))
        fixable = sum(1 for f in all_findings if f.safe_fix)
        hidden = 0 if unsafe else report.fixable_count(all_findings, True) - fixable
        print(report.summary(len(all_findings), fixable, fixed_total, hidden))
    if failed:  # as ruff: an internal error is exit 2, whatever --exit-zero says of findings
        print(f"autograd-lsp: error: the analyzer failed on {failed} file{'s' if failed != 1 else ''} (AG000 "
              "not-analysed, traceback above); please report it", file=sys.stderr)
        return EXIT_ERROR
    if all_findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _print_stats(results) -> None:
    from .analysis.crossmodule import Stats

    totals = [0] * len(Stats.FIELDS)
    for *_, delta in results:
        for index, value in enumerate(delta):
            totals[index] += value
    counters = " ".join(f"{name}={value:.3f}" if isinstance(value, float) else f"{name}={value}" for name, value in zip(Stats.FIELDS, totals))
    cached = sum(1 for result in results if result[3])
    print(f"autograd-lsp: stats: files={len(results)} cached={cached} {counters}", file=sys.stderr)


def _fix_passes(source, findings, settings, unsafe, path, cross_module, apply):
    """Apply fixes repeatedly (a fix can reveal or move other findings) until none apply. `apply(source, fixes)`
    makes the next source from the fixes it can apply, and says how many; returns (findings, fixes, source)."""
    current, fixed = findings, 0
    resolver = _resolver(Path(path)) if cross_module else None
    for _ in range(MAX_FIX_PASSES):
        fixes = choose_fixes([f for f in current if f.code != SYNTAX_ERROR_CODE], unsafe)
        if not fixes:
            break
        try:
            source, applied = apply(source, fixes)
        except ValueError:
            break
        if not applied:
            break
        fixed += applied
        current = check_source(source, settings, resolver=resolver).findings
    return current, fixed, source


def _fix_file(source, findings, settings, unsafe, path, cross_module, diff):
    """Fix a .py file in place (or show the diff), keeping its encoding, BOM and every line ending."""
    try:
        raw, encoding = decode_python(Path(path).read_bytes(), path)
    except (OSError, SourceError):
        return findings, 0
    if normalise(raw) != source.text:  # changed since it was checked
        return findings, 0
    texts = [raw]

    def apply(current, fixes):
        texts.append(apply_edits_keeping_newlines(texts[-1], [edit for fix in fixes for edit in fix.edits]))
        return Source(normalise(texts[-1]), current.path), len(fixes)

    findings, fixed, fixed_source = _fix_passes(source, findings, settings, unsafe, path, cross_module, apply)
    if fixed:
        if diff:
            sys.stdout.write(_unified(source.text, fixed_source.text, f"a/{path}", f"b/{path}"))
        else:
            try:
                Path(path).write_bytes(texts[-1].encode(encoding))
            except UnicodeEncodeError:  # a fix's text the file's declared encoding cannot hold
                print(f"autograd-lsp: error: {path}: the fixes do not fit its {encoding} encoding; not written", file=sys.stderr)
                return findings, 0
    return findings, fixed


def _fix_notebook(source, findings, settings, unsafe, path, cross_module, diff):
    """Fix a notebook's code cells in place (or show a diff per cell): only the changed cells' sources are
    rewritten; outputs, metadata and the other cells keep their values and the file its JSON layout."""
    texts = {cell.index: cell.text for cell in source.cells}

    def apply(current, fixes):
        per_cell: dict[int, list] = {}
        applied = 0
        for fix in fixes:
            edits = _cell_edits(current, fix)
            if edits is not None:
                applied += 1
                for index, edit in edits:
                    per_cell.setdefault(index, []).append(edit)
        for index, edits in per_cell.items():
            texts[index] = apply_edits(texts[index], edits)
        return join_cells([(cell.index, texts[cell.index]) for cell in current.cells], current.path), applied

    findings, fixed, _ = _fix_passes(source, findings, settings, unsafe, path, cross_module, apply)
    changed = {cell.index: texts[cell.index] for cell in source.cells if texts[cell.index] != cell.text}
    if not changed:
        return findings, 0
    if diff:
        for cell in source.cells:
            if cell.index in changed:
                name = f"{path}:cell {cell.index + 1}"
                sys.stdout.write(_unified(cell.text, changed[cell.index], f"a/{name}", f"b/{name}"))
        return findings, fixed
    try:
        raw = Path(path).read_text(encoding="utf-8")
        Path(path).write_text(with_cells(raw, changed), encoding="utf-8", newline="")
    except (OSError, ValueError, KeyError, IndexError) as error:
        print(f"autograd-lsp: error: {path}: fixes not written: {error}", file=sys.stderr)
        return findings, 0
    return findings, fixed


def _cell_edits(source, fix) -> list | None:
    """A fix's edits in the coordinates of the cells they fall in; None when one crosses a cell boundary or
    touches text that was IPython syntax (masked for the analysis, so not what the fix saw)."""
    out = []
    for edit in fix.edits:
        cell = next((c for c in source.cells if c.contains(edit.span.line)), None)
        if cell is None or not cell.contains(edit.span.end_line):
            return None
        own = cell.text.split("\n")
        for line in range(edit.span.line, edit.span.end_line + 1):
            local = line - cell.first_line
            if local in cell.masked:  # only `%time stmt` keeps Python there: an edit inside `stmt`, on one line
                if line != edit.span.line or "\n" in edit.text or own[local][edit.span.col:] != source.line_text(line)[edit.span.col:]:
                    return None
        offset = cell.first_line - 1
        out.append((cell.index, Edit(Span(edit.span.line - offset, edit.span.col, edit.span.end_line - offset, edit.span.end_col), edit.text)))
    return out


def _unified(old: str, new: str, a: str, b: str) -> str:
    import difflib

    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), a, b)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
