"""The README's rule table is generated from the rule modules; this keeps it in sync."""
from pathlib import Path

from autograd_lsp.docs import TABLE_END, TABLE_START, rule_table_block

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_rule_table_is_generated():
    text = README.read_text(encoding="utf-8")
    start, end = text.index(TABLE_START), text.index(TABLE_END) + len(TABLE_END)
    assert text[start:end] == rule_table_block(), "run: python -m autograd_lsp.docs --write-readme"
