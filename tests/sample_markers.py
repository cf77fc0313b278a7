"""The runnable samples in ``samples/``: their ``# expect: AGnnn`` markers and buggy/fixed pairs.

Every rule AGnnn has ``samples/agnnn_<rule_name>.py`` (the bug, with a trailing ``# expect: AGnnn``
comment on each line the checker should report) and ``samples/agnnn_<rule_name>_fixed.py`` (the same
program without the bug, and without any marker). Other tests import this module.
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = ROOT / "samples"

_MARKER = re.compile(r"\bexpect:\s*((?:AG\d{3}\b[\s,]*)+)")
_CODE = re.compile(r"AG\d{3}")
_BUGGY = re.compile(r"^(ag\d{3})_[a-z0-9_]+\.py$")


def expected_markers(path: str | Path) -> list[tuple[int, str]]:
    """The (line, code) pairs of the ``# expect: AGnnn`` comments in a file, sorted.

    Lines are 1-based. Only real comments count (not text inside strings). One comment may name
    several codes (``# expect: AG003, AG017``); each gives its own pair.
    """
    text = Path(path).read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.COMMENT:
            continue
        match = _MARKER.search(tok.string)
        if match:
            found.extend((tok.start[0], code) for code in _CODE.findall(match.group(1)))
    return sorted(found)


def rule_code(path: str | Path) -> str:
    """``samples/ag003_retain_graph_misuse_fixed.py`` -> ``"AG003"``."""
    return Path(path).name[:5].upper()


def sample_pairs(samples_dir: str | Path = SAMPLES_DIR) -> list[tuple[Path, Path]]:
    """(buggy, fixed) sample paths, sorted by rule code; a buggy sample without its twin is skipped."""
    samples_dir = Path(samples_dir)
    pairs = []
    for buggy in sorted(samples_dir.glob("ag[0-9][0-9][0-9]_*.py")):
        if buggy.stem.endswith("_fixed") or not _BUGGY.match(buggy.name):
            continue
        fixed = buggy.with_name(buggy.stem + "_fixed.py")
        if fixed.exists():
            pairs.append((buggy, fixed))
    return pairs
