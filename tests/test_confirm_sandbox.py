"""The confirm sandbox, attacked for real: a reproducer that tries every escape of issue 12.

Each escape runs inside a real confirmation (real torch, the AG001 bug at the end so the run is
confirmed) under bubblewrap, through the runner API and through `autograd-lsp confirm` as a
subprocess; the test then looks at the host: no secret in what the child read, no file written in
/tmp, the home directory or the workspace, no process left behind (nor the file one would write
later), no connection reached a listener on 127.0.0.1. The same reads through the unisolated
fallback (``AUTOGRAD_LSP_SANDBOX=none``) do find the secret, which shows the probe can see a leak,
and the fallback's verdict says "not isolated".
"""
from __future__ import annotations

import asyncio
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from autograd_lsp.confirm import clear_cache, confirm_finding
from autograd_lsp.confirm.sandbox import (
    ISOLATED,
    SANDBOX_SETTING,
    bubblewrap_command,
    isolation,
    masked_directories,
    scrubbed_environment,
)
from autograd_lsp.findings import Finding, Severity, Span
from autograd_lsp.source import read_source
from sample_markers import ROOT
from server_support import Editor

PYTHON = sys.executable
MARK = f"agl-escape-{uuid.uuid4().hex[:10]}"
HOME = pwd.getpwuid(os.getuid()).pw_dir
# Names a pattern deny-list misses (issue 12), and one it caught.
SECRETS = {
    "MY_API_PASS": f"pass-{MARK}",
    "DB_PASS": f"db-{MARK}",
    "SLACK_WEBHOOK_URL": f"https://hooks.slack.example/{MARK}",
    "MONGODB_URI": f"mongodb://u:p-{MARK}@h/db",
    "NETRC_PW": f"netrc-{MARK}",
    "GITHUB_TOKEN": f"ghp-{MARK}",
}

# Every read of an environment the child can try; it prints the secret names it found, and leaves
# before the flagged line if any (so a CLI run is "confirmed" only when nothing leaked).
READ_ENVIRONMENTS = """
import os
import sys
def _agl_read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("latin-1")
    except OSError as error:
        return "<" + type(error).__name__ + ">"
sources = {"os.environ": repr(dict(os.environ)), "/proc/1/environ": _agl_read("/proc/1/environ"),
           "/proc/ppid/environ": _agl_read("/proc/%d/environ" % os.getppid())}
for entry in os.listdir("/proc"):
    if entry.isdigit():
        sources["/proc/%s/environ" % entry] = _agl_read("/proc/%s/environ" % entry)
print("PPID-ENVIRON=" + sources["/proc/ppid/environ"][:300].replace("\\0", " "))
leaked = sorted({name for name in NAMES for text in sources.values() if name + "=" in text or repr(name) in text})
print("LEAKED=" + ",".join(leaked))
if leaked:
    sys.exit(9)
"""

ESCAPES = """
import os
import socket
import subprocess
import time
# Daemons: a new session, and a setsid double fork that would write a file later.
subprocess.Popen(["/bin/sh", "-c", "sleep 3; echo late > /tmp/MARK-late-setsid.txt; sleep 40; echo MARK-setsid"], start_new_session=True)
child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sh", ["/bin/sh", "-c", "sleep 3; echo late > /tmp/MARK-late.txt; echo late > WORKSPACE/MARK-late.txt; sleep 40; echo MARK-double"])
    os._exit(0)
os.waitpid(child, 0)
# Files outside the temporary directory.
for target in ["/tmp/MARK-tmp.txt", "/var/tmp/MARK-vartmp.txt", "HOST_HOME/MARK-home.txt",
               "WORKSPACE/MARK-workspace.txt", "REPO_DIR/MARK-repo.txt"]:
    try:
        with open(target, "w") as handle:
            handle.write("escaped")
        print("WROTE " + target)
    except OSError as error:
        print("BLOCKED " + target + ": " + str(error))
status = os.system("echo SHELL-RAN; touch /tmp/MARK-shell.txt HOST_HOME/MARK-shell.txt WORKSPACE/MARK-shell.txt REPO_DIR/MARK-shell.txt")
print("SHELL-STATUS=%d" % status)
# The network: a listener the test opened on the host's loopback.
connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
connection.settimeout(3)
try:
    connection.connect(("127.0.0.1", PORT))
    connection.sendall(b"MARK")
    print("CONNECTED")
except OSError as error:
    print("CONNECT-FAILED: " + str(error))
"""

BUG = """
import torch
a = torch.ones(2, requires_grad=True)
a += 1
"""


def _program(parts: list[str], port: int, workspace: Path) -> str:
    text = "NAMES = %r\n" % sorted(SECRETS)
    for part in parts:
        text += textwrap.dedent(part)
    for key, value in {"MARK": MARK, "WORKSPACE": str(workspace), "HOST_HOME": HOME,
                       "REPO_DIR": str(ROOT / "tests" / "confirm_fixtures"), "PORT": str(port)}.items():
        text = text.replace(key, value)
    return text


def _write(folder: Path, name: str, text: str) -> tuple[Path, int]:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.strip() == "a += 1")
    return path, line


def _cli(path: Path, line: int, **env) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "autograd_lsp", "confirm", f"{path}:{line}", "--code", "AG001", "--format", "json", "--timeout", "90"],
                          cwd=ROOT, capture_output=True, text=True, timeout=180, env={**os.environ, **env})


def _marker_processes() -> list[tuple[int, str]]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if MARK in cmdline and "autograd_lsp" not in cmdline:
                found.append((int(entry), cmdline))
    return found


def _escaped_files() -> list[Path]:
    places = [Path("/tmp"), Path("/var/tmp"), Path(HOME), ROOT / "tests" / "confirm_fixtures", ROOT]
    return [p for place in places if place.is_dir() for p in place.glob(f"{MARK}*")]


@pytest.fixture(scope="module")
def attacks(tmp_path_factory):
    """The runs, started together: the escapes (API and CLI, bubblewrap) and the fallback's reads."""
    workspace = tmp_path_factory.mktemp("workspace")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    escape, escape_line = _write(workspace, "escape.py", _program([ESCAPES, READ_ENVIRONMENTS, BUG], port, workspace))
    reads, reads_line = _write(workspace, "reads.py", _program([READ_ENVIRONMENTS, BUG], port, workspace))
    saved = {name: os.environ.get(name) for name in SECRETS}
    os.environ.update(SECRETS)
    os.environ.pop(SANDBOX_SETTING, None)
    clear_cache()
    source = read_source(escape)
    bug = Finding("AG001", "inplace-on-leaf", Severity.ERROR, "AG001 (test)", Span(escape_line, 0, escape_line, 1))
    with ThreadPoolExecutor(max_workers=3) as pool:
        api = pool.submit(confirm_finding, source, bug, timeout=90.0, use_cache=False)
        cli = pool.submit(_cli, escape, escape_line)
        fallback = pool.submit(_cli, reads, reads_line, **{SANDBOX_SETTING: "none"})
        results = {"api": api.result(), "cli": cli.result(), "fallback": fallback.result()}
    time.sleep(5)  # past the double fork's "sleep 3; write": a survivor would have written by now
    connections = []
    while True:
        try:
            connections.append(listener.accept()[0])
        except BlockingIOError:
            break
    results.update(port=port, connections=len(connections), workspace=workspace,
                   processes=_marker_processes(), files=_escaped_files())
    for conn in connections:
        conn.close()
    listener.close()
    yield results
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    for path in _escaped_files():  # only after a failure: keep the machine clean
        path.unlink()


def test_bubblewrap_is_available_here():
    """CI installs bubblewrap: the sandbox must be the real one, not the fallback."""
    assert shutil.which("bwrap"), "bubblewrap is not installed (apt-get install bubblewrap)"
    how = isolation()
    assert how.kind == ISOLATED, how.reason


@pytest.mark.slow
def test_the_escapes_run_and_the_bug_is_still_confirmed(attacks):
    result = attacks["api"]
    assert result.isolation == ISOLATED
    assert result.status == "confirmed", result.observed + result.output[-3000:]
    assert "not isolated" not in result.summary()
    # The program really ran its attempts (they failed; they were not skipped).
    assert "SHELL-RAN" in result.output and "CONNECT-FAILED" in result.output and "LEAKED=\n" in result.output


@pytest.mark.slow
def test_no_secret_reaches_the_child(attacks):
    output = attacks["api"].output
    for name, value in SECRETS.items():
        assert os.environ[name] == value  # the parent has it...
        assert value not in output, name  # ...the child saw it nowhere: environment, /proc/1, /proc/<ppid>
    assert "PPID-ENVIRON=<" in output or "PPID-ENVIRON=" in output
    assert "LEAKED=\n" in output


@pytest.mark.slow
def test_writes_outside_the_temporary_directory_do_not_land(attacks):
    lines = attacks["api"].output.splitlines()
    # The workspace (next to the source file) and the rest of the file system are read-only...
    # (A checkout under /tmp, /var/tmp or the home directory lies under a fresh tmpfs there: its folders are absent.)
    repo_hidden = any(ROOT.is_relative_to(place) for place in (Path("/tmp"), Path("/var/tmp"), Path(HOME)))
    for target, error in ((f"{attacks['workspace']}/{MARK}-workspace.txt", "Read-only file system"),
                          (f"confirm_fixtures/{MARK}-repo.txt", "No such file or directory" if repo_hidden else "Read-only file system")):
        assert any(line.startswith("BLOCKED ") and target in line and error in line for line in lines), (target, lines)
    # ...while /tmp, /var/tmp and the home directory are fresh tmpfs: writable inside, gone afterwards.
    for target in (f"/tmp/{MARK}-tmp.txt", f"/var/tmp/{MARK}-vartmp.txt", f"{HOME}/{MARK}-home.txt"):
        assert f"WROTE {target}" in lines, target
    # os.system ran, inside the sandbox; nothing it or the program wrote reached the host.
    assert "SHELL-RAN" in lines
    assert attacks["files"] == []


@pytest.mark.slow
def test_no_process_outlives_the_run(attacks):
    assert attacks["processes"] == [], attacks["processes"]
    assert not list(attacks["workspace"].glob(f"{MARK}*"))
    assert not Path(f"/tmp/{MARK}-late.txt").exists()


@pytest.mark.slow
def test_no_connection_to_the_hosts_loopback(attacks):
    assert "CONNECT-FAILED" in attacks["api"].output
    assert attacks["connections"] == 0


@pytest.mark.slow
def test_the_cli_runs_in_the_sandbox_too(attacks):
    out = attacks["cli"]
    data = json.loads(out.stdout)
    # confirmed: the program reached the flagged line, which it does only when no secret name leaked
    assert (out.returncode, data["status"], data["isolation"]) == (0, "confirmed", ISOLATED), out.stdout + out.stderr
    assert "isolation_note" not in data


@pytest.mark.slow
def test_the_fallback_says_not_isolated_and_does_leak(attacks):
    out = attacks["fallback"]
    data = json.loads(out.stdout)
    assert data["isolation"] == "none"
    assert data["isolation_note"] == f"not isolated: {SANDBOX_SETTING}=none"
    # Without bubblewrap the child reads its parent's environment through /proc: it left at sys.exit(9).
    assert data["status"] == "inconclusive" and "sys.exit(9)" in data["observed"], data


def test_fallback_summary_and_text_output_say_not_isolated(tmp_path):
    sample = ROOT / "samples" / "ag001_inplace_on_leaf.py"
    out = subprocess.run([PYTHON, "-m", "autograd_lsp", "confirm", f"{sample}:11"], cwd=ROOT, capture_output=True, text=True,
                         timeout=180, env={**os.environ, SANDBOX_SETTING: "none"})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "AG001 confirmed on cpu" in out.stdout
    assert f"[not isolated: {SANDBOX_SETTING}=none]" in out.stdout
    assert "sandbox: bubblewrap" not in out.stdout


@pytest.mark.slow
def test_without_bubblewrap_or_namespaces_it_falls_back_and_says_why(tmp_path):
    """bwrap missing from PATH, then a bwrap that cannot create namespaces (as in a locked-down container)."""
    missing, broken = tmp_path / "missing", tmp_path / "broken"
    missing.mkdir()
    broken.mkdir()
    fake = broken / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    sample = ROOT / "samples" / "ag001_inplace_on_leaf.py"
    for path, reason in [(missing, "bubblewrap (bwrap) is not installed"),
                         (broken, "bubblewrap cannot create namespaces here (bwrap: No permissions to creating new namespace)")]:
        env = {k: v for k, v in os.environ.items() if k != SANDBOX_SETTING}
        out = subprocess.run([PYTHON, "-m", "autograd_lsp", "confirm", f"{sample}:11", "--format", "json"], cwd=ROOT,
                             capture_output=True, text=True, timeout=180, env={**env, "PATH": str(path)})
        data = json.loads(out.stdout)
        assert (out.returncode, data["status"], data["isolation"]) == (0, "confirmed", "none"), out.stdout + out.stderr
        assert data["isolation_note"] == f"not isolated: {reason}"


# --------------------------------------------------------------------------------------------------
# The language server's `autograd-lsp.confirm` goes through the same sandbox.

def _server(setting: str | None = None) -> ClientServerConfig:
    env = {name: value for name, value in os.environ.items() if name != SANDBOX_SETTING}
    env.update(SECRETS, **({SANDBOX_SETTING: setting} if setting else {}))
    return ClientServerConfig(server_command=[PYTHON, "-m", "autograd_lsp", "serve"], server_env=env)


@pytest_lsp.fixture(config=_server())
async def sandboxed_server(lsp_client: LanguageClient):
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 30)


@pytest_lsp.fixture(config=_server("none"))
async def unisolated_server(lsp_client: LanguageClient):
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 30)


async def _confirm_over_lsp(client: LanguageClient, tmp_path: Path) -> tuple[dict, list[str]]:
    editor = Editor(client, "visual-studio-code", tmp_path)
    await editor.start()
    text = _program([READ_ENVIRONMENTS, BUG], 1, tmp_path)
    line = next(i for i, t in enumerate(text.splitlines()) if t.strip() == "a += 1")
    uri = editor.open("reads.py", text)
    await editor.diagnostics(uri, lambda ds: any(d.code == "AG001" for d in ds))
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="autograd-lsp.confirm", arguments=[uri, line, "AG001", "cpu"])), 120)
    return result, [m.message for m in client.messages]


@pytest.mark.slow
async def test_the_servers_confirm_runs_in_the_sandbox(sandboxed_server, tmp_path):
    result, messages = await _confirm_over_lsp(sandboxed_server, tmp_path)
    # the server's own environment (with the secrets) never reached the program: it ran to the bug
    assert (result["status"], result["isolation"]) == ("confirmed", ISOLATED), result
    assert any("AG001" in m and "confirmed on cpu" in m and "not isolated" not in m for m in messages), messages


@pytest.mark.slow
async def test_the_servers_fallback_notification_says_not_isolated(unisolated_server, tmp_path):
    result, messages = await _confirm_over_lsp(unisolated_server, tmp_path)
    assert result["isolation"] == "none" and result["status"] == "inconclusive", result  # it read the server's environ
    assert any("AG001" in m and f"[not isolated: {SANDBOX_SETTING}=none]" in m for m in messages), messages


# --------------------------------------------------------------------------------------------------
# The pieces, without running anything.

def test_environment_is_an_allow_list():
    base = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "CUDA_VISIBLE_DEVICES": "0", "PYTHONHASHSEED": "0",
            **SECRETS, "AWS_REGION": "x", "EDITOR": "vim", "SSH_AUTH_SOCK": "/run/ssh", "DISPLAY": ":0"}
    env = scrubbed_environment("/w", base)
    for name in ("PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "PYTHONHASHSEED"):
        assert env[name] == base[name]
    for name in [*SECRETS, "AWS_REGION", "EDITOR", "SSH_AUTH_SOCK", "DISPLAY"]:
        assert name not in env
    assert env["HOME"] == env["TMPDIR"] == "/w"


def test_bubblewrap_command_masks_and_rebinds(tmp_path):
    inside = tmp_path / "venv" / "lib"
    inside.mkdir(parents=True)
    args = bubblewrap_command("/usr/bin/bwrap", ["python", "-B", "h.py", "s.json"], str(tmp_path / "work"),
                              readable=[str(inside), "/usr/lib"], device="cpu", tmpfs_size=1 << 20)
    joined = " ".join(args)
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--die-with-parent", "--new-session",
                 "--cap-drop ALL", "--ro-bind / /", "--proc /proc", "--dev /dev", "--size 1048576 --tmpfs /tmp"):
        assert flag in joined, flag
    assert f"--tmpfs {HOME}" in joined and "/tmp" in masked_directories()
    # a path the interpreter needs inside a masked directory comes back read-only; one outside needs nothing
    assert f"--ro-bind {inside} {inside}" in joined and "--ro-bind /usr/lib" not in joined
    assert args[-7:] == ["--chdir", str(tmp_path / "work"), "--", "python", "-B", "h.py", "s.json"]
    assert args.index(f"--ro-bind") < args.index("--bind") and args[args.index("--bind") + 1] == str(tmp_path / "work")
    assert "--dev-bind" not in args
