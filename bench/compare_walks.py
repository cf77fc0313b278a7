"""What the walk of every checked file produced, compared between two versions of autograd-lsp, file by file.

    .venv/bin/python -m bench.compare_walks                  # `git merge-base main HEAD` against the working tree
    .venv/bin/python -m bench.compare_walks --base HEAD~3 PATH ...

Findings alone are a weak check of a change meant to leave the analysis as it was: the libraries of the corpus have
almost none. This compares what every rule reads instead: for each checked file, its events in order (kind, place,
sequence number, the facts of the values they carry, role, usage), the facts of every expression's provenance, and
each function's summary, hashed per file. Both versions run `check --no-cache --jobs 1` on all roots at once, in a
child process that records the models as they are built (nothing of the analysis changes). Exit status 1 when a file
differs or is missing on one side. The base is run from a snapshot, as in bench/compare_findings.py.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import compare_findings  # noqa: E402

REPO = compare_findings.REPO

# Run in the child: `python -c RECORDER OUT.json ROOT...` with the version under test first on sys.path.
RECORDER = r'''
import hashlib, json, sys
from autograd_lsp.analysis import model as M
import autograd_lsp.checker as C
from autograd_lsp.cli import main

def facts(p):
    if p is None:
        return None
    return (p.kind.value, p.leaf, p.requires_grad, p.dtype, p.origin, p.scalar, p.saved_by, p.nondiff, p.detached,
            sorted(p.param_deps), p.no_grad, p.epoch, len(p.elements), len(p.graph), sorted(p.composed_from))

digests = {}
build = M.build_model

def recording(tree, source, resolver=None, summary_only=False):
    model = build(tree, source, resolver=resolver, summary_only=summary_only)
    if not summary_only:
        events = [(type(e).__name__, getattr(e.node, "lineno", 0), getattr(e.node, "col_offset", 0), e.seq,
                   facts(getattr(e, "prov", None)), facts(getattr(e, "receiver_prov", None)), facts(getattr(e, "result", None)),
                   getattr(e, "role", None), getattr(e, "usage", None)) for e in model.events]
        provs = sorted(json.dumps(facts(p)) for p in model._provs.values())
        functions = sorted((f.name, getattr(f.node, "lineno", 0), json.dumps(facts(f.returns)), f.uses_arguments, f.calls_backward,
                            f.walked) for f in model.functions.values())
        text = json.dumps([events, provs, functions], default=str)
        digests[source.path] = [hashlib.sha1(text.encode()).hexdigest(), len(events)]
    return model

M.build_model = C.build_model = recording
out, roots = sys.argv[1], sys.argv[2:]
try:
    main(["check", "--no-cache", "--jobs", "1", "--exit-zero", "--format", "json", *roots])
except SystemExit:
    pass
with open(out, "w") as handle:
    json.dump(digests, handle)
'''


def record(tree: Path, roots: list[Path], python: str) -> dict:
    """The digests of one version (`tree`: a directory holding its autograd_lsp/)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "walks.json"
        env = dict(os.environ, PYTHONPATH=str(tree))
        proc = subprocess.run([python, "-c", RECORDER, str(out), *map(str, roots)], cwd=scratch, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=7200)
        if not out.exists():
            raise SystemExit(f"{tree}: the recording run failed (rc={proc.returncode}): {proc.stderr.strip()[-600:]}")
        return json.loads(out.read_text())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare_walks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, help="roots to check (default: those of bench/compare_findings.py)")
    parser.add_argument("--base", default="", help="the revision compared against (default: `git merge-base main HEAD`)")
    args = parser.parse_args(argv)
    python = sys.executable
    roots = [path.resolve() for path in args.paths] if args.paths else compare_findings.default_roots()[0]
    if not args.base:
        args.base = subprocess.run(["git", "merge-base", "main", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()[:12]
    base_tree = compare_findings.snapshot(args.base, python).parent
    print(f"base: {args.base}; new: working tree; {len(roots)} roots", flush=True)
    old, new = record(base_tree, roots, python), record(REPO, roots, python)
    differing = sorted(path for path in set(old) | set(new) if old.get(path, [None])[0] != new.get(path, [None])[0])
    for path in differing[:50]:
        print(f"  differs: {path} (events {old.get(path, [None, '-'])[1]} / {new.get(path, [None, '-'])[1]})")
    events = sum(entry[1] for entry in new.values())
    print(f"{len(new)} files, {events} events; {len(differing)} files differ")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
