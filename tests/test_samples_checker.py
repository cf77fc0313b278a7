"""`autograd-lsp check samples/` flags every buggy sample on its marked lines, and no fixed twin."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sample_markers import SAMPLES_DIR, expected_markers, sample_pairs

PAIRS = sample_pairs()


@pytest.fixture(scope="module")
def findings_by_file():
    result = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", str(SAMPLES_DIR), "--format", "json", "--exit-zero"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    by_file: dict[str, list[tuple[int, str]]] = {}
    for item in json.loads(result.stdout):
        by_file.setdefault(item["path"].rsplit("/", 1)[-1], []).append((item["line"], item["code"]))
    return by_file


@pytest.mark.parametrize("buggy, fixed", PAIRS, ids=[p[0].stem for p in PAIRS])
def test_buggy_sample_flagged_on_marked_lines(findings_by_file, buggy, fixed):
    assert sorted(findings_by_file.get(buggy.name, [])) == expected_markers(buggy)


@pytest.mark.parametrize("buggy, fixed", PAIRS, ids=[p[1].stem for p in PAIRS])
def test_fixed_twin_is_clean(findings_by_file, buggy, fixed):
    assert findings_by_file.get(fixed.name, []) == []


def test_every_rule_has_a_sample_pair():
    from autograd_lsp.rules import ALL_RULES

    codes = {pair[0].name[:5].upper() for pair in PAIRS}
    assert {rule.code for rule in ALL_RULES} <= codes
