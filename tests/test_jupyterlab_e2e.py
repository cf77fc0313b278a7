"""JupyterLab 4 + jupyterlab-lsp finds autograd-lsp by itself and shows its diagnostic in a notebook.

A separate environment (tests/.cache/jupyter-<hash>/, made from tests/e2e_jupyter/requirements.txt once and
reused) gets autograd-lsp installed from the working tree, and nothing else: no language_servers setting, fresh
Jupyter config, data and settings directories. JupyterLab runs on 127.0.0.1 with a token; headless Chromium opens a
notebook that has an IPython magic and an AG004 bug, and the test compares the lint mark and its tooltip with
what `autograd-lsp check` reports for the same notebook. Twice: found through the entry point alone, and
registered by hand in jupyter_server_config.json (auto-detection off) with the `autograd-lsp` of another
environment, this test's own, as the README shows for setups where Jupyter runs elsewhere. The screenshot is left
in tests/.cache/e2e_jupyter/ (docs/jupyterlab.png is a copy of it)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from autograd_lsp.source import read_source

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
HERE = REPO / "tests" / "e2e_jupyter"
# CI points this at a directory that outlives its fresh clone, so the Jupyter environment is made once per machine.
CACHE = Path(os.environ.get("AUTOGRAD_LSP_TEST_CACHE") or REPO / "tests" / ".cache")
ARTIFACTS = REPO / "tests" / ".cache" / "e2e_jupyter"  # screenshots stay with the checkout
NOTEBOOK = HERE / "bug_and_magic.ipynb"
STARTUP = 120  # seconds for JupyterLab to answer


def _pip(python: Path, *args: str) -> None:
    result = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


@pytest.fixture(scope="module")
def jupyter_python() -> Path:
    """The Jupyter environment's interpreter, with autograd-lsp installed (editable) from this working tree."""
    requirements = HERE / "requirements.txt"
    key = hashlib.sha256(requirements.read_bytes() + sys.version.encode()).hexdigest()[:12]
    environment = CACHE / f"jupyter-{key}"
    python = environment / "bin" / "python"
    if not (environment / ".complete").is_file():  # a half-made one (interrupted install) is made again
        shutil.rmtree(environment, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(environment)], check=True, timeout=300)
        _pip(python, "-r", str(requirements))
        (environment / ".complete").write_text(requirements.read_text())
    # Each run: the entry points and code of the working tree as it is now.
    _pip(python, "-e", str(REPO))
    return python


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(url: str, token: str):
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def manual_spec() -> dict:
    """The README's jupyter_server_config.json: the server of another environment, auto-detection off."""
    return {"LanguageServerManager": {"autodetect": False, "language_servers": {"autograd-lsp": {
        "version": 2,
        "argv": [str(Path(sys.executable).parent / "autograd-lsp"), "serve"],
        "languages": ["python"],
        "mime_types": ["text/python", "text/x-ipython"],
        "display_name": "autograd-lsp",
        "requires_documents_on_disk": False,
    }}}}


@pytest.fixture(scope="module", params=["autodetected", "manual"])
def jupyterlab(jupyter_python, tmp_path_factory, request):
    home = tmp_path_factory.mktemp(f"jupyter-{request.param}")
    if request.param == "manual":
        (home / "config").mkdir()
        (home / "config" / "jupyter_server_config.json").write_text(json.dumps(manual_spec(), indent=2))
    root = home / "notebooks"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    settings = home / "lab-settings"
    # No "official Jupyter news?" prompt over the notebook (and no request for news).
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env = {**os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_DATA_DIR": str(home / "data"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTERLAB_SETTINGS_DIR": str(settings),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"), "IPYTHONDIR": str(home / "ipython"),
           "JUPYTER_PLATFORM_DIRS": "1"}
    token, port = secrets.token_hex(16), _free_port()
    log = (home / "jupyterlab.log").open("w")
    lab = subprocess.Popen(
        [str(jupyter_python), "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}", "--LabApp.extension_manager=readonly"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP
        while True:
            assert lab.poll() is None, "JupyterLab exited:\n" + (home / "jupyterlab.log").read_text()[-4000:]
            try:
                _get(f"{url}/api/status", token)
                break
            except OSError:
                assert time.monotonic() < deadline, "JupyterLab did not answer:\n" + (home / "jupyterlab.log").read_text()[-4000:]
                time.sleep(0.5)
        yield {"url": url, "token": token, "home": home, "python": jupyter_python, "log": home / "jupyterlab.log",
               "how": request.param}
    finally:
        # Its kernel and language server are in its session: end them together.
        os.killpg(lab.pid, signal.SIGTERM)
        try:
            lab.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(lab.pid, signal.SIGKILL)
            lab.wait()
        log.close()


def _expected() -> list[dict]:
    """What `autograd-lsp check` reports for the notebook, each finding placed in its cell."""
    result = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--no-cache", "--format", "json", str(NOTEBOOK)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    source = read_source(NOTEBOOK)
    cells = [cell for cell in json.loads(NOTEBOOK.read_text())["cells"] if cell["cell_type"] == "code"]
    expected = []
    for finding in json.loads(result.stdout):
        cell, line = source.cell_of(finding["line"])
        assert finding["end_line"] == finding["line"]
        text = "".join(cells[cell]["source"]).split("\n")[line - 1][finding["column"] - 1:finding["end_column"] - 1]
        expected.append({**finding, "cell": cell, "text": text})
    return expected


def _without_line_numbers(message: str) -> str:
    # jupyterlab-lsp sends the server one virtual document of all cells with blank lines between them,
    # so "at line N" counts its lines, while `check` (which reads the .ipynb) says "at cell C, line N".
    return re.sub(r"\b(?:cell \d+, )?line \d+", "line N", message)


def test_diagnostic_and_message_shown_in_the_notebook(jupyterlab):
    status = _get(f"{jupyterlab['url']}/lsp/status", jupyterlab["token"])
    assert "autograd-lsp" in status["sessions"], sorted(status["sessions"])
    spec = status["sessions"]["autograd-lsp"]["spec"]
    assert spec["languages"] == ["python"]
    if jupyterlab["how"] == "autodetected":  # from the package's own spec finder, nothing configured
        assert spec["display_name"].startswith("autograd-lsp ") and spec["display_name"] != "autograd-lsp"
    else:  # the hand-written spec, and only it
        assert spec["display_name"] == "autograd-lsp" and list(status["sessions"]) == ["autograd-lsp"]

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / ("jupyterlab.png" if jupyterlab["how"] == "autodetected" else "jupyterlab-manual.png")
    screenshot.unlink(missing_ok=True)
    driver = subprocess.run(
        [str(jupyterlab["python"]), str(HERE / "driver.py"), jupyterlab["url"], jupyterlab["token"], NOTEBOOK.name,
         str(screenshot), str(jupyterlab["home"] / "chromium")],
        capture_output=True, text=True, timeout=400)
    assert driver.returncode == 0, (driver.stdout[-2000:] + driver.stderr[-4000:]
                                    + "\nJupyterLab log:\n" + jupyterlab["log"].read_text()[-4000:])
    seen = json.loads(driver.stdout.strip().splitlines()[-1])

    expected = _expected()
    assert [e["code"] for e in expected] == ["AG004"]
    assert [(m["cell"], m["text"]) for m in seen["marks"]] == [(e["cell"], e["text"]) for e in expected]
    assert all(f"cm-lintRange-{e['severity']}" in m["classes"] for m, e in zip(seen["marks"], expected))
    assert all(m["cell"] != 0 for m in seen["marks"])  # the magics' cell: nothing flagged there

    (shown,) = seen["tooltip"]
    assert shown["source"] == "autograd-lsp"
    assert _without_line_numbers(shown["message"]) == _without_line_numbers(expected[0]["message"])
    assert f"cm-diagnostic-{expected[0]['severity']}" in shown["classes"]
    assert screenshot.stat().st_size > 10_000
