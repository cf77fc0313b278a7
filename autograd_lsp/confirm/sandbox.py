"""Run a reproducer in a separate, limited process of the configured interpreter.

What the sandbox does (and does not):

* a fresh temporary directory is the working directory and ``HOME``/``TMPDIR``; it holds the
  reproducer, the harness and its spec, and is deleted afterwards (whatever the program wrote
  there goes with it);
* the wall-clock timeout kills the whole process group (the program's children included), and the
  group is killed after a normal exit too, so nothing it started outlives the run;
* memory: ``RLIMIT_AS`` (default 4 GiB; not on ``cuda``, where the driver maps far more address
  space than it uses — there ``torch.cuda.set_per_process_memory_fraction`` caps device memory);
  ``RLIMIT_FSIZE`` caps any file it writes (default 256 MiB); no core dumps. The child sets these
  on itself as the harness's first statement, since a ``preexec_fn`` is unsafe in a threaded server;
* captured output (stdout and stderr together) is capped (64 KiB: the first 16 KiB and the last 48);
* the environment is copied minus anything that looks secret (names containing TOKEN, SECRET,
  PASSWORD, KEY, CREDENTIAL, AUTH, COOKIE, SESSION, PRIVATE, or starting AWS_, AZURE_, GOOGLE_,
  GITHUB_, GH_, HF_, OPENAI, ANTHROPIC…); ``CUDA_VISIBLE_DEVICES`` passes through untouched;
  ``PYTHONBREAKPOINT=0`` and ``MPLBACKEND=Agg`` keep ``breakpoint()`` and ``plt.show()`` from waiting.

It is not a security boundary: the program runs with the user's privileges and can read their
files and reach the network. It runs only when the user asks (the confirm command or code action).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

OUTPUT_HEAD = 16 * 1024
OUTPUT_TAIL = 48 * 1024
FILE_SIZE_LIMIT = 256 << 20

_SECRET = re.compile(
    r"TOKEN|SECRET|PASSW|KEY|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|CERT|^AWS_|^AZURE_|^GCP_|^GOOGLE_|^GH_|^GITHUB_"
    r"|^HF_|^HUGGING|^OPENAI|^ANTHROPIC|^SSH_|^GPG_|^GNUPG|^NPM_|^PYPI|^TWINE_|^DOCKER_|^KUBE|^VAULT_|^WANDB_API|DATABASE_URL|DSN$",
    re.I,
)
_DROPPED = {"PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONHOME"}
HARNESS = Path(__file__).with_name("_harness.py")


def scrubbed_environment(workdir: str, base: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in (os.environ if base is None else base).items() if not _SECRET.search(k) and k not in _DROPPED}
    # A server started from the VS Code extension's bundled copy has its own libraries on PYTHONPATH:
    # the user's program must see the user's environment, not those.
    bundled = set(filter(None, env.pop("AUTOGRAD_LSP_BUNDLED_PATHS", "").split(os.pathsep)))
    if bundled and "PYTHONPATH" in env:
        kept = [entry for entry in env["PYTHONPATH"].split(os.pathsep) if entry and entry not in bundled]
        if kept:
            env["PYTHONPATH"] = os.pathsep.join(kept)
        else:
            del env["PYTHONPATH"]
    env.update(
        HOME=workdir,
        TMPDIR=workdir,
        XDG_CACHE_HOME=os.path.join(workdir, ".cache"),
        XDG_CONFIG_HOME=os.path.join(workdir, ".config"),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        PYTHONBREAKPOINT="0",
        MPLBACKEND="Agg",
        WANDB_MODE="disabled",
    )
    env.setdefault("OMP_NUM_THREADS", "1")  # reproducers are tiny; spare the machine (and parallel runs)
    return env


@dataclass
class RunOutcome:
    facts: dict | None  # what the harness reported (None when it was killed before reporting)
    returncode: int | None
    timed_out: bool
    output: str
    output_truncated: bool
    duration_s: float
    workdir: str
    python: str
    killed_by: str | None = None  # signal name when the process died of a signal
    extra: dict = field(default_factory=dict)


class _Capture(threading.Thread):
    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.head = bytearray()
        self.tail = bytearray()
        self.truncated = False

    def run(self):
        while True:
            chunk = self.stream.read(8192)
            if not chunk:
                break
            room = OUTPUT_HEAD - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail += chunk
                if len(self.tail) > OUTPUT_TAIL:
                    self.truncated = True
                    del self.tail[: len(self.tail) - OUTPUT_TAIL]

    def text(self) -> str:
        middle = "\n[... output truncated ...]\n" if self.truncated else ""
        return (bytes(self.head).decode("utf-8", "replace") + middle + bytes(self.tail).decode("utf-8", "replace"))


def run(
    program: str,
    line_map: dict[int, int],
    *,
    probe: dict | None,
    user_path: str | None,
    device: str = "cpu",
    timeout: float = 30.0,
    python: str | None = None,
    memory_limit: int | None = 4 << 30,
    file_size_limit: int | None = FILE_SIZE_LIMIT,
) -> RunOutcome:
    python = python or sys.executable
    workdir = tempfile.mkdtemp(prefix="autograd-lsp-confirm-")
    started = time.perf_counter()
    try:
        reproducer = os.path.join(workdir, "reproducer.py")
        harness = os.path.join(workdir, "__agl_harness__.py")
        spec_path = os.path.join(workdir, "__agl_spec__.json")
        result_path = os.path.join(workdir, "__agl_result__.json")
        Path(reproducer).write_text(program, encoding="utf-8")
        shutil.copyfile(HARNESS, harness)
        user_dir = os.path.dirname(os.path.abspath(user_path)) if user_path and os.path.exists(user_path) else None
        spec = {
            "reproducer": reproducer,
            "result": result_path,
            "line_map": {str(k): v for k, v in line_map.items()},
            "probe": probe,
            "device": device,
            "user_dir": user_dir,
            "memory_limit": memory_limit,
            "file_size_limit": file_size_limit,
        }
        Path(spec_path).write_text(json.dumps(spec), encoding="utf-8")
        try:
            process = subprocess.Popen(
                [python, "-B", harness, spec_path],
                cwd=workdir,
                env=scrubbed_environment(workdir),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killed as a whole
            )
        except OSError as error:
            return RunOutcome(None, None, False, f"cannot start {python}: {error.strerror or error}", False,
                              time.perf_counter() - started, workdir, python, extra={"start_error": True})
        capture = _Capture(process.stdout)
        capture.start()
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_group(process.pid)
        process.wait()
        capture.join(timeout=5)
        duration = time.perf_counter() - started
        facts = None
        if os.path.exists(result_path):
            try:
                facts = json.loads(Path(result_path).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                facts = None
        killed_by = None
        if process.returncode is not None and process.returncode < 0:
            try:
                killed_by = signal.Signals(-process.returncode).name
            except ValueError:
                killed_by = f"signal {-process.returncode}"
        return RunOutcome(facts, process.returncode, timed_out, capture.text(), capture.truncated, duration, workdir, python, killed_by)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
