"""Runtime confirmation (`autograd_lsp.confirm`, `autograd-lsp confirm`), with real torch, no mocks.

Every run is a child process that imports torch (~1.5-2 s each), so the runs this file needs are
started together, in a thread pool, the first time any test asks for one (`runs` fixture); each test
then waits for its own. The static tests (reproducer shapes, line maps, the environment scrub) need
no torch and run in this process — which must never import torch itself (checked).
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from autograd_lsp.confirm import (
    SIGNATURES,
    ConfirmResult,
    Inconclusive,
    Reproducer,
    build_reproducer,
    clear_cache,
    confirm_finding,
)
from autograd_lsp.confirm.sandbox import scrubbed_environment
from autograd_lsp.findings import Finding, Severity, Span
from autograd_lsp.source import Source, join_cells, read_source
from sample_markers import ROOT, expected_markers, rule_code, sample_pairs

FIXTURES = Path(__file__).parent / "confirm_fixtures"
PYTHON = sys.executable
CODES = [f"AG{n:03d}" for n in range(1, 19)]
SECRET_NAME = "AGL_CONFIRM_TEST_SECRET_TOKEN"
SANDBOX_MARK = "agl_written_by_reproducer"


def finding(code: str, line: int, data: dict | None = None) -> Finding:
    return Finding(code, code.lower(), Severity.ERROR, f"{code} (test)", Span(line, 0, line, 1), data=data or {})


def static_finding(source: Source, code: str, line: int) -> Finding:
    """The checker's finding at the marker (with its data) where the rule exists, else a bare one."""
    try:
        from autograd_lsp.checker import check_source

        for found in check_source(source).findings:
            if found.code == code and found.span.line == line:
                return found
    except Exception:  # the checker is not what this file tests
        pass
    return finding(code, line)


def fixture_source(name: str) -> Source:
    return read_source(FIXTURES / name)


def snippet(text: str, name: str = "snippet.py") -> Source:
    return Source(textwrap.dedent(text).lstrip("\n"), str(FIXTURES / name))


def line_of(source: Source, needle: str) -> int:
    return next(i for i, text in enumerate(source.lines, 1) if needle in text)


# --------------------------------------------------------------------------------------------------
# The jobs: every torch run this file makes, started together.

def _sample_jobs() -> dict:
    jobs = {}
    for buggy, fixed in sample_pairs():
        line, code = expected_markers(buggy)[0]
        source = read_source(buggy)
        found = static_finding(source, code, line)
        jobs[f"sample:{buggy.name}"] = (source, found, {})
        # The same finding applied to the fixed twin: same code, line and facts (variable names).
        fixed_source = read_source(fixed)
        fixed_line = min(line, len(fixed_source.lines))
        jobs[f"sample:{fixed.name}"] = (fixed_source, Finding(code, found.name, found.severity, found.message, Span(fixed_line, 0, fixed_line, 1), data=dict(found.data)), {})
    return jobs


def _notebook(tmp: Path) -> Path:
    cells = [
        {"cell_type": "code", "source": ["import torch\n", "a = torch.ones(2, 2, requires_grad=True)\n", "print(a)"]},
        {"cell_type": "markdown", "source": ["Now shift it:"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "a += 2\n", "print(a)"]},
    ]
    path = tmp / "shift.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


SLEEPER = """
import time
import torch
a = torch.ones(2, requires_grad=True)
time.sleep(1000)
a += 1
"""

HOG = """
import torch
a = torch.ones(2, requires_grad=True)
big = torch.zeros(50 * 10**9 // 4)
a += 1
"""

PY_HOG = """
import torch
a = torch.ones(2, requires_grad=True)
big = bytearray(50 * 10**9)
a += 1
"""

WRITER = f"""
import os
import torch
open("{SANDBOX_MARK}.txt", "w").write("x")
os.system("touch {SANDBOX_MARK}_by_shell.txt")
print("CWD=" + os.getcwd())
print("HOME=" + os.environ["HOME"])
print("SECRET=" + os.environ.get("{SECRET_NAME}", "<scrubbed>"))
a = torch.ones(2, requires_grad=True)
a += 1
"""

CAUGHT = """
import torch
a = torch.ones(2, requires_grad=True)
try:
    a += 1
except RuntimeError as error:
    print("ignored:", error)
print("done")
"""

UNREACHED = """
import torch
a = torch.ones(2, requires_grad=True)
if a.sum() > 100:
    a += 1
print("done")
"""


def _other_jobs(tmp: Path) -> dict:
    jobs = {}
    train = fixture_source("train_function.py")
    jobs["function"] = (train, finding("AG016", line_of(train, "optimizer.step()")), {})
    train_fixed = fixture_source("train_function_fixed.py")
    jobs["function-fixed"] = (train_fixed, finding("AG016", line_of(train_fixed, "optimizer.step()")), {})
    scaler = fixture_source("scaler_module.py")
    jobs["method-args"] = (scaler, finding("AG005", line_of(scaler, "loss.backward()")), {})
    jobs["method-no-args"] = (scaler, finding("AG001", line_of(scaler, "self.scale += 1.0")), {})
    jobs["init"] = (scaler, finding("AG009", line_of(scaler, "self.offset =")), {})
    notebook = read_source(_notebook(tmp))
    jobs["notebook"] = (notebook, finding("AG001", line_of(notebook, "a += 2")), {})
    sleeper = snippet(SLEEPER)
    jobs["timeout"] = (sleeper, finding("AG001", line_of(sleeper, "a += 1")), {"timeout": 3.0})
    hog = snippet(HOG)
    jobs["memory-torch"] = (hog, finding("AG001", line_of(hog, "a += 1")), {})
    py_hog = snippet(PY_HOG)
    jobs["memory-python"] = (py_hog, finding("AG001", line_of(py_hog, "a += 1")), {})
    writer = snippet(WRITER)
    jobs["sandbox"] = (writer, finding("AG001", line_of(writer, "a += 1")), {})
    caught = snippet(CAUGHT)
    jobs["caught"] = (caught, finding("AG001", line_of(caught, "a += 1")), {})
    unreached = snippet(UNREACHED)
    jobs["unreached"] = (unreached, finding("AG001", line_of(unreached, "a += 1")), {})
    return jobs


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "autograd_lsp", "confirm", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def _cli_jobs() -> dict:
    buggy = "samples/ag001_inplace_on_leaf.py"
    line = expected_markers(ROOT / buggy)[0][0]
    return {
        "cli-confirmed": (f"{buggy}:{line}", "--format", "json", "--show"),
        "cli-not-reproduced": (f"samples/ag001_inplace_on_leaf_fixed.py:{line}", "--code", "AG001"),
        "cli-cuda": (f"{buggy}:{line}", "--device", "cuda", "--format", "json"),
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("confirm")
    clear_cache()
    jobs = {**_sample_jobs(), **_other_jobs(tmp)}
    os.environ[SECRET_NAME] = "do-not-leak"
    pool = ThreadPoolExecutor(max_workers=4)
    futures: dict[str, Future] = {}
    # The slow ones first, so they overlap with the rest.
    for name in ["timeout", "cli-confirmed", "cli-not-reproduced", "cli-cuda"] + [n for n in jobs if n != "timeout"]:
        if name.startswith("cli-"):
            futures[name] = pool.submit(_cli, *_cli_jobs()[name])
            continue
        source, found, options = jobs[name]
        futures[name] = pool.submit(confirm_finding, source, found, timeout=options.get("timeout", 60.0), device=options.get("device", "cpu"))
    yield {name: (jobs.get(name), future) for name, future in futures.items()}
    pool.shutdown(wait=True)
    os.environ.pop(SECRET_NAME, None)


def result_of(runs, name: str) -> ConfirmResult:
    return runs[name][1].result()


# --------------------------------------------------------------------------------------------------
# No torch in this process; signatures as data.

def test_importing_the_package_does_not_import_torch():
    code = "import sys, autograd_lsp.confirm, autograd_lsp.confirm.cli; print('torch' in sys.modules)"
    out = subprocess.run([PYTHON, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_every_rule_has_a_runtime_signature():
    assert sorted(SIGNATURES) == CODES
    for code, signature in SIGNATURES.items():
        assert signature.errors or signature.warnings or signature.probe, code


def test_signature_matching():
    ag001 = SIGNATURES["AG001"].errors[0]
    assert ag001.matches(["RuntimeError", "Exception"], "a leaf Variable that requires grad is being used in an in-place operation.")
    assert ag001.matches(["RuntimeError"], "a view of a leaf Variable that requires grad is being used in an in-place operation.")
    assert not ag001.matches(["TypeError"], "a leaf Variable that requires grad is being used in an in-place operation.")
    ag004 = SIGNATURES["AG004"].errors[0]
    assert ag004.matches(["RuntimeError"], "only Tensors of floating point dtype can require gradients")
    assert ag004.matches(["RuntimeError"], "Only Tensors of floating point and complex dtype can require gradients")


# --------------------------------------------------------------------------------------------------
# Reproducers (static: built, never run here).

def test_script_reproducer_bounds_loops_and_maps_lines_back():
    source = snippet("""
        import torch
        w = torch.zeros(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        loader = [torch.randn(3) for _ in range(100)]
        while True:
            for batch in loader:
                loss = (w * batch).sum()
                loss.backward()
                opt.step()
        for i in range(2):
            print(i)
        """)
    flagged = line_of(source, "loss.backward()")
    repro = build_reproducer(source, finding("AG016", flagged))
    assert isinstance(repro, Reproducer) and repro.mode == "script"
    compile(repro.code, "reproducer.py", "exec")
    assert "__agl__.bound(loader, 3)" in repro.code
    assert "_agl_n1 < 3" in repro.code  # while True -> 3 iterations
    assert "range(2)" in repro.code and "__agl__.bound(range(2)" not in repro.code  # small loops untouched
    lines = repro.code.split("\n")
    backward = next(i for i, text in enumerate(lines, 1) if "loss.backward()" in text)
    assert repro.line_map[backward] == flagged
    assert "__agl__.before()" in lines[backward - 2] and "__agl__.after()" in lines[backward]
    assert any("`while` loop bounded" in note for note in repro.notes)


def test_function_reproducer_slices_the_module_and_synthesizes_arguments():
    source = snippet("""
        import torch
        SCALE = 2.0
        UNUSED = open("/nonexistent/file").read()

        def train(model, optimizer, loader, epochs: int):
            for epoch in range(epochs):
                for x, y in loader:
                    loss = ((model(x) * SCALE - y) ** 2).mean()
                    loss.backward()
                    optimizer.step()

        if __name__ == "__main__":
            train(None, None, None, 0)
        """, "library.py")
    # The main block calls train: the script runs it with real arguments...
    step = line_of(source, "optimizer.step()")
    assert build_reproducer(source, finding("AG016", step)).mode == "script"
    # ...without it, train is only defined: call it with synthesized arguments.
    library = Source(source.text.split("if __name__")[0], source.path)
    repro = build_reproducer(library, finding("AG016", step))
    assert isinstance(repro, Reproducer) and repro.mode == "function"
    assert "SCALE = 2.0" in repro.code and "UNUSED" not in repro.code
    call = ast.parse(repro.code).body[-1].value
    assert isinstance(call, ast.Call) and call.func.id == "train" and len(call.args) == 4
    assert "optim.SGD(_agl_model" in repro.code and "nn.Linear" in repro.code
    assert repro.line_map[next(i for i, t in enumerate(repro.code.split("\n"), 1) if "optimizer.step()" in t)] == step


def test_method_reproducer_instantiates_the_class():
    source = fixture_source("scaler_module.py")
    repro = build_reproducer(source, finding("AG005", line_of(source, "loss.backward()")))
    assert isinstance(repro, Reproducer) and repro.mode == "method"
    assert "_agl_obj1 = Scaler()" in repro.code
    assert "_agl_obj1.fit_step(_agl_torch.randn(4, 4), _agl_torch.randn(4, 4), _agl_optimizer" in repro.code
    init = build_reproducer(source, finding("AG009", line_of(source, "self.offset =")))
    assert init.mode == "method" and init.entry == "Scaler()" and "__agl__.track_class(Scaler)" in init.code


def test_notebook_reproducer_joins_cells(tmp_path):
    source = read_source(_notebook(tmp_path))
    flagged = line_of(source, "a += 2")
    assert source.cell_of(flagged) == (2, 2)
    repro = build_reproducer(source, finding("AG001", flagged))
    assert isinstance(repro, Reproducer)
    assert "matplotlib" not in repro.code  # the magic is not Python
    assert repro.code.index("a = torch.ones") < repro.code.index("a += 2")


def test_no_sound_reproducer_is_inconclusive_with_the_reason():
    source = fixture_source("unknown_argument.py")
    repro = build_reproducer(source, finding("AG001", line_of(source, "w += thing")))
    assert isinstance(repro, Inconclusive) and "thing" in repro.reason
    result = confirm_finding(source, finding("AG001", line_of(source, "w += thing")))
    assert result.status == "inconclusive" and "thing" in result.observed and result.reproducer == ""
    broken = build_reproducer(Source("def f(:\n", "broken.py"), finding("AG001", 1))
    assert isinstance(broken, Inconclusive) and "parse" in broken.reason


def test_environment_is_scrubbed_and_cuda_visible_devices_passes():
    base = {
        "PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "1", "GITHUB_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "k",
        "AWS_REGION": "x", "MY_API_KEY": "k", "DB_PASSWORD": "p", "HF_TOKEN": "h", "SOME_CREDENTIALS": "c",
        "PYTHONPATH": "/src", "LANG": "C.UTF-8",
    }
    env = scrubbed_environment("/tmp/work", base)
    assert env["CUDA_VISIBLE_DEVICES"] == "1" and env["PATH"] == "/usr/bin" and env["PYTHONPATH"] == "/src"
    for secret in ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "MY_API_KEY", "DB_PASSWORD", "HF_TOKEN", "SOME_CREDENTIALS"):
        assert secret not in env
    assert env["HOME"] == env["TMPDIR"] == "/tmp/work"
    assert env["PYTHONBREAKPOINT"] == "0"


# --------------------------------------------------------------------------------------------------
# Samples: every buggy program confirmed, every fixed twin not reproduced.

PAIRS = sample_pairs()


@pytest.mark.slow
@pytest.mark.parametrize("buggy,fixed", PAIRS, ids=[rule_code(b) for b, _ in PAIRS])
def test_sample_pair(runs, buggy, fixed):
    code = rule_code(buggy)
    line = expected_markers(buggy)[0][0]
    bug = result_of(runs, f"sample:{buggy.name}")
    assert bug.status == "confirmed", f"{buggy.name}: {bug.status}: {bug.observed}\n{bug.output[-3000:]}"
    assert bug.code == code and bug.line == line and bug.torch_version and bug.python == PYTHON
    assert bug.user_line is not None
    twin = result_of(runs, f"sample:{fixed.name}")
    assert twin.status == "not-reproduced", f"{fixed.name}: {twin.status}: {twin.observed}\n{twin.output[-3000:]}"


def test_samples_cover_the_required_rules():
    assert {rule_code(b) for b, _ in PAIRS} >= {"AG001", "AG002", "AG003", "AG004"}


@pytest.mark.slow
def test_error_signatures_report_the_users_line(runs):
    ag001 = result_of(runs, "sample:ag001_inplace_on_leaf.py")
    assert ag001.user_line == ag001.line and ag001.observed.startswith("RuntimeError: a leaf Variable")
    assert ag001.summary().startswith(f"confirmed on cpu (torch {ag001.torch_version}) at line {ag001.line}: RuntimeError: a leaf Variable")
    # The in-place clamp is silent; backward() raises, and anomaly mode names the forward op.
    ag006 = result_of(runs, "sample:ag006_inplace_on_saved_tensor.py")
    source = read_source(ROOT / "samples" / "ag006_inplace_on_saved_tensor.py")
    assert ag006.user_line == line_of(source, "loss.backward()")
    assert ag006.forward_line == line_of(source, "probs = torch.sigmoid")


@pytest.mark.slow
def test_results_are_cached_per_content_line_and_device(runs):
    source, found, _ = runs["sample:ag004_nonfloat_requires_grad.py"][0]
    first = result_of(runs, "sample:ag004_nonfloat_requires_grad.py")
    again = confirm_finding(source, found, timeout=60.0)
    assert again.cached and again.status == first.status and again.observed == first.observed
    edited = Source(source.text + "\n# edited\n", source.path)
    assert confirm_finding(edited, found, timeout=60.0).cached is False


# --------------------------------------------------------------------------------------------------
# Shapes of reproducer, run.

@pytest.mark.slow
def test_function_with_arguments(runs):
    bug = result_of(runs, "function")
    assert (bug.status, bug.mode) == ("confirmed", "function"), bug.observed + bug.output[-2000:]
    assert "still held the gradients" in bug.observed
    fixed = result_of(runs, "function-fixed")
    assert (fixed.status, fixed.mode) == ("not-reproduced", "function"), fixed.observed + fixed.output[-2000:]


@pytest.mark.slow
def test_class_methods(runs):
    with_args = result_of(runs, "method-args")
    assert (with_args.status, with_args.mode) == ("confirmed", "method"), with_args.observed + with_args.output[-2000:]
    assert "scalar outputs" in with_args.observed and with_args.user_line == with_args.line
    no_args = result_of(runs, "method-no-args")
    assert (no_args.status, no_args.mode) == ("confirmed", "method"), no_args.observed
    init = result_of(runs, "init")
    assert init.status == "confirmed" and "Scaler.offset stayed on cpu" in init.observed


@pytest.mark.slow
def test_across_notebook_cells(runs):
    result = result_of(runs, "notebook")
    assert result.status == "confirmed", result.observed + result.output[-2000:]
    assert result.user_line == result.line and result.user_cell == (2, 2)
    assert "cell 3, line 2" in result.summary()


@pytest.mark.slow
def test_an_error_the_program_catches_still_confirms(runs):
    result = result_of(runs, "caught")
    assert result.status == "confirmed" and "caught by the program" in result.observed
    assert result.user_line == result.line


@pytest.mark.slow
def test_flagged_line_never_executed_is_inconclusive(runs):
    result = result_of(runs, "unreached")
    assert result.status == "inconclusive" and "never executed" in result.observed


# --------------------------------------------------------------------------------------------------
# The sandbox.

@pytest.mark.slow
def test_sleeping_forever_times_out(runs):
    result = result_of(runs, "timeout")
    assert result.status == "timeout"
    assert 3.0 <= result.duration_s < 15.0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["memory-torch", "memory-python"])
def test_allocating_50_gb_hits_the_memory_limit(runs, name):
    result = result_of(runs, name)
    assert result.status == "resource-limit", result.observed + result.output[-2000:]
    assert "memory" in result.observed.lower()


@pytest.mark.slow
def test_writes_stay_in_the_temporary_directory(runs):
    result = result_of(runs, "sandbox")
    assert result.status == "confirmed", result.observed + result.output[-2000:]
    workdir = result.workdir
    assert workdir and f"CWD={workdir}" in result.output and f"HOME={workdir}" in result.output
    assert "SECRET=<scrubbed>" in result.output and "do-not-leak" not in result.output
    assert not os.path.exists(workdir)  # deleted afterwards, with what was written there
    for where in (Path.cwd(), ROOT, FIXTURES):
        assert not list(where.glob(f"{SANDBOX_MARK}*")), where


def test_interpreter_without_torch_is_torch_missing(tmp_path):
    # a fresh virtual environment (no site packages) is an interpreter without torch
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    base = str(tmp_path / "venv" / "bin" / "python")
    assert subprocess.run([base, "-c", "import torch"], capture_output=True).returncode != 0
    source = read_source(ROOT / "samples" / "ag001_inplace_on_leaf.py")
    result = confirm_finding(source, finding("AG001", 11), python=base, use_cache=False)
    assert result.status == "torch-missing" and "torch" in result.observed and result.python == base
    assert result.torch_version is None


def test_interpreter_that_cannot_start_is_an_error():
    source = read_source(ROOT / "samples" / "ag001_inplace_on_leaf.py")
    result = confirm_finding(source, finding("AG001", 11), python="/nonexistent/bin/python", use_cache=False)
    assert result.status == "error" and "cannot start" in result.observed


# --------------------------------------------------------------------------------------------------
# The CLI, as a subprocess.

@pytest.mark.slow
def test_cli_confirmed_json_with_reproducer(runs):
    out = runs["cli-confirmed"][1].result()
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    for key in ("status", "code", "path", "line", "device", "observed", "user_line", "duration_s", "python", "torch_version"):
        assert key in data
    assert data["status"] == "confirmed" and data["code"] == "AG001" and data["device"] == "cpu"
    assert "__agl__.before()" in data["reproducer"] and "a += 2" in data["reproducer"]


@pytest.mark.slow
def test_cli_not_reproduced_on_the_fixed_twin(runs):
    out = runs["cli-not-reproduced"][1].result()
    assert out.returncode == 1, out.stdout + out.stderr
    assert ": AG001 not reproduced on cpu (torch " in out.stdout
    assert "no AG001 at" in out.stderr  # the fixed file has no static finding: the signature is checked anyway


@pytest.mark.slow
def test_cli_cuda_requested_without_cuda(runs):
    out = runs["cli-cuda"][1].result()
    data = json.loads(out.stdout)
    if data["status"] == "cuda-unavailable":  # this machine: CPU-only torch
        assert out.returncode == 3 and "is_available() is False" in data["observed"]
    else:  # a machine with a CUDA build and a GPU: the sample fails there too
        assert (out.returncode, data["status"], data["device"]) == (0, "confirmed", "cuda")


@pytest.mark.parametrize(
    "args,message",
    [
        (["samples/ag001_inplace_on_leaf.py"], "expected PATH:LINE"),
        (["samples/ag001_inplace_on_leaf.py:0"], "expected PATH:LINE"),
        (["samples/does_not_exist.py:3"], "cannot read"),
        (["samples/ag001_inplace_on_leaf.py:9999"], "no line 9999"),
        (["samples/ag001_inplace_on_leaf.py:1"], "pass --code"),
        (["samples/ag001_inplace_on_leaf.py:1", "--code", "AG999"], "unknown rule code"),
    ],
)
def test_cli_usage_errors(args, message):
    out = _cli(*args)
    assert out.returncode == 2 and message in out.stderr, out.stderr


def test_bundled_server_paths_do_not_reach_the_user_program(tmp_path):
    from autograd_lsp.confirm.sandbox import scrubbed_environment

    base = {"PYTHONPATH": os.pathsep.join(["/ext/bundled/libs", "/ext/bundled/tool", "/home/me/src"]),
            "AUTOGRAD_LSP_BUNDLED_PATHS": os.pathsep.join(["/ext/bundled/libs", "/ext/bundled/tool"]), "PATH": "/usr/bin"}
    env = scrubbed_environment(str(tmp_path), base)
    assert env["PYTHONPATH"] == "/home/me/src" and "AUTOGRAD_LSP_BUNDLED_PATHS" not in env
    only_bundled = dict(base, PYTHONPATH=base["AUTOGRAD_LSP_BUNDLED_PATHS"])
    assert "PYTHONPATH" not in scrubbed_environment(str(tmp_path), only_bundled)
