"""syntax.py's tree queries against the stdlib's own (they replace ast.walk where order does not matter)."""
from __future__ import annotations

import ast
from pathlib import Path

from autograd_lsp.analysis.model import ModuleModel
from autograd_lsp.analysis.imports import ImportTable
from autograd_lsp.analysis.syntax import ItemChanges, item_changes, nodes, parents, statements
from autograd_lsp.source import Source

_SHARED = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
PACKAGE = Path(__file__).resolve().parent.parent / "autograd_lsp"


def _trees():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield ast.parse(path.read_text(encoding="utf-8"))


def test_nodes_yields_every_node_ast_walk_does_but_the_context_markers():
    checked = 0
    for tree in _trees():
        expected = sorted(id(node) for node in ast.walk(tree) if not isinstance(node, ast.expr_context))
        assert sorted(id(node) for node in nodes(tree)) == expected
        checked += 1
    assert checked > 50


def test_parents_maps_every_child_to_the_node_holding_it():
    from autograd_lsp.analysis import syntax

    syntax._CHILD_FIELDS.clear()  # (as in a fresh process: no node type seen yet)
    for tree in list(_trees())[:40]:
        model = ModuleModel(tree, Source(""), ImportTable(tree))
        found = parents(model, tree)
        # (Load/Store and the operators are one shared node each: they have no one parent)
        expected = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)
                    if not isinstance(child, _SHARED)}
        assert {key: found[key] for key in expected} == expected
        assert set(found) - set(expected) <= {id(node) for node in ast.walk(tree) if isinstance(node, _SHARED)}


def test_statements_finds_nested_statements_depth_first_later_blocks_first():
    tree = ast.parse("import a\nif x:\n    import b\n    def f():\n        import c\nelse:\n    import d\n"
                     "try:\n    import e\nexcept E:\n    import f\nfinally:\n    import g\n"
                     "match v:\n    case 1:\n        import h\nclass K:\n    import i\n")
    assert [node.names[0].name for node in statements(tree.body, (ast.Import,))] == list("adbcfgehi")


def _table(tree, text=None):
    table = ImportTable(tree, text=text)
    return table.names, table.relative, table.torch_alias


def test_import_table_from_the_lines_saying_import_is_the_full_search():
    # blocks whose lines never say "import" are skipped: the same table, in the same last-binding-wins order
    tricky = ("import torch as t\nclass K:\n    def f(self):\n        from . import (\n            helpers as t)\n"
              "match v:\n    case 1:\n        import numpy as t\n"
              "def g():\n    x = 1\n    from os import \\\n        path as t\n"
              "try:\n    pass\nexcept E:\n    from torch import nn as t\n")
    tree = ast.parse(tricky)
    assert _table(tree, tricky) == _table(tree) == ({"t": "torch.nn"}, {"t"}, "t")
    checked = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        assert _table(tree, text) == _table(tree), path
        checked += 1
    assert checked > 50


def test_import_table_searches_everything_where_lines_may_end_in_carriage_returns():
    text = "x = 1\rdef f():\r    import torch as t\r"  # (counted by "\n", the import would be on line 1, before the def)
    tree = ast.parse(text)
    assert _table(tree, text) == ({"t": "torch"}, set(), "t")


def test_item_changes_follows_an_argument_into_the_functions_of_its_name_once():
    code = (
        "def grow(block, n):\n    block.append(n)\n    grow(block, n)\n"  # (recursive: read once, not followed again)
        "def size(block):\n    return len(block)\n"
        "class Net:\n    def widen(self, seq):\n        seq[0] = None\n"
        "grow(self.head, 3)\nsize(self.trunk)\nself.widen(self.neck)\nprint(self.tail)\nexternal(self.stem)\n"
        "self.body.insert(0, m)\ngrow(*pieces)\n"
    )
    found = item_changes(ast.parse(code))
    assert found["head"] == {"append", "passed"}  # (its own recursive call gives it to a callee not followed)
    assert "trunk" not in found and "tail" not in found  # (a function that only reads; a builtin)
    assert found["neck"] == {"[]"} and found["stem"] == {"passed"} and found["body"] == {"insert"}
    assert found["pieces"] == {"passed"}  # (a starred argument binds no known parameter)


def test_item_changes_sees_changes_through_aliases_nesting_setattr_and_augmented_assignment():
    code = (
        "h = self.head\nh.append(m)\nself.right += more\nself.stages[-1].append(m)\nself.body[1][-1] = m\n"
        "setattr(self.gate, '1', m)\nseq._modules['0'] = m\nnn.Sequential(self.trunk)\nlog.info('%s', self.kept)\n"
    )
    reads_only = lambda func: ast.unparse(func) in ("nn.Sequential", "log.info")  # noqa: E731
    found = item_changes(ast.parse(code), reads_only=reads_only)
    assert found["head"] == {"append"} and found["right"] == {"[]"} and found["stages"] == {"append"}
    assert found["body"] == {"[]"} and found["gate"] == {"[]"} and found["seq"] == {"[]"}
    assert "trunk" not in found and "kept" not in found  # (callees that only read what they are given)
    assert item_changes(ast.parse("nn.Sequential(self.trunk)\n"))["trunk"] == {"passed"}


def test_item_changes_asked_by_name_agree_with_the_whole_scan_and_follow_aliases_any_number_of_steps():
    code = (
        "@register(self.stem)\ndef build():\n    pass\n"  # (a decorator's line lies above its def's lineno)
        "a = self.head\rb = a\rb.append(m)\r"  # (lone carriage returns end lines for ast too)
        "grow(self.neck)\ndef grow(seq):\n    seq[0] = m\n"
        "self.tails.append(m)\nprint(self.tail)\n"
    )
    tree = ast.parse(code)
    whole = item_changes(tree)
    by_name = ItemChanges(tree, code)
    for name in ("stem", "neck", "tails", "tail", "a", "b"):
        assert by_name.get(name) == whole.get(name), name
    assert by_name.get("stem") == {"passed"} and by_name.get("neck") == {"[]"}
    assert by_name.get("tail") is None and by_name.get("tails") == {"append"}  # (`tails` is another name)
    # two steps through names bound to it: the whole scan follows one, by name any number
    assert by_name.get("head") == {"append"} and by_name.get("") is None


def test_item_changes_see_a_container_changed_through_a_loop_over_a_display_that_holds_it():
    code = "for block, width in zip((self.encoder, self.decoder), sizes):\n    block.append(m)\nfor layer in self.layers:\n    print(layer)\n"
    tree = ast.parse(code)
    assert item_changes(tree)["encoder"] >= {"append"} and ItemChanges(tree, code).get("decoder") >= {"append"}
    assert ItemChanges(tree, code).get("layers") is None  # (run over, not written in a display: its items are read)
