"""Every rule's fixtures: `tests/fixtures/<rule module>/<case>.py` marks expected findings with `# expect: AGnnn`.

A line without a marker must produce no finding of that fixture folder's rule (negative cases live beside
positive ones). Where `<case>.fixed.py` exists, applying the first fix of every finding (safe and unsafe)
must give exactly that text, and the fixed text must check clean for the rule.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograd_lsp.checker import check_source
from autograd_lsp.config import Settings
from autograd_lsp.fixes import apply_fixes, choose_fixes
from autograd_lsp.rules import ALL_RULES
from autograd_lsp.source import Source, read_source

FIXTURES = Path(__file__).parent / "fixtures"
MARKER = re.compile(r"#\s*expect:\s*(AG\d{3}(?:\s*,\s*AG\d{3})*)")
RULES_BY_MODULE = {rule.module_name: rule for rule in ALL_RULES}


def cases():
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for case in sorted(folder.glob("*.py")):
            if not case.name.endswith(".fixed.py"):
                yield pytest.param(folder.name, case, id=f"{folder.name}/{case.stem}")
        for case in sorted(folder.glob("*.ipynb")):
            yield pytest.param(folder.name, case, id=f"{folder.name}/{case.name}")


def expected(source: Source, code: str) -> list[int]:
    lines = []
    for number, line in enumerate(source.lines, start=1):
        match = MARKER.search(line)
        if match and code in [c.strip() for c in match.group(1).split(",")]:
            lines.append(number)
    return lines


def resolver_for(path: Path):
    from autograd_lsp.analysis.crossmodule import JediResolver

    return JediResolver(path.parent)


@pytest.mark.parametrize("rule_module, case", list(cases()))
def test_fixture(rule_module: str, case: Path):
    rule = RULES_BY_MODULE.get(rule_module)
    assert rule is not None, f"fixture folder {rule_module} names no rule module"
    source = read_source(case)
    settings = Settings(select=frozenset({rule.code}))
    result = check_source(source, settings, resolver=resolver_for(case))
    found = sorted(f.span.line for f in result.findings if f.code == rule.code)
    assert not result.rule_errors, result.rule_errors
    assert found == expected(source, rule.code), "\n".join(f"{f.span.line}: {f.message}" for f in result.findings)
    fixed_path = case.with_name(case.stem + ".fixed.py")
    if fixed_path.exists():
        fixes = choose_fixes(result.findings, unsafe=True)
        assert fixes, "a .fixed.py exists but no finding offers a fix"
        fixed_text = apply_fixes(source.text, fixes)
        assert fixed_text == fixed_path.read_text(encoding="utf-8")
        again = check_source(Source(fixed_text, str(case)), settings, resolver=resolver_for(case))
        assert [f for f in again.findings if f.code == rule.code] == [], "the fixed text still has findings"


def test_every_rule_has_positive_and_negative_fixtures():
    for rule in ALL_RULES:
        folder = FIXTURES / rule.module_name
        texts = [p.read_text(encoding="utf-8") for p in folder.glob("*.py")] if folder.is_dir() else []
        assert any(f"expect: {rule.code}" in text for text in texts), f"{rule.code}: no positive fixture"
        assert any("expect:" not in text or text.count("\n") > text.count("expect:") + 3 for text in texts), f"{rule.code}: no negative lines"


def test_a_container_kept_whole_gets_advice_not_a_fix():
    """`outputs.append(out)` of a dict whose "loss" keeps a graph: `out.detach()` / `out.item()` would not run, so
    AG015 names the element to detach and offers no automatic rewrite."""
    case = FIXTURES / "loss_accumulation_keeps_graph" / "element_detached_before_keeping.py"
    result = check_source(read_source(case), Settings(select=frozenset({"AG015"})), resolver=resolver_for(case))
    containers = [f for f in result.findings if "append(out)" in f.message]
    assert containers and all(not f.fixes for f in containers)
    assert any('Replace `out["loss"]` by `out["loss"].detach()`' in f.message for f in containers)
