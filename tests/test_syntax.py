"""syntax.py's tree queries against the stdlib's own (they replace ast.walk where order does not matter)."""
from __future__ import annotations

import ast
from pathlib import Path

from autograd_lsp.analysis.model import ModuleModel
from autograd_lsp.analysis.imports import ImportTable
from autograd_lsp.analysis.syntax import nodes, parents, statements
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
