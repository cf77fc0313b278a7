"""The server's incremental analysis (analysis/incremental.py) gives what a full analysis gives, edit after edit.

Random edits (seeded, so a failure replays) are applied to real files: the samples (which have findings, so
the findings compared are not empty) and real training modules from pinned PyPI wheels (trl's trainers,
skorch's NeuralNet, fetched once into tests/.cache/incremental/; without network and cache the test fails).
After every edit the incrementally parsed tree must equal `ast.parse` of the whole text, node for node with
positions, and the incremental findings must equal a fresh `check_source` of the text, fixes and related
information included. The edits are what typing does: characters in names and numbers, trailing spaces,
comments and `# noqa` markers, deletions, new lines, punctuation that breaks the syntax for a while.
"""
from __future__ import annotations

import ast
import random
import zipfile
from pathlib import Path

import pytest

from autograd_lsp.analysis.incremental import IncrementalCheck, Parsed, Reparser
from autograd_lsp.checker import check_source, parse
from autograd_lsp.findings import Finding
from autograd_lsp.source import Source

from realcode_support import pip_download

# random edits make invalid escapes and decimal literals: their warnings are noise here
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(__file__).resolve().parent / ".cache" / "incremental"
# real training modules (pinned: the edits are seeded by position, so the files must not move)
WHEELS = {"trl==0.19.1": ["trl/trainer/dpo_trainer.py", "trl/trainer/grpo_trainer.py"],
          "skorch==1.4.0": ["skorch/net.py"]}


def _real_modules() -> list[Path]:
    out = []
    for spec, members in WHEELS.items():
        name, version = spec.split("==")
        target = CACHE / f"{name}-{version}"
        if not all((target / member).is_file() for member in members):
            wheels = CACHE / "wheels"
            found = sorted(wheels.glob(f"{name}-{version}-*.whl")) if wheels.is_dir() else []
            if not found:
                result = pip_download(spec, wheels, binary=True)
                found = sorted(wheels.glob(f"{name}-{version}-*.whl"))
                if not found:
                    pytest.fail(f"cannot download {spec} (no network?): {(result.stderr or result.stdout)[-400:]}")
            with zipfile.ZipFile(found[0]) as archive:
                for member in members:
                    destination = target / member
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    destination.write_bytes(archive.read(member))
        out += [target / member for member in members]
    return out


def _samples() -> list[Path]:
    files = sorted((ROOT / "samples").glob("ag*.py"))
    assert len(files) >= 20, "the samples folder moved"
    return files


_PUNCTUATION = ["(", ")", ":", "\\", '"', "'", ".", "=", ",", "[", "]", '"""', "@", "\t", "    "]


def _edit(lines: list[str], rng: random.Random) -> list[str]:
    """One keystroke-sized edit of a copy of `lines`."""
    lines = list(lines)
    index = rng.randrange(len(lines))
    line = lines[index]
    col = rng.randrange(len(line) + 1)
    kind = rng.random()
    if kind < 0.2:
        line += rng.choice([" ", "x", "  # c"])  # trailing space, a comment, a name glued on
    elif kind < 0.3:
        line += "  # noqa"
    elif kind < 0.5 and any(c.isalnum() for c in line):
        spots = [k + 1 for k, c in enumerate(line) if c.isalnum() or c == "_"]
        col = rng.choice(spots)
        line = line[:col] + rng.choice("z_1") + line[col:]  # typing inside a name or a number
    elif kind < 0.6 and any(c.isdigit() for c in line):
        spots = [k for k, c in enumerate(line) if c.isdigit()]
        col = rng.choice(spots)
        line = line[:col] + rng.choice("0123456789") + line[col + 1:]
    elif kind < 0.75 and line:
        col = min(col, len(line) - 1)
        line = line[:col] + line[col + 1:]
    elif kind < 0.8:
        line = line[:col] + "\n" + line[col:]  # a new line: later lines move
    else:
        line = line[:col] + rng.choice(_PUNCTUATION) + line[col:]
    lines[index: index + 1] = line.split("\n")
    return lines


def _edits(text: str, count: int, rng: random.Random):
    """Texts one edit apart; a text that does not parse is kept for a few edits now and then, as while typing."""
    lines = text.split("\n")
    for _ in range(count):
        new = _edit(lines, rng)
        candidate = "\n".join(new)
        yield candidate
        try:
            ast.parse(candidate)
            valid = True
        except (SyntaxError, ValueError):
            valid = False
        if rng.random() < (0.8 if valid else 0.3):
            lines = new


def _full_tree(text: str):
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _shown(findings: list[Finding]) -> list:
    return [(f, sorted(f.data), [v for _, v in sorted(f.data.items()) if isinstance(v, (str, int, float, bool))]) for f in findings]


@pytest.mark.parametrize("seed", [0, 1])
def test_spliced_tree_is_the_full_parse(seed: int):
    rng = random.Random(seed)
    files = _samples() + _real_modules()
    spliced = same = 0
    for path in files:
        text = path.read_text("utf-8")
        reparser = Reparser()
        assert isinstance(reparser.parse(Source(text), parse), Parsed)
        for new in _edits(text, 60, rng):
            expected = _full_tree(new)
            got = reparser.parse(Source(new), parse)
            if expected is None:
                assert isinstance(got, Finding), f"{path.name}: a text that does not parse got a tree"
                continue
            assert isinstance(got, Parsed), f"{path.name}: a text that parses got {got}"
            assert ast.dump(got.tree, include_attributes=True) == ast.dump(expected, include_attributes=True), \
                f"{path.name}: the spliced tree differs from ast.parse after an edit"
            if got.same:
                same += 1
            elif got.reparsed_lines < len(new.split("\n")):
                spliced += 1
    # the fast paths were taken (else this test compares full parses with themselves)
    assert spliced > 100 and same > 50, (spliced, same)


@pytest.mark.parametrize("seed", [0, 1])
def test_incremental_findings_are_those_of_a_full_check(seed: int):
    rng = random.Random(100 + seed)
    files = _samples() + _real_modules()
    reused = total_findings = 0
    for path in files:
        text = path.read_text("utf-8")
        incremental = IncrementalCheck()
        model = incremental.check(Source(text, str(path))).model
        edits = 40 if len(text) > 20_000 else 60
        for new in _edits(text, edits, rng):
            source = Source(new, str(path))
            got = incremental.check(source, reuse=model)
            expected = check_source(Source(new, str(path)))
            assert _shown(got.findings) == _shown(expected.findings), f"{path.name}: incremental findings differ"
            assert got.suppressed == expected.suppressed
            total_findings += len(expected.findings)
            if got.model is not None:
                reused += got.model is model
                model = got.model
    assert reused > 50 and total_findings > 500, (reused, total_findings)
