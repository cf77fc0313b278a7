"""What a `check` run changes in its process and restores: the automatic collector is off (reference counting frees
its nodes; a safety net collects cycles), and each consulted file is stat()ed once while the run checks."""
from __future__ import annotations

import gc
import json
import weakref

from autograd_lsp import cli
from crossmodule_programs import HELPER, TRAIN


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


def test_a_helper_changed_between_two_in_process_runs_is_read_again(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("")
    helpers = tmp_path / "helpers.py"
    helpers.write_text(HELPER)
    (tmp_path / "train.py").write_text(TRAIN.format(module="helpers"))

    def codes() -> list:
        capsys.readouterr()
        cli.main(["check", str(tmp_path / "train.py"), "--no-cache", "--jobs", "1", "--exit-zero", "--format", "json"])
        return [item["code"] for item in json.loads(capsys.readouterr().out)]

    assert codes() == ["AG002", "AG002"]  # the weight composed once, before the loop (there and at its use)
    helpers.write_text("import torch\n\ndef compose(a, b):\n    return torch.stack((a, b)).detach()  # a longer text\n")
    assert codes() == []  # the same resolver, a new run: the file's new size is seen, its new model says detached


def test_workers_share_the_runs_budget_of_kept_trees(tmp_path):
    # (in a child: a worker's start turns the collector off for the rest of its process)
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "a.py").write_text("import torch\n")
    probe = (
        "import sys; from pathlib import Path; from autograd_lsp import cli\n"
        "from autograd_lsp.analysis.crossmodule import MAX_TREE_LINES\n"
        "workers = int(sys.argv[1]); cli._start_worker(workers)\n"
        "print(cli._resolver(Path(sys.argv[2])).max_tree_lines * workers <= MAX_TREE_LINES)\n"
    )
    for workers in (2, 4):
        done = subprocess.run([sys.executable, "-c", probe, str(workers), str(tmp_path / "a.py")], capture_output=True, text=True)
        assert done.stdout.strip() == "True", done.stderr
