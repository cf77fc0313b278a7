"""`python -m bench.realbugs --set DIR` scores any set of the realbugs shape, clean twins included.

A tiny synthetic set, written here, run through the real scorer as a subprocess (the real `check`, the real torch for
--reproduce): one bug the analyzer finds on its line, one marker it cannot find, a clean twin with no finding and a
"twin" with a finding, which must be reported as a false finding with its code, severity and line.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FOUND = """# source: https://example.invalid/found
# symptom: torch.range is deprecated
import torch

x = torch.range(0, 3)  # expect: AG011
print(x)
"""
FOUND_TWIN = """# source: https://example.invalid/found
# symptom: torch.range is deprecated
import torch

x = torch.arange(0, 4)
print(x)
"""
MISSED = """# source: https://example.invalid/missed
# symptom: never printed
n = 3  # expect: AG005
print(n)
"""
# not clean: still calls torch.range (a finding, so a false one on a twin) and exits 1
MISSED_TWIN = """# source: https://example.invalid/missed
# symptom: never printed
import sys

import torch

y = torch.range(0, 1)
sys.exit(1)
"""


def run_scorer(set_dir: Path, *extra: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "bench.realbugs", "--set", str(set_dir), "--json", *extra],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def write_set(tmp_path: Path) -> Path:
    set_dir = tmp_path / "tinyset"
    set_dir.mkdir()
    (set_dir / "found.py").write_text(FOUND)
    (set_dir / "found_fixed.py").write_text(FOUND_TWIN)
    (set_dir / "missed.py").write_text(MISSED)
    (set_dir / "missed_fixed.py").write_text(MISSED_TWIN)
    return set_dir


def test_set_counts_recall_per_rule_and_false_findings_on_twins(tmp_path):
    result = run_scorer(write_set(tmp_path))
    assert result["rules"] == {"AG005": {"bugs": 1, "file": 0, "line": 0}, "AG011": {"bugs": 1, "file": 1, "line": 1}}
    assert result["total"] == {"bugs": 2, "file": 1, "line": 1}
    assert [r["program"] for r in result["programs"]] == ["found.py", "missed.py"]  # twins are not bug programs
    twins = {r["program"]: r for r in result["twins"]}
    assert set(twins) == {"found_fixed.py", "missed_fixed.py"}
    assert twins["found_fixed.py"]["false"] == []
    assert twins["missed_fixed.py"]["false"] == [{"code": "AG011", "severity": "info", "line": 7}]


def test_reproduce_checks_bugs_show_the_symptom_and_twins_run_clean(tmp_path):
    result = run_scorer(write_set(tmp_path), "--reproduce")
    reproduced = {r["program"]: r["reproduced"] for r in result["programs"]}
    assert reproduced == {"found.py": True, "missed.py": False}
    clean = {r["program"]: (r["clean_run"], r["output"]) for r in result["twins"]}
    assert clean["found_fixed.py"][0] is True
    assert clean["missed_fixed.py"][0] is False and clean["missed_fixed.py"][1].startswith("exit 1")


def test_twin_that_still_shows_the_symptom_is_not_clean(tmp_path):
    set_dir = tmp_path / "stillbad"
    set_dir.mkdir()
    (set_dir / "bug.py").write_text("# source: https://example.invalid/x\n# symptom: BROKEN\nprint('BROKEN')  # expect: AG016\n")
    (set_dir / "bug_fixed.py").write_text("# source: https://example.invalid/x\n# symptom: BROKEN\nprint('BROKEN')\n")
    result = run_scorer(set_dir, "--reproduce")
    twin = result["twins"][0]
    assert twin["clean_run"] is False and twin["output"].startswith("symptom still seen")
    assert twin["false"] == []


def test_text_report_lists_each_false_finding(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bench.realbugs", "--set", str(write_set(tmp_path))],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "clean twins: 2, with a false finding: 1, false findings: 1 (1 info)" in done.stdout
    assert "false finding: missed_fixed.py: AG011 info line 7" in done.stdout


def test_default_set_has_no_twin_section():
    done = subprocess.run([sys.executable, "-m", "bench.realbugs", "--json"], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert "twins" not in result
    assert all(not r["program"].endswith("_fixed.py") for r in result["programs"])


def test_missing_set_directory_is_a_clear_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bench.realbugs", "--set", str(tmp_path / "nope")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert "not a directory" in done.stderr
