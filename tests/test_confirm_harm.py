"""A confirmation proves harm, not mechanism (issue 12): correct code that shares the mechanism is not confirmed.

Every silent rule's probe measures what goes wrong — a wrong gradient against the one at the values the
forward used (AG008), a stale composed tensor a forward computes with (AG002), a "frozen" alias read after
the tensor moved (AG007), a graph that grows and no backward() uses (AG015)… — so the correct programs in
``confirm_fixtures/harmless/`` (each line marked ``# harmless: AGnnn``), which do what the rule's mechanism
describes (a `.data` write, an alias under no_grad, a growing graph, a composed tensor that stays as built)
without the harm, must come out ``not-reproduced``; the bugs in ``confirm_fixtures/harmful/`` (``# harmful:
AGnnn``) must be confirmed, by the harm. The samples' buggy/fixed pairs are checked in
test_confirm.py (buggy confirmed, fixed twin at the marker's line not reproduced); here, that the buggy
silent samples are confirmed *by their harm*. Real torch, through ``autograd-lsp confirm`` as a subprocess.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sample_markers import ROOT, SAMPLES_DIR, expected_markers

HARMLESS = sorted((Path(__file__).parent / "confirm_fixtures" / "harmless").glob("ag*.py"))
HARMFUL_DIR = Path(__file__).parent / "confirm_fixtures" / "harmful"
_MARK = re.compile(r"#\s*harm(?:less|ful):\s*(AG\d{3})")

# The harm each buggy silent sample must be confirmed by (the probe's own words).
HARM = {
    "AG002": r"the forward between the steps computed with it",
    "AG007": r"was read after an in-place update changed the tensor",
    "AG008": r"backward\(\) computed with the changed values: the gradient of w is off by up to [0-9.e-]+",
    "AG015": r"no backward\(\) ever used it",
}
# Bugs beyond the samples (`# harmful: AGnnn`), and the harm each must be confirmed by.
HARMFUL = {
    # `c = out.data; c.zero_()`: out's graph saved it; c's own version counter is not the one autograd checks
    "ag008_data_alias_changed.py": r"c \(= out\.data\) was changed through \.data after the forward saved it, and backward\(\) "
                                   r"computed with the changed values: the gradient of a is off by up to 0\.1966",
    # a .data read the loss is computed from: the trained tensor loses that gradient term
    "ag008_data_read_feeds_loss.py": r"pred was computed from w\.data at line 12 and backward\(\) went through it, so "
                                     r"optimizer\.step\(\) updated w without the gradient through pred",
}


def _marked(path: Path) -> tuple[str, int]:
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = _MARK.search(text)
        if match:
            return match.group(1), number
    raise AssertionError(f"{path.name} has no '# harmless: AGnnn' line")


def _confirm(path: Path, code: str, line: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "autograd_lsp", "confirm", f"{path}:{line}", "--code", code, "--format", "json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert out.stdout, out.stderr
    return json.loads(out.stdout) | {"exit": out.returncode}


def _buggy(code: str) -> tuple[Path, int]:
    path = next(p for p in SAMPLES_DIR.glob(f"{code.lower()}_*.py") if not p.stem.endswith("_fixed"))
    return path, expected_markers(path)[0][0]


@pytest.fixture(scope="module")
def verdicts():
    jobs = {p.name: (p, *_marked(p)) for p in HARMLESS}
    for code in HARM:
        path, line = _buggy(code)
        jobs[f"buggy:{code}"] = (path, code, line)
    for name in HARMFUL:
        jobs[f"harmful:{name}"] = (HARMFUL_DIR / name, *_marked(HARMFUL_DIR / name))
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(_confirm, path, code, line) for name, (path, code, line) in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


def test_there_are_harmless_programs_for_the_silent_rules():
    assert {_marked(p)[0] for p in HARMLESS} >= {"AG002", "AG007", "AG008", "AG015"}


@pytest.mark.slow
@pytest.mark.parametrize("path", HARMLESS, ids=[p.stem for p in HARMLESS])
def test_correct_code_with_the_mechanism_is_not_confirmed(verdicts, path):
    result = verdicts[path.name]
    assert result["status"] == "not-reproduced" and result["exit"] == 1, result
    assert result["isolation"] == "bubblewrap"


@pytest.mark.slow
@pytest.mark.parametrize("code", sorted(HARM))
def test_buggy_samples_are_confirmed_by_the_harm(verdicts, code):
    result = verdicts[f"buggy:{code}"]
    assert result["status"] == "confirmed" and result["exit"] == 0, result
    assert re.search(HARM[code], result["observed"]), result["observed"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HARMFUL))
def test_other_bugs_are_confirmed_by_the_harm(verdicts, name):
    result = verdicts[f"harmful:{name}"]
    assert result["status"] == "confirmed" and result["exit"] == 0, result
    assert re.search(HARMFUL[name], result["observed"]), result["observed"]


def test_every_harmful_fixture_has_its_expected_harm():
    assert sorted(p.name for p in HARMFUL_DIR.glob("*.py")) == sorted(HARMFUL)
