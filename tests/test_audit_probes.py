"""The audit probes (autograd_lsp/audit/_child_probes.py), through the real `autograd-lsp audit` CLI with torch.

For every rule AG001-AG018, a buggy and a fixed program written for these tests (tests/audit_fixtures/): the buggy
one must yield that rule, observed at run time, on the line marked `# audit-expect: AGnnn`; the fixed one must yield
no runtime finding at all. Correct training scripts (the `_fixed` samples) must also audit silent.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # torch runs in subprocesses

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "audit_fixtures"
SAMPLES = ROOT / "samples"
PROBES = ROOT / "autograd_lsp" / "audit" / "_child_probes.py"
RULES = [f"AG{n:03d}" for n in range(1, 19)]
_MARKER = re.compile(r"#\s*audit-expect:\s*(AG\d{3})")


def audit(script: Path) -> list[dict]:
    """What the run observed (findings marked observed at run time), from `autograd-lsp audit --format json`."""
    command = [sys.executable, "-m", "autograd_lsp", "audit", "--format", "json", "--exit-zero", "--timeout", "150",
               str(script)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert done.stdout.strip(), f"audit printed nothing ({done.returncode}): {done.stderr[-2000:]}"
    document = json.loads(done.stdout)
    return [f for f in document["findings"] if f.get("observed_at_run_time")]


@pytest.fixture(scope="module")
def observed() -> dict[str, list[dict]]:
    """Every fixture and fixed sample audited once (two at a time: each run is mostly torch's import)."""
    scripts = sorted(FIXTURES.glob("ag*_*.py")) + sorted(SAMPLES.glob("*_fixed.py"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip((str(s) for s in scripts), pool.map(audit, scripts)))


def expected(path: Path) -> tuple[str, int]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = _MARKER.search(line)
        if match:
            return match.group(1), number
    raise AssertionError(f"{path.name} has no `# audit-expect:` marker")


def test_every_rule_has_a_buggy_and_a_fixed_program():
    for code in RULES:
        for kind in ("buggy", "fixed"):
            assert (FIXTURES / f"{code.lower()}_{kind}.py").is_file(), f"{code} has no {kind} program"
        assert expected(FIXTURES / f"{code.lower()}_buggy.py")[0] == code


@pytest.mark.parametrize("code", RULES)
def test_buggy_program_yields_its_rule_on_the_right_line(code, observed):
    path = FIXTURES / f"{code.lower()}_buggy.py"
    want, line = expected(path)
    got = observed[str(path)]
    pairs = {(f["code"], f["line"]) for f in got}
    assert (want, line) in pairs, f"{path.name}: want {want}@{line}, observed {sorted(pairs)}"
    hit = next(f for f in got if (f["code"], f["line"]) == (want, line))
    assert hit["evidence"], "a runtime finding carries the evidence of its harm"
    assert Path(hit["path"]).name == path.name


@pytest.mark.parametrize("code", RULES)
def test_fixed_program_is_silent(code, observed):
    path = FIXTURES / f"{code.lower()}_fixed.py"
    got = observed[str(path)]
    assert not got, f"{path.name}: " + ", ".join(f"{f['code']}@{f['line']}: {f['message']}" for f in got)


def test_correct_samples_audit_silent(observed):
    fixed = sorted(SAMPLES.glob("*_fixed.py"))
    assert len(fixed) >= 18
    noisy = {Path(p).name: [f"{f['code']}@{f['line']}" for f in got] for p, got in observed.items()
             if Path(p).parent == SAMPLES and got}
    assert not noisy, noisy


def test_probes_are_child_only_text():
    """The parent never imports the probes: they are read as text (the child execs them), and importing the audit
    package does not import torch."""
    text = PROBES.read_text(encoding="utf-8")
    assert "import torch" in text and "def install(report, user_files)" in text
    code = ("import sys, autograd_lsp.audit, autograd_lsp.audit.runner as r; "
            "assert 'torch' not in sys.modules, 'torch imported'; "
            "assert 'autograd_lsp.audit._child_probes' not in sys.modules; print(len(r.probes_text()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) == len(text)
