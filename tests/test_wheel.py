"""The package as users get it: `python -m build` makes the sdist and, from it, the wheel; the wheel goes into a
fresh virtual environment, whose `autograd-lsp` checks samples/ and serves LSP (initialize → diagnostics →
shutdown → exit). Anything the checkout has and the distribution lacks (a module, a data file, a generated table,
an entry point) fails here rather than for the first user."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import venv
import zipfile
from pathlib import Path

import pytest
from worktree import REPO, copy_working_tree, working_tree_files

pytestmark = pytest.mark.slow
BUG_AG001 = "import torch\na = torch.ones(2, 2, requires_grad=True)\na += 2\n"
WAIT = 60  # seconds for any one server reply (a fresh interpreter compiles the package on first import)
# The fresh environment sees only what it installed: no checkout on the path.
CLEAN_ENV = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONHOME")}


def run(*args, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=CLEAN_ENV)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("wheel")
    source = copy_working_tree(work / "source")  # a clean tree: no egg-info or build/ left by a development install
    dist = work / "dist"
    result = run(sys.executable, "-m", "build", "--outdir", dist, source, cwd=work)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    wheels, sdists = list(dist.glob("*.whl")), list(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())

    environment = work / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    result = run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheels[0], cwd=work)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return {"work": work, "wheel": wheels[0], "sdist": sdists[0], "python": python, "bin": environment / "bin"}


def test_wheel_holds_every_package_file_and_the_entry_points(built):
    package_files = {name for name in working_tree_files() if name.startswith("autograd_lsp/")}
    assert "autograd_lsp/cli.py" in package_files
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = set(wheel.namelist())
        entry_points = next(wheel.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert package_files <= names, sorted(package_files - names)  # data files too, not just modules
    for line in ("autograd-lsp = autograd_lsp.cli:entry", "autograd-lsp = autograd_lsp.integrations.jupyter_spec:spec",
                 "AG = autograd_lsp.integrations.flake8_plugin:Plugin"):
        assert line in entry_points, entry_points


def test_installed_from_the_wheel_not_the_checkout(built):
    result = run(built["python"], "-c", "import autograd_lsp; print(autograd_lsp.__file__)", cwd=built["work"])
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).is_relative_to(built["bin"].parent / "lib")


def test_check_samples_from_the_wheel_matches_the_checkout(built):
    samples = REPO / "samples"
    packaged = run(built["bin"] / "autograd-lsp", "check", "--no-cache", samples, cwd=built["work"])
    assert packaged.returncode == 1, packaged.stderr
    development = run(sys.executable, "-m", "autograd_lsp", "check", "--no-cache", samples, cwd=REPO)  # this checkout's code
    assert packaged.stdout == development.stdout
    codes = {line.split(": ", 2)[1].split()[0] for line in packaged.stdout.splitlines() if line.startswith(str(samples))}
    assert codes == {f"AG{n:03d}" for n in range(1, 19)}, codes


def test_jupyter_spec_finder_from_the_wheel_names_its_interpreter(built):
    script = ("import json; from importlib.metadata import entry_points\n"
              "(ep,) = entry_points(group='jupyter_lsp_spec_v1', name='autograd-lsp')\n"
              "print(json.dumps(ep.load()(None)))")
    result = run(built["python"], "-c", script, cwd=built["work"])
    assert result.returncode == 0, result.stderr
    spec = json.loads(result.stdout)["autograd-lsp"]
    assert spec["argv"] == [str(built["python"]), "-m", "autograd_lsp", "serve"]
    assert spec["languages"] == ["python"]


class Client:
    """Just enough JSON-RPC over stdio to drive the packaged server; every read is bounded by WAIT."""

    def __init__(self, command: list[str], cwd: Path):
        self.process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=CLEAN_ENV)
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line or length is None:
                self.messages.put(None)
                return
            self.messages.put(json.loads(stream.read(length)))

    def send(self, method: str, params, request: bool = True) -> int | None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()
        return message.get("id")

    def wait_for(self, matches) -> dict:
        while True:
            message = self.messages.get(timeout=WAIT)
            assert message is not None, "the server closed its output: " + self.process.stderr.read().decode()[-4000:]
            if matches(message):
                return message
            if message.get("method") in ("window/workDoneProgress/create", "client/registerCapability",
                                         "workspace/configuration"):
                reply = [None] * len(message["params"].get("items", [])) if message["method"] == "workspace/configuration" else None
                body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": reply}).encode()
                self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                self.process.stdin.flush()

    def request(self, method: str, params) -> dict:
        request_id = self.send(method, params)
        reply = self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)
        assert "error" not in reply, reply
        return reply["result"]


def test_serve_from_the_wheel_initialize_diagnose_shutdown(built, tmp_path):
    bug = tmp_path / "leaf.py"
    bug.write_text(BUG_AG001, encoding="utf-8")
    client = Client([str(built["bin"] / "autograd-lsp"), "serve"], cwd=tmp_path)
    try:
        result = client.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(),
                                               "capabilities": {}, "clientInfo": {"name": "wheel-test"}})
        assert result["serverInfo"]["name"] == "autograd-lsp"
        assert result["capabilities"]["codeActionProvider"]
        client.send("initialized", {}, request=False)
        client.send("textDocument/didOpen", {"textDocument": {"uri": bug.as_uri(), "languageId": "python", "version": 1,
                                                             "text": BUG_AG001}}, request=False)
        published = client.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                    and m["params"]["uri"] == bug.as_uri() and m["params"]["diagnostics"])
        (diagnostic,) = published["params"]["diagnostics"]
        assert diagnostic["code"] == "AG001" and diagnostic["range"]["start"] == {"line": 2, "character": 0}
        assert client.request("shutdown", None) is None
        client.send("exit", None, request=False)
        assert client.process.wait(timeout=WAIT) == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()
            client.process.wait()
