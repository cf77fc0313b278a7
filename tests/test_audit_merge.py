"""How an audit's run observations meet `check`'s findings (report.merge): pure, no run needed."""
from __future__ import annotations

import textwrap

from autograd_lsp.audit.report import CONFIRMED, NOT_OBSERVED, NOT_REACHED, RUNTIME_ONLY, merge
from autograd_lsp.audit.runner import RunResult
from autograd_lsp.findings import Finding, Severity, Span
from autograd_lsp.source import Source

TEXT = textwrap.dedent("""
    import torch
    w = make()
    for step in range(3):
        out = use(w)
        out.backward()
        opt.step()
    for step in range(3):
        other = use(w)
    if never:
        w.add_(1)
""").lstrip()
PATH = "/project/train.py"


def static(code: str, line: int) -> Finding:
    return Finding(code, code.lower(), Severity.ERROR, f"static {code}", Span(line, 4, line, 10))


def observed(code: str, line: int, path: str = PATH) -> dict:
    return {"code": code, "path": path, "line": line, "message": f"run {code}", "evidence": "measured"}


def statuses(merged) -> list[tuple[str, int, str]]:
    return [(a.finding.code, a.finding.span.line, a.status) for a in merged]


def test_same_line_or_same_loop_confirms_other_loops_do_not():
    source = Source(TEXT, PATH)
    run = RunResult(findings=[observed("AG002", 5), observed("AG016", 8)], reached_lines={PATH: set(range(1, 9))})
    merged = merge(source, [static("AG002", 4), static("AG016", 6), static("AG001", 10)], run)
    assert statuses(merged) == [("AG002", 4, CONFIRMED), ("AG016", 6, NOT_OBSERVED), ("AG016", 8, RUNTIME_ONLY),
                                ("AG001", 10, NOT_REACHED)]
    confirmed = merged[0]
    assert (confirmed.run_line, confirmed.run_message, confirmed.evidence) == (5, "run AG002", "measured")


def test_an_exact_line_wins_over_a_loop_mate_and_each_observation_confirms_once():
    source = Source(TEXT, PATH)
    run = RunResult(findings=[observed("AG002", 5), observed("AG002", 4)], reached_lines={PATH: set(range(1, 9))})
    merged = merge(source, [static("AG002", 4), static("AG002", 5)], run)
    assert statuses(merged) == [("AG002", 4, CONFIRMED), ("AG002", 5, CONFIRMED)]
    assert [a.run_line for a in merged] == [4, 5]


def test_other_files_and_unselected_codes_are_left_out():
    source = Source(TEXT, PATH)
    run = RunResult(findings=[observed("AG005", 5, "/project/other.py"), observed("AG011", 2)], reached_lines={PATH: {1, 2}})
    assert merge(source, [], run, selected=lambda code: code != "AG011") == []
    assert statuses(merge(source, [], run)) == [("AG011", 2, RUNTIME_ONLY)]


def test_the_cause_of_a_two_place_bug_is_confirmed_with_its_failing_line_and_takes_no_observation():
    from dataclasses import replace

    from autograd_lsp.findings import Related

    source = Source(TEXT, PATH)
    failing = replace(static("AG002", 4), related=(Related(Span(2, 0, 2, 1), "composed here"),))
    cause = replace(static("AG002", 2), related=(Related(failing.span, "used here, stale"),), data={"cause_of": 4})
    run = RunResult(findings=[observed("AG002", 2)], reached_lines={PATH: set(range(1, 9))})
    merged = merge(source, [cause, failing], run)
    # the run named the composition's line: it confirms the failing finding (through its related line), and the cause
    # with it, without a second observation
    assert statuses(merged) == [("AG002", 2, CONFIRMED), ("AG002", 4, CONFIRMED)]
    unconfirmed = merge(source, [cause, failing], RunResult(findings=[], reached_lines={PATH: set(range(1, 9))}))
    assert statuses(unconfirmed) == [("AG002", 2, NOT_OBSERVED), ("AG002", 4, NOT_OBSERVED)]
