"""A confirmation cut short leaves nothing behind: no sandboxed process still running and no temporary directory.

Two ways a run is cut short while its program still runs: the editor shuts the server down (a cancelled job's
thread may still be finishing), and Ctrl-C on `autograd-lsp confirm`. Both with bubblewrap (where the sandbox dies
with its parent anyway) and without it (`AUTOGRAD_LSP_SANDBOX=none`: only the runner can stop the program). Each
run's directory is made under a TMPDIR of the test's own, so the test sees exactly what is left there."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograd_lsp.confirm.sandbox import SANDBOX_SETTING
from raw_lsp import RawServer
from server_support import harness_children

# The program says it has started (a file in its working directory, the run's own) and sleeps.
SLOW = ("import time\nimport torch\nopen('started', 'w').close()\ntime.sleep(60)\n"
        "a = torch.ones(2, 2, requires_grad=True)\na += 2\n")
FLAGGED_LINE = 6


# Ctrl-C reaches a command started from a terminal. A test run started in the background by a shell without job
# control (`.ci/run &`) ignores SIGINT, and its children inherit that: the CLI would never see the signal. So the CLI
# starts with SIGINT's default disposition, set before exec (same process id) and kept across it.
_SIGINT_AS_A_TERMINAL_GIVES_IT = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                                  "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"]


def _until(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _started(scratch: Path) -> bool:
    return any(scratch.glob("*/started"))


def _gone(pid: int) -> bool:
    """Exited (a zombie whose parent has gone counts: it runs nothing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


@pytest.fixture(params=["bubblewrap-if-any", "none"])
def scratch(request, tmp_path, monkeypatch) -> Path:
    """The TMPDIR the runner makes its directories in; the sandbox setting the child processes inherit."""
    if request.param == "none":
        monkeypatch.setenv(SANDBOX_SETTING, "none")
    else:
        monkeypatch.delenv(SANDBOX_SETTING, raising=False)
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def test_the_server_exiting_during_a_confirmation_stops_it_and_deletes_its_directory(scratch, tmp_path):
    workspace = tmp_path / "project"
    workspace.mkdir()
    server = RawServer(workspace)
    try:
        server.initialize()
        uri = (workspace / "slow.py").as_uri()
        server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SLOW}})
        server.wait_for(lambda m: isinstance(m, dict) and m.get("method") == "textDocument/publishDiagnostics"
                        and any(d.get("code") == "AG001" for d in m["params"]["diagnostics"]))
        server.request_async("workspace/executeCommand", {"command": "autograd-lsp.confirm",
                                                          "arguments": [uri, FLAGGED_LINE - 1, "AG001", "cpu"]})
        _until(lambda: _started(scratch), "the program to start")
        children = harness_children(server.proc.pid)
        assert server.close() == 0  # shutdown and exit while the program sleeps
    finally:
        if server.alive():
            server.proc.kill()
    _until(lambda: all(_gone(pid) for pid in children), "the sandboxed run to stop")
    assert list(scratch.iterdir()) == []


def test_ctrl_c_on_the_confirm_command_stops_the_run_and_deletes_its_directory(scratch, tmp_path):
    program = tmp_path / "slow.py"
    program.write_text(SLOW, encoding="utf-8")
    cli = subprocess.Popen([*_SIGINT_AS_A_TERMINAL_GIVES_IT, "-m", "autograd_lsp", "confirm", f"{program}:{FLAGGED_LINE}", "--code", "AG001",
                            "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _until(lambda: _started(scratch) or cli.poll() is not None, "the program to start")
        children = harness_children(cli.pid)
        assert children, cli.communicate()
        os.kill(cli.pid, signal.SIGINT)
        cli.wait(30)
    finally:
        if cli.poll() is None:
            cli.kill()
        cli.communicate()
    assert cli.returncode != 0  # interrupted: no verdict
    _until(lambda: all(_gone(pid) for pid in children), "the sandboxed run to stop", timeout=20)
    assert list(scratch.iterdir()) == []
