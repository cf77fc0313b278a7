"""`check` runs with the automatic collector off (reference counting frees its nodes); a safety net collects cycles."""
from __future__ import annotations

import gc
import weakref

from autograd_lsp import cli


class _Node:
    pass


def test_an_in_process_check_leaves_the_collector_as_it_found_it(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nx = torch.ones(2, requires_grad=True)\nx.add_(1)\n")
    assert gc.isenabled()
    assert cli.main(["check", str(tmp_path), "--no-cache", "--jobs", "1", "--exit-zero"]) == 0
    assert gc.isenabled()


def test_cycles_are_collected_once_the_net_count_of_objects_grows(monkeypatch):
    gc.collect()
    gc.disable()
    try:
        first, second = _Node(), _Node()
        first.other, second.other = second, first  # a cycle reference counting never frees
        alive = weakref.ref(first)
        del first, second
        cli._collect_if_grown()
        assert alive() is not None  # few objects since the last collection: not worth a collection yet
        monkeypatch.setattr(cli, "_GC_NET_OBJECTS", 0)
        cli._collect_if_grown()
        assert alive() is None
    finally:
        gc.enable()
