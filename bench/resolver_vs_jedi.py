"""Every answer of the direct resolver checked against jedi's, one name at a time.

    .venv/bin/python -m bench.resolver_vs_jedi [PATH ...]   # default: the widened corpus packages

`check` runs in this process with the direct lookup on; each time it answers a name (a def, a class, or "surely
none"), jedi is asked too, with no budget, and the two answers are compared: the same file and line, or both none.
A name the direct lookup leaves ambiguous goes to jedi anyway and is not counted. A definition jedi does not find
(it gives up on some relative imports and re-exports) is counted, not reported; every other disagreement (another
definition, or "none" where jedi finds one) is printed; exit status 1 when any. Slow (one jedi query per name): a check of the resolver's rules, not a benchmark.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import corpus  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def _where(found) -> str | None:
    node = getattr(found, "node", None)
    return None if node is None else f"{type(found).__name__} {found.name} (line {node.lineno})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.resolver_vs_jedi", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args(argv)
    if not args.paths:
        corpus.ensure_corpus(wide=True)
        args.paths = [corpus.wide_dir(key) for key in corpus.WIDE_PACKAGES]

    from autograd_lsp import cli
    from autograd_lsp.analysis import crossmodule

    crossmodule.JEDI_BUDGET_S, crossmodule.JEDI_MAX_LINES = float("inf"), 10**9  # ground truth: jedi without limits
    original = crossmodule.JediResolver._resolve_direct
    counts: collections.Counter = collections.Counter()
    disagreements = []

    def checked(self, importer, qualname, hops, text=None):
        found = original(self, importer, qualname, hops, text)
        if hops or found is None or self._current is None:
            return found
        source, node = self._current
        jedi_found = self._resolve(source, node)
        direct = None if found is crossmodule._UNRESOLVABLE else found
        kind = "none" if direct is None else "definition"
        counts[kind] += 1
        if direct is not None and jedi_found is None:
            counts["jedi found nothing"] += 1  # jedi gives up on some relative imports and re-exports the direct lookup follows
        elif direct is not jedi_found:  # both come from the resolver's one model of the defining module: the same object
            direct, truth = _where(direct), _where(jedi_found)
            counts[kind + " differs"] += 1
            disagreements.append((os.path.relpath(str(importer), REPO), qualname, direct, truth))
        return found

    original_resolve = crossmodule.JediResolver.resolve

    def resolve(self, source, node, qualname=None):
        saved, self._current = self._current, (source, node)  # nested: consulted modules resolve their own names
        try:
            return original_resolve(self, source, node, qualname)
        finally:
            self._current = saved

    crossmodule.JediResolver._current = None
    crossmodule.JediResolver._resolve_direct = checked
    crossmodule.JediResolver.resolve = resolve
    with open(os.devnull, "w") as quiet:
        saved, sys.stdout = sys.stdout, quiet
        try:
            cli.main(["check", *map(str, args.paths), "--no-cache", "--jobs", "1", "--exit-zero"])
        finally:
            sys.stdout = saved
    for importer, qualname, direct, truth in disagreements:
        print(f"{importer}: {qualname}: direct {direct}, jedi {truth}")
    print(f"direct answers checked against jedi: {counts['definition']} definitions ({counts['definition differs']} another "
          f"definition than jedi's, {counts['jedi found nothing']} where jedi finds none), {counts['none']} sure-none "
          f"({counts['none differs']} where jedi finds a definition)")
    return 1 if disagreements else 0


if __name__ == "__main__":
    raise SystemExit(main())
