"""`autograd-lsp audit`: the core (child runner, stop reasons, loop bounding, notebooks, merge with `check`, output
shapes, exit codes), run as a subprocess with torch for real. The probes here are a tiny test-only stand-in
(tests/audit_core/tiny_probes.py) so these tests do not depend on the real probes' coverage."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # torch runs in subprocesses

TINY_PROBES = Path(__file__).parent / "audit_core" / "tiny_probes.py"


def _audit(script: Path, *options: str, args: tuple[str, ...] = (), probes: Path | None = TINY_PROBES,
           timeout: float = 240) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograd_lsp", "audit", str(script), *options]
    if probes is not None:
        command += ["--probes", str(probes)]
    if args:
        command += ["--", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=script.parent)


def audit_json(script: Path, *options: str, **kwargs) -> tuple[dict, int]:
    out = _audit(script, "--format", "json", *options, **kwargs)
    assert out.stdout.strip(), out.stderr
    return json.loads(out.stdout), out.returncode


def write(tmp_path: Path, text: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def line_of(path: Path, marker: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


def codes(doc: dict) -> list[tuple[str, int, str]]:
    return [(f["code"], f["line"], f["audit"]) for f in doc["findings"]]


# -- stop reasons: each says where the run stopped and keeps what was observed before --------------------------------
def test_missing_data_file_stops_the_run_and_keeps_what_was_observed(tmp_path):
    script = write(tmp_path, """
        import torch
        w = torch.randn(3, requires_grad=True)
        out = w * 2
        try:
            out.backward()  # non-scalar
        except RuntimeError:
            pass
        rows = open("data/train.csv").read()  # stop here
        print("never")
    """)
    doc, rc = audit_json(script)
    stopped = doc["run"]["stopped"]
    assert (stopped["reason"], stopped["line"], doc["run"]["stop_reason"]) == ("data", line_of(script, "stop here"), "missing data file")
    assert "data/train.csv" in stopped["message"]
    assert [(f["code"], f["line"], f["observed_at_run_time"]) for f in doc["findings"]] == [("AG005", line_of(script, "non-scalar"), True)]
    assert line_of(script, "never") not in doc["run"]["reached_lines"]
    assert rc == 1


def test_data_next_to_the_script_is_found_from_its_folder(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.csv").write_text("1,2\n")
    script = write(tmp_path, """
        rows = open("data/train.csv").read()
        assert rows == "1,2\\n"
    """)
    doc, rc = audit_json(script)
    assert doc["run"]["stopped"] is None, doc["run"]
    assert rc == 0


def test_missing_gpu_names_the_line(tmp_path):
    script = write(tmp_path, """
        import torch
        x = torch.zeros(2)
        x = x.cuda()  # gpu
    """)
    doc, _ = audit_json(script)
    stopped = doc["run"]["stopped"]
    assert (stopped["reason"], stopped["line"]) == ("gpu", line_of(script, "# gpu")), stopped


def test_device_cuda_without_a_gpu_is_an_error_before_the_script_runs(tmp_path):
    script = write(tmp_path, "x = 1\n")
    out = _audit(script, "--device", "cuda")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "missing GPU" in out.stdout and "before the script started" in out.stdout


def test_missing_argparse_argument(tmp_path):
    script = write(tmp_path, """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--data", required=True)
        args = parser.parse_args()  # parse
    """)
    doc, _ = audit_json(script)
    stopped = doc["run"]["stopped"]
    assert (stopped["reason"], stopped["line"]) == ("argument", line_of(script, "# parse"))
    assert "--data" in stopped["message"]


def test_missing_sys_argv_argument(tmp_path):
    script = write(tmp_path, """
        import sys
        epochs = int(sys.argv[1])  # argv
    """)
    doc, _ = audit_json(script)
    assert (doc["run"]["stopped"]["reason"], doc["run"]["stopped"]["line"]) == ("argument", line_of(script, "# argv"))


def test_reading_standard_input(tmp_path):
    script = write(tmp_path, """
        answer = input("continue? ")  # asks
    """)
    doc, _ = audit_json(script)
    assert (doc["run"]["stopped"]["reason"], doc["run"]["stopped"]["line"], doc["run"]["stop_reason"]) == \
        ("input", line_of(script, "# asks"), "waits for input")


def test_arguments_after_double_dash_reach_the_script(tmp_path):
    script = write(tmp_path, """
        import sys
        assert sys.argv[1:] == ["--lr", "0.1", "--", "x"], sys.argv
        assert sys.argv[0].endswith("train.py")
    """)
    doc, rc = audit_json(script, "--steps", "2", args=("--lr", "0.1", "--", "x"))
    assert doc["run"]["stopped"] is None, doc["run"]
    assert (rc, doc["run"]["steps"]) == (0, 2)


def test_timeout_says_where_the_script_was(tmp_path):
    script = write(tmp_path, """
        import time
        x = 1
        time.sleep(60)  # slow
    """)
    doc, _ = audit_json(script, "--timeout", "15")
    stopped = doc["run"]["stopped"]
    assert (stopped["reason"], stopped["line"]) == ("timeout", line_of(script, "# slow")), stopped


def test_memory_limit(tmp_path):
    script = write(tmp_path, """
        import torch
        big = bytearray(3 << 30)  # big
    """)
    doc, _ = audit_json(script, "--memory-limit", "1G")
    stopped = doc["run"]["stopped"]
    assert (stopped["reason"], stopped["line"], doc["run"]["stop_reason"]) == ("memory", line_of(script, "# big"), "memory limit")


def test_other_exception_points_at_the_innermost_user_line(tmp_path):
    script = write(tmp_path, """
        REPORT_FINISH = True
        def helper(n):
            return 1 / n  # divide
        helper(0)
    """)
    doc, _ = audit_json(script)
    stopped = doc["run"]["stopped"]
    assert (stopped["reason"], stopped["line"]) == ("exception", line_of(script, "# divide"))
    assert stopped["message"].startswith("ZeroDivisionError")
    # the probes' finish() is given the exception
    assert any(f["code"] == "AG016" and "finish ZeroDivisionError" in f["message"] for f in doc["findings"])


def test_a_script_that_does_not_parse(tmp_path):
    script = write(tmp_path, """
        import torch
        x = (
    """)
    doc, rc = audit_json(script)
    stopped = doc["run"]["stopped"]
    assert (stopped["reason"], stopped["path"], stopped["line"]) == ("syntax", str(script), 2), stopped
    assert [f["code"] for f in doc["findings"]] == ["AG000"] and rc == 1


# -- loop bounding -----------------------------------------------------------------------------------------------------
def test_loops_are_bounded_and_lines_keep_their_numbers(tmp_path):
    script = write(tmp_path, """
        import time
        import torch
        REPORT_FINISH = True
        w = torch.randn(2, requires_grad=True)
        count = 0
        for epoch in range(1000):
            for batch in iter(range(1000)):
                w.grad = None
                (w * 2).sum().backward()
                count += 1
            n = 0
            while True:
                n += 1
                opt_free = w.detach() * 2
                time.sleep(0.2)
        assert (count, n) == (16, 4), (count, n)
        sizes = [8, 7, 6, 5, 4, 3, 2]
        layers = []
        for fan_in, fan_out in zip(sizes, sizes[1:]):  # no autograd, quick: runs to its end
            layers.append(torch.nn.Linear(fan_in, fan_out))
        assert len(layers) == 6
        i = 0
        while i < 2:
            i += 1
        assert i == 2
        raise ValueError("here")  # line kept
    """)
    doc, _ = audit_json(script, "--steps", "4")
    assert doc["run"]["stopped"]["line"] == line_of(script, "# line kept"), doc["run"]
    assert doc["run"]["stopped"]["message"] == "ValueError: here"
    loops = {int(key.rsplit(":", 1)[1]): n for key, n in doc["run"]["loops"].items()}
    assert loops == {line_of(script, "for epoch"): 4, line_of(script, "for batch"): 4, line_of(script, "while True"): 4,
                     line_of(script, "for fan_in"): 6, line_of(script, "while i < 2"): 2}
    # step_boundary ran at each iteration start: 4 epochs + 16 batches + 16 sleeps + 6 layers + 2
    assert any(f["code"] == "AG016" and "boundaries=44" in f["message"] for f in doc["findings"]), doc["findings"]


def test_modules_of_the_project_are_bounded_and_watched_too(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "lib").mkdir()
    trainer = write(tmp_path, """
        import torch

        def train(model, steps):
            done = 0
            for step in range(steps):
                out = model(torch.randn(2, 4))
                try:
                    out.backward()  # non-scalar in trainer
                except RuntimeError:
                    pass
                done += 1
            return done
    """, "lib/trainer.py")
    script = write(tmp_path, """
        import sys
        import torch
        sys.path.insert(0, "lib")
        import trainer
        done = trainer.train(torch.nn.Linear(4, 1), 10 ** 9)
        assert done == 2, done
    """, "main.py")
    doc, rc = audit_json(script, "--steps", "2")
    assert doc["run"]["stopped"] is None, doc["run"]
    assert [(f["path"], f["line"], f["code"], f["audit"]) for f in doc["findings"]] == \
        [(str(Path("lib") / "trainer.py"), line_of(trainer, "non-scalar in trainer"), "AG005", "runtime-only")]
    assert rc == 1


# -- notebooks ---------------------------------------------------------------------------------------------------------
def test_notebook_cells_run_in_order_with_magics_masked(tmp_path):
    cells = [
        "%matplotlib inline\nimport torch\nw = torch.randn(3, requires_grad=True)",
        "# markdown-like comment only",
        "!ls\nfor step in range(50):\n    out = w * 2\n    out.backward(torch.ones(3))\ny = w * 3",
        "display(w.shape)\ntry:\n    y.backward()  # non-scalar\nexcept RuntimeError:\n    pass\nopen('missing.bin')",
    ]
    notebook = {"cells": [{"cell_type": "code", "source": text, "metadata": {}, "outputs": [], "execution_count": None} for text in cells[:1]]
                + [{"cell_type": "markdown", "source": "# title", "metadata": {}}]
                + [{"cell_type": "code", "source": text, "metadata": {}, "outputs": [], "execution_count": None} for text in cells[1:]],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    doc, _ = audit_json(path)
    stopped = doc["run"]["stopped"]
    assert stopped["reason"] == "data", stopped
    # cell 5 of the notebook (the markdown cell counts, as Jupyter shows)
    nonscalar = [f for f in doc["findings"] if f["code"] == "AG005"]
    assert [(f["cell"], f["cell_line"]) for f in nonscalar] == [(5, 3)], doc["findings"]
    assert "torch.Size([3])" in doc["run"]["output_tail"]  # display() works as in Jupyter
    out = _audit(path)
    assert "nb.ipynb:cell 5, line 6: missing data file" in out.stdout, out.stdout
    assert "nb.ipynb:cell 5, line 3:5: AG005" in out.stdout, out.stdout


# -- the sandbox holds -------------------------------------------------------------------------------------------------
def test_the_script_cannot_write_outside_its_temporary_directory(tmp_path):
    assert shutil.which("bwrap"), "bubblewrap is not installed (apt-get install bubblewrap)"
    (tmp_path / "keep.txt").write_text("original")
    script = write(tmp_path, """
        import os
        here = os.path.dirname(os.path.abspath(__file__))
        with open("scratch.txt", "w") as handle:  # the working directory is the run's own: allowed
            handle.write("ok")
        try:
            open(os.path.join(here, "keep.txt"), "w").write("overwritten")
        except OSError:
            pass
        open(os.path.join(here, "new.txt"), "w").write("x")  # refused
    """)
    doc, _ = audit_json(script)
    stopped = doc["run"]["stopped"]
    assert (stopped["reason"], stopped["line"]) == ("write", line_of(script, "# refused")), stopped
    assert doc["run"]["sandbox"] == "bubblewrap"
    assert (tmp_path / "keep.txt").read_text() == "original"
    assert not (tmp_path / "new.txt").exists() and not (tmp_path / "scratch.txt").exists()


# -- the parent side never imports torch -------------------------------------------------------------------------------
def test_the_parent_never_imports_torch(tmp_path):
    script = write(tmp_path, """
        import torch
        w = torch.randn(2, requires_grad=True)
        (w * 1).backward()  # non-scalar
    """)
    probe = textwrap.dedent(f"""
        import sys
        from autograd_lsp.audit import audit
        from autograd_lsp.audit import report
        result = audit({str(script)!r}, probes=open({str(TINY_PROBES)!r}).read())
        report.text(result); report.as_json(result); report.as_sarif(result)
        assert [(a.finding.code, a.status) for a in result.findings if a.observed] and result.run.torch_version, result.run
        assert not [m for m in sys.modules if m == "torch" or m.startswith("torch.")], "torch imported"
        print("parent-clean")
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=240)
    assert "parent-clean" in out.stdout, out.stdout + out.stderr


# -- merging with check; JSON and SARIF shapes; exit codes -------------------------------------------------------------
MERGE_SCRIPT = """
    import sys
    import torch

    w = torch.randn(3, requires_grad=True)
    if len(sys.argv) > 5:
        w.add_(1)  # not reached
    try:
        (w * 2).backward()  # static nonscalar
    except RuntimeError:
        pass
    double = eval("lambda t: t * 2")  # what eval makes is unknown to check
    try:
        double(w).backward()  # runtime only
    except RuntimeError:
        pass
    v = torch.range(0, 3)  # reached info
"""


def test_merge_marks_confirmed_runtime_only_not_reached_and_not_observed(tmp_path):
    script = write(tmp_path, MERGE_SCRIPT)
    static = json.loads(subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--format", "json", "--no-cache", str(script)],
                                       capture_output=True, text=True, timeout=240).stdout)
    static_keys = {(f["code"], f["line"]) for f in static}
    doc, rc = audit_json(script)
    got = set(codes(doc))
    assert ("AG001", line_of(script, "# not reached"), "not-reached") in got
    assert ("AG011", line_of(script, "# reached info"), "not-observed") in got
    assert ("AG005", line_of(script, "# runtime only"), "runtime-only") in got
    static_nonscalar = ("AG005", line_of(script, "# static nonscalar"))
    if static_nonscalar in static_keys:
        assert (*static_nonscalar, "confirmed") in got
    else:
        assert (*static_nonscalar, "runtime-only") in got
    # every static finding is in the audit, with check's fields
    assert static_keys <= {(f["code"], f["line"]) for f in doc["findings"]}
    for finding in doc["findings"]:
        assert {"path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message", "fix",
                "audit", "observed_at_run_time", "evidence"} <= set(finding)
        assert finding["observed_at_run_time"] == (finding["audit"] in ("confirmed", "runtime-only"))
        assert finding["path"] == str(script)
    assert rc == 1


def test_confirmed_when_the_run_sees_the_static_finding(tmp_path):
    script = write(tmp_path, """
        import torch
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        y.backward()  # flagged
    """)
    doc, rc = audit_json(script)
    assert ("AG005", line_of(script, "# flagged"), "confirmed") in codes(doc), doc
    assert doc["run"]["stopped"]["reason"] == "exception"
    assert rc == 1


def test_sarif_shape(tmp_path):
    script = write(tmp_path, MERGE_SCRIPT)
    out = _audit(script, "--format", "sarif")
    log = json.loads(out.stdout)
    run = log["runs"][0]
    assert log["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "autograd-lsp"
    statuses = {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"], r["properties"]["audit"]) for r in run["results"]}
    assert ("AG005", line_of(script, "# runtime only"), "runtime-only") in statuses
    assert all(r["properties"]["observedAtRunTime"] == (r["properties"]["audit"] in ("confirmed", "runtime-only")) for r in run["results"])
    assert run["invocations"][0]["executionSuccessful"] is True
    assert out.returncode == 1


def test_select_and_ignore_filter_both_sides(tmp_path):
    script = write(tmp_path, MERGE_SCRIPT)
    doc, _ = audit_json(script, "--ignore", "AG005")
    assert "AG005" not in {f["code"] for f in doc["findings"]} and "AG011" in {f["code"] for f in doc["findings"]}
    doc, _ = audit_json(script, "--select", "AG005")
    assert {f["code"] for f in doc["findings"]} == {"AG005"}


def test_exit_codes(tmp_path):
    clean = write(tmp_path, "import torch\nw = torch.randn(2, requires_grad=True)\n(w * 2).sum().backward()\n", "clean.py")
    out = _audit(clean)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "All checks passed!" in out.stdout
    dirty = write(tmp_path, MERGE_SCRIPT, "dirty.py")
    assert _audit(dirty).returncode == 1
    assert _audit(dirty, "--exit-zero").returncode == 0
    assert _audit(tmp_path / "absent.py").returncode == 2
    assert _audit(clean, "--python", str(tmp_path / "no-python")).returncode == 2


def test_text_output_marks_each_finding(tmp_path):
    script = write(tmp_path, MERGE_SCRIPT)
    out = _audit(script)
    lines = out.stdout.splitlines()
    runtime = next(line for line in lines if f":{line_of(script, '# runtime only')}:" in line)
    assert runtime.startswith(f"{script}:") and "AG005" in runtime and runtime.endswith("(runtime-only: observed at run time)")
    assert any("(not reached by the run)" in line and "AG001" in line for line in lines)
    assert lines[-1].startswith("Found ") and "observed at run time" in lines[-1]


def test_the_200_line_training_script_audits_clean(tmp_path):
    """The benchmark's correct training script (argparse defaults, a 10-step loop, a checkpoint saved to the working
    directory): nothing to report, and the run ends normally."""
    script = tmp_path / "train200.py"
    shutil.copyfile(Path(__file__).resolve().parents[1] / "bench" / "audit_fixtures" / "train200.py", script)
    doc, rc = audit_json(script)
    assert doc["run"]["stopped"] is None, doc["run"]
    assert (doc["findings"], rc) == ([], 0)
    assert doc["run"]["loops"][f"{script}:{line_of(script, 'for step in range(cfg.steps)')}"] == 3


def test_a_run_killed_from_outside_still_reports_where_it_was_and_what_it_saw(tmp_path):
    # The script ignores the child's own alarm, so only the parent's hard timeout stops it: the child's last
    # snapshot must still carry the finding observed before and the line it was stuck on.
    script = write(tmp_path, """
        import signal
        import time
        import torch
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        w = torch.randn(3, requires_grad=True)
        try:
            (w * 2).backward()  # non-scalar
        except RuntimeError:
            pass
        time.sleep(300)  # stuck
    """)
    doc, _ = audit_json(script, "--timeout", "40")  # room for importing torch on a loaded machine
    stopped = doc["run"]["stopped"]
    assert (stopped["reason"], stopped["line"]) == ("timeout", line_of(script, "# stuck")), stopped
    assert "killed" in stopped["message"]
    assert [(f["code"], f["line"]) for f in doc["findings"]] == [("AG005", line_of(script, "# non-scalar"))]
