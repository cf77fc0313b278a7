"""AG010 judged at the backward names the cut where a helper of the workspace made the value (message and related)."""
from autograd_lsp.checker import check_source
from autograd_lsp.config import Settings
from autograd_lsp.source import Source

PROGRAM = '''import torch
import torch.nn as nn


def sign_agreement(pred, target):
    hard = torch.sign(pred) - torch.sign(target)
    return (hard ** 2).mean()


net = nn.Linear(3, 1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
penalty = sign_agreement(net(x), y)
penalty.backward()
'''


def test_cut_inside_the_helper_is_named():
    result = check_source(Source(PROGRAM, path="program.py"), Settings(select=frozenset({"AG010"})))
    [finding] = [f for f in result.findings if f.code == "AG010"]
    assert finding.span.line == 13
    assert "(line 6)" in finding.message
    assert any(related.span.line == 6 for related in finding.related)
