"""The server's plain-Python parts, without a server: positions, diagnostics, options, carry-over, hover."""
from __future__ import annotations

import ast

import pytest
from lsprotocol import types

from autograd_lsp.checker import check_source
from autograd_lsp.findings import Edit, Finding, Fix, Related, Safety, Severity, Span
from autograd_lsp.lsp_convert import (
    DiagnosticSupport, Place, char_to_units, from_position, text_edits, to_diagnostic, units_to_char, workspace_edit,
)
from autograd_lsp.server.carry_over import carry_over, changed_region
from autograd_lsp.server.hover import describe_provenance, node_at
from autograd_lsp.server.settings import ClientOptions, parse_client_options
from autograd_lsp.config import Settings
from autograd_lsp.source import Source

LINE = "x = '😀é' + a"  # an astral character (2 UTF-16 units, 4 UTF-8 bytes) and a 2-byte one


@pytest.mark.parametrize("encoding, expected", [("utf-16", 8), ("utf-8", 11), ("utf-32", 7)])
def test_columns_round_trip_in_each_encoding(encoding, expected):
    col = LINE.index("'", 5)  # the closing quote, after both characters
    assert char_to_units(LINE, col, encoding) == expected
    assert units_to_char(LINE, expected, encoding) == col
    for col in range(len(LINE) + 3):  # past the end too (end-of-line edits)
        assert units_to_char(LINE, char_to_units(LINE, col, encoding), encoding) == col


def test_position_inside_a_surrogate_pair_clamps_forward():
    assert units_to_char(LINE, 6, "utf-16") == 6  # between the two halves of 😀: the next character


def locate_file(text: str, uri: str = "file:///t.py"):
    lines = text.split("\n")
    return lambda line: Place(uri, line - 1, lines[line - 1] if 0 < line <= len(lines) else "")


def finding(code="AG001", span=Span(2, 4, 2, 9), **changes) -> Finding:
    base = dict(code=code, name="inplace-on-leaf", severity=Severity.ERROR, message="bad", span=span,
                fixes=(Fix("fix it", Safety.SAFE, (Edit(Span(2, 4, 2, 9), "y"),)),), related=(Related(Span(1, 0, 1, 1), "here"),))
    base.update(changes)
    return Finding(**base)


def test_diagnostic_fields_follow_what_the_client_supports():
    text = "a\nb = 'é' + x\n"
    uri, full = to_diagnostic(finding(), locate_file(text), "utf-8", DiagnosticSupport())
    assert (full.range.start.character, full.range.end.character) == (4, 10) and full.code == "AG001" and full.source == "autograd-lsp"
    assert full.code_description.href.endswith("#ag001") and full.related_information[0].message == "here"
    assert full.data["key"] == ["AG001", 2, 4, 2, 9]
    _, bare = to_diagnostic(finding(), locate_file(text), "utf-16", DiagnosticSupport(False, False, (), False))
    assert bare.code_description is None and bare.related_information is None and bare.data is None
    _, deprecated = to_diagnostic(finding("AG011", severity=Severity.INFO), locate_file(text))
    assert deprecated.tags == [types.DiagnosticTag.Deprecated] and deprecated.severity == types.DiagnosticSeverity.Information
    _, confirmed = to_diagnostic(finding(), locate_file(text), extra_message="confirmed on cpu")
    assert confirmed.message == "bad — confirmed on cpu"


def test_support_prefers_pull_capabilities_and_falls_back_to_publish():
    capabilities = types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=True, code_description_support=False),
        diagnostic=types.DiagnosticClientCapabilities(code_description_support=True)))
    assert DiagnosticSupport.of(capabilities, pull=True).code_description is True
    assert DiagnosticSupport.of(capabilities, pull=True).related_information is True
    assert DiagnosticSupport.of(capabilities, pull=False).code_description is False
    assert DiagnosticSupport.of(types.ClientCapabilities()) == DiagnosticSupport(False, False, (), False)


def test_edits_across_documents_and_versioned_changes():
    lines = {1: Place("cell:0", 0, "a"), 2: Place("cell:1", 0, "b")}
    grouped = text_edits([Edit(Span(1, 0, 1, 1), "A"), Edit(Span(2, 0, 2, 1), "B")], lines.get)
    assert set(grouped) == {"cell:0", "cell:1"}
    assert text_edits([Edit(Span(1, 0, 2, 1), "AB")], lines.get) is None  # crosses a cell boundary
    versioned = workspace_edit(grouped, {"cell:0": 3, "cell:1": 4}, document_changes=True)
    assert [change.text_document.version for change in versioned.document_changes] == [3, 4]
    assert set(workspace_edit(grouped).changes) == {"cell:0", "cell:1"}


def test_from_position_converts_back_to_characters():
    assert from_position(types.Position(line=0, character=11), LINE, "utf-8") == (1, 7)


# -- options -------------------------------------------------------------------------------------------
def test_client_options_parse_every_documented_key():
    options, problems = parse_client_options({"autogradLsp": {
        "select": ["AG0"], "ignore": "AG002, AG003", "severity": {"AG001": "Warning"}, "python": " /usr/bin/python3 ",
        "confirm": {"enabled": False, "timeout": 5, "device": "CUDA"}, "workspaceDiagnostics": True, "debounce": 0}})
    assert problems == []
    assert options.select == ("AG0",) and options.ignore == ("AG002", "AG003") and options.python == "/usr/bin/python3"
    assert (options.confirm_enabled, options.confirm_timeout, options.confirm_device) == (False, 5.0, "cuda")
    assert options.severity == {"AG001": Severity.WARNING} and options.workspace_diagnostics and options.debounce_ms == 0
    settings = options.apply(Settings())
    assert "AG002" not in settings.select and "AG001" in settings.select
    assert settings.severity_of("AG001", Severity.ERROR) is Severity.WARNING


def test_flat_dotted_keys_and_the_settings_wrapper():
    options, problems = parse_client_options({"settings": {"confirm.timeout": 12.5}})
    assert problems == [] and options.confirm_timeout == 12.5


@pytest.mark.parametrize("raw, fragment", [
    ({"select": ["AG999"]}, "AG999"),
    ({"ignore": [1]}, "ignore"),
    ({"severity": {"AG001": "fatal"}}, "fatal"),
    ({"severity": "error"}, "severity"),
    ({"confirm": {"timeout": -1}}, "confirm.timeout"),
    ({"confirm": {"device": "tpu"}}, "confirm.device"),
    ({"confirm": "yes"}, "confirm"),
    ({"confirm": {"enabled": "no"}}, "confirm.enabled"),
    ({"python": 3}, "python"),
    ({"debounce": 1e9}, "debounce"),
    ({"colour": "blue"}, "colour"),
    ("everything", "expected an object"),
])
def test_invalid_options_are_reported_and_defaulted(raw, fragment):
    options, problems = parse_client_options(raw)
    assert len(problems) == 1 and fragment in problems[0]
    defaults = ClientOptions()
    assert options.confirm_timeout == defaults.confirm_timeout and options.select == defaults.select


def test_vscode_extension_keys_are_understood():
    options, problems = parse_client_options({"interpreter": "/venv/bin/python", "trace": {"server": "verbose"}})
    assert problems == [] and options.python == "/venv/bin/python"
    assert parse_client_options({"python": "/a", "interpreter": "/b"})[0].python == "/a"


def test_missing_settings_are_defaults():
    assert parse_client_options(None) == (ClientOptions(), [])
    assert parse_client_options({}) == (ClientOptions(), [])


# -- carry-over ----------------------------------------------------------------------------------------
def test_changed_region_is_between_common_prefix_and_suffix():
    assert changed_region(["a", "b", "c"], ["a", "x", "y", "c"]) == (2, 1, 1)
    assert changed_region(["a"], ["a"]) == (2, 0, 0)


def test_carry_over_moves_findings_below_the_edit_and_drops_the_edited_ones():
    old = "l1\nl2\nl3\nl4\nl5"
    new = "l1\nl2 (\nextra\nl3\nl4\nl5"
    kept = carry_over(old, [finding(span=Span(1, 0, 1, 2)), finding(span=Span(2, 0, 2, 2)), finding(span=Span(4, 0, 4, 2),
                            fixes=(Fix("f", Safety.SAFE, (Edit(Span(4, 0, 4, 2), "x"),)), Fix("g", Safety.SAFE, (Edit(Span(2, 0, 2, 1), "y"),))),
                            related=(Related(Span(2, 0, 2, 1), "gone"), Related(Span(5, 0, 5, 1), "kept")))], new)
    assert [f.span.line for f in kept] == [1, 5]
    moved = kept[1]
    assert [fix.title for fix in moved.fixes] == ["f"] and moved.fixes[0].edits[0].span.line == 5
    assert [r.message for r in moved.related] == ["kept"] and moved.related[0].span.line == 6


def test_carry_over_aligns_two_separate_edits():
    old = "\n".join(f"line {i}" for i in range(1, 21))
    new_lines = old.split("\n")
    new_lines.insert(0, "# top")
    new_lines[-1] = "line 20 ("
    kept = carry_over(old, [finding(span=Span(10, 0, 10, 4)), finding(span=Span(20, 0, 20, 4))], "\n".join(new_lines))
    assert [f.span.line for f in kept] == [11]


def test_carry_over_drops_findings_on_the_error_lines():
    old, new = "a\nb\nc", "a\nb\nc\n"
    error = finding("AG000", span=Span(2, 0, 2, 1))
    assert carry_over(old, [finding(span=Span(2, 0, 2, 1)), finding(span=Span(3, 0, 3, 1))], new, error)[0].span.line == 3


# -- hover ---------------------------------------------------------------------------------------------
def test_provenance_line_for_a_leaf_and_what_it_is_composed_into():
    text = "import torch\na = torch.tensor(1.0, requires_grad=True)\nb = torch.tensor(2.0, requires_grad=True)\nw = torch.stack((a, b))\n"
    model = check_source(Source(text, "t.py")).model
    leaf = node_at(model.tree, 4, 18)  # `a` inside the stack call
    assert isinstance(leaf, ast.Name) and leaf.id == "a"
    line = describe_provenance(model, leaf)
    assert line.startswith("leaf · requires grad · float") and "composed into `w` at line 4" in line
    target = node_at(model.tree, 4, 0)
    assert "composed from `a`, `b`" in describe_provenance(model, target)
    assert node_at(model.tree, 1, 0) is None


def test_hover_node_for_attributes_selects_the_attribute_name():
    tree = ast.parse("self.weight = 1\n")
    node = node_at(tree, 1, 7)
    assert isinstance(node, ast.Attribute) and node.attr == "weight"
    assert isinstance(node_at(tree, 1, 1), ast.Name)
