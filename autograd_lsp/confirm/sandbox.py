"""Run a reproducer in a separate, limited process of the configured interpreter.

On Linux with bubblewrap (``bwrap``, the sandbox Flatpak uses) the child runs isolated:

* the whole file system is mounted read-only; ``/tmp``, ``/var/tmp``, ``/run`` (sockets of system
  services) and the home directory are fresh, size-capped tmpfs, so nothing written there reaches the
  host and the user's files there (keys, credentials) are not visible; the workspace (the flagged
  file's project) and what the interpreter needs from those places are bound back read-only; only the
  run's temporary directory is writable, and it is deleted afterwards;
* new user, PID, IPC, network and UTS namespaces, a new session, no capabilities (not even for root),
  and ``--die-with-parent``: every process the program starts (``setsid``, double forks, daemons) dies
  when the run ends or times out, ``/proc`` shows only the sandbox's processes (``/proc/1/environ`` and
  the parent's ``environ`` hold nothing but the allow-list below), and there is no network but an empty
  loopback of its own (the host's 127.0.0.1 is out of reach);
* what stays reachable: reading the rest of the file system (read-only), and a Unix socket outside the
  masked directories (a read-only mount does not stop ``connect()``; services keep theirs in ``/run``);
* on ``cuda`` the NVIDIA device nodes are bound in, and host memory is capped by a cgroup
  (``systemd-run --user --scope -p MemoryMax=``) where one can be made, else by ``RLIMIT_DATA``
  (``RLIMIT_AS`` breaks CUDA, whose driver maps far more address space than it uses).

Everywhere (and as the whole of it where bubblewrap is missing or cannot create namespaces — macOS,
Windows, a container without user namespaces — or ``AUTOGRAD_LSP_SANDBOX=none`` asks for it, in which
case every result says "not isolated"):

* the environment is an allow-list (``CHILD_ENVIRONMENT``: PATH, locale, CUDA device selection, the
  interpreter's own settings…), not the parent's minus what looks secret; ``HOME``/``TMPDIR`` are the
  temporary directory, which is also the working directory;
* a wall-clock timeout kills the whole process group, which is also killed after a normal exit;
* memory: ``RLIMIT_AS`` on cpu (default 4 GiB), ``RLIMIT_DATA`` on cuda unless a cgroup caps it;
  ``torch.cuda.set_per_process_memory_fraction`` caps device memory; ``RLIMIT_FSIZE`` caps any file
  written (default 256 MiB); no core dumps. The child sets these on itself as the harness's first
  statement, since a ``preexec_fn`` is unsafe in a threaded server;
* captured output (stdout and stderr together) is capped (64 KiB: the first 16 KiB and the last 48).

Without bubblewrap the program runs with the user's privileges: it can read their files (and the
parent's environment through ``/proc``), write anywhere they can, start processes that outlive the
run, and reach the network. It runs only when the user asks (the confirm command or code action).
"""
from __future__ import annotations

import atexit
import functools
import glob
import json
import os
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
HARNESS = Path(__file__).with_name("_harness.py")
SANDBOX_SETTING = "AUTOGRAD_LSP_SANDBOX"  # "none" forces the unisolated runner

ISOLATED, NOT_ISOLATED = "bubblewrap", "none"

# What the child's environment may hold: names a Python/torch program needs to start and pick its
# device, nothing else. LC_* is added by prefix (locale categories only).
CHILD_ENVIRONMENT = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM",
    "PYTHONPATH", "PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONWARNINGS", "PYTHONNOUSERSITE",
    "PYTHONSAFEPATH", "PYTHONDEVMODE", "PYTHONFAULTHANDLER",
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_PATH", "CUDA_LAUNCH_BLOCKING",
    "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "TORCH_SHOW_CPP_STACKTRACES", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    # Windows: Python cannot start (or seed its random numbers) without these.
    "SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT",
})
_LOCALE_PREFIX = "LC_"


def scrubbed_environment(workdir: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The child's environment: the allow-listed variables of `base` (default: ours), plus the run's own."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if k in CHILD_ENVIRONMENT or k.startswith(_LOCALE_PREFIX)}
    # A server started from the VS Code extension's bundled copy has its own libraries on PYTHONPATH:
    # the user's program must see the user's environment, not those.
    bundled = set(filter(None, base.get("AUTOGRAD_LSP_BUNDLED_PATHS", "").split(os.pathsep)))
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


# -- isolation ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Isolation:
    kind: str  # ISOLATED ("bubblewrap") or NOT_ISOLATED ("none")
    reason: str = ""  # why not isolated
    bwrap: str | None = None
    tmpfs_size: bool = True  # bwrap has --size (0.7 and later): the tmpfs are capped


_NAMESPACES = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
               "--die-with-parent", "--new-session", "--cap-drop", "ALL"]


def isolation() -> Isolation:
    """How the next run will be isolated (the setting is read each time; the bubblewrap probe once)."""
    setting = os.environ.get(SANDBOX_SETTING, "").strip().lower()
    if setting in ("none", "off", "0", "false", "no"):
        return Isolation(NOT_ISOLATED, f"{SANDBOX_SETTING}={os.environ[SANDBOX_SETTING]}")
    return _probe_bubblewrap(shutil.which("bwrap"))


@functools.lru_cache(maxsize=4)
def _probe_bubblewrap(bwrap: str | None) -> Isolation:
    if not sys.platform.startswith("linux"):
        return Isolation(NOT_ISOLATED, f"bubblewrap needs Linux (this is {sys.platform})")
    if bwrap is None:
        return Isolation(NOT_ISOLATED, "bubblewrap (bwrap) is not installed")
    def attempt(*size: str):
        return subprocess.run([bwrap, *_NAMESPACES, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                               *size, "--tmpfs", "/tmp", "--", "true"],
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=20)

    try:
        probe, sized = attempt("--size", str(1 << 20)), True
        if probe.returncode != 0 and "--size" in probe.stderr:  # bubblewrap before 0.7
            probe, sized = attempt(), False
    except (OSError, subprocess.TimeoutExpired) as error:
        return Isolation(NOT_ISOLATED, f"bubblewrap cannot run here: {error}")
    if probe.returncode != 0:
        detail = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
        return Isolation(NOT_ISOLATED, f"bubblewrap cannot create namespaces here ({detail})")
    return Isolation(ISOLATED, bwrap=bwrap, tmpfs_size=sized)


def _home_directories() -> list[str]:
    homes = {os.path.expanduser("~"), os.environ.get("HOME", "")}
    try:
        import pwd  # POSIX only; bubblewrap is Linux only

        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        pass
    # A home that is "/" or a system directory cannot be masked without hiding the system.
    system = {"/", "/usr", "/bin", "/etc", "/lib", "/opt", "/var", "/nonexistent"}
    return sorted(h for h in homes if h and os.path.isabs(h) and os.path.normpath(h) not in system and os.path.isdir(h))


def masked_directories() -> list[str]:
    """Directories the sandbox replaces with an empty tmpfs."""
    masked = [path for path in ("/tmp", "/var/tmp", "/run", "/var/run") if os.path.isdir(path) and not os.path.islink(path)]
    return masked + [home for home in _home_directories() if home not in masked]


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


_QUERY = "import json, sys; print(json.dumps([sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix] + sys.path))"


@functools.lru_cache(maxsize=16)
def _interpreter_paths(bwrap: str, python: str, pythonpath: str | None) -> tuple[str, ...]:
    """What the interpreter reads at start-up (its prefixes and sys.path), asked of it inside a sandbox
    that hides nothing but lets it write nothing and reach nothing."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    try:
        out = subprocess.run([bwrap, *_NAMESPACES, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--",
                              python, "-c", _QUERY], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        paths = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        paths = []
    return tuple(p for p in paths if isinstance(p, str) and p)


def workspace_of(path: str | None) -> str | None:
    """The flagged file's project: the nearest folder above it with pyproject.toml, setup.py, setup.cfg
    or .git, else the file's own folder; never a home directory or anything above one (a dotfiles
    repository in ~ must not expose the whole home)."""
    if not path or not os.path.exists(path):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    stops = set(_home_directories()) | {"/"}
    here = folder
    while here not in stops:
        if any(os.path.exists(os.path.join(here, marker)) for marker in ("pyproject.toml", "setup.py", "setup.cfg", ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return folder if folder not in stops else None


def bubblewrap_command(bwrap: str, command: list[str], workdir: str, *, readable: list[str], device: str = "cpu",
                       tmpfs_size: int | None = FILE_SIZE_LIMIT) -> list[str]:
    """The bwrap command line that runs `command` with only `workdir` writable.

    `readable`: paths that must stay visible (read-only) even where they lie in a masked directory.
    """
    args = [bwrap, *_NAMESPACES, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    masked = masked_directories()
    for directory in masked:
        if tmpfs_size:
            args += ["--size", str(tmpfs_size)]
        args += ["--tmpfs", directory]
    wanted = set()
    for path in readable:
        for candidate in (os.path.abspath(path), os.path.realpath(path)):
            if os.path.exists(candidate) and any(_under(candidate, m) for m in masked):
                wanted.add(candidate)
    bound: list[str] = []
    for path in sorted(wanted, key=lambda p: (p.count("/"), p)):
        if not any(_under(path, b) for b in bound):
            bound.append(path)
            args += ["--ro-bind", path, path]
    if device == "cuda":
        for node in sorted(glob.glob("/dev/nvidia*")) + (["/dev/dri"] if os.path.exists("/dev/dri") else []):
            args += ["--dev-bind", node, node]
    args += ["--bind", workdir, workdir, "--chdir", workdir, "--", *command]
    return args


@functools.lru_cache(maxsize=1)
def _memory_scope() -> bool:
    """Whether `systemd-run --user --scope` can put a run in a memory-capped cgroup here."""
    systemd_run = shutil.which("systemd-run")
    if systemd_run is None:
        return False
    try:
        probe = subprocess.run([systemd_run, "--user", "--scope", "--quiet", "-p", "MemoryMax=1G", "--", "true"],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


# -- running ------------------------------------------------------------------------------------

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
    isolation: str = NOT_ISOLATED  # "bubblewrap" or "none"
    isolation_note: str = ""  # why it was not isolated


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


def _resolve(python: str, path_variable: str | None) -> str | None:
    """The interpreter's absolute path, or None when it cannot be executed."""
    if os.sep in python or (os.altsep and os.altsep in python):
        candidate = os.path.abspath(python)
    else:
        candidate = shutil.which(python, path=path_variable)
    return candidate if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None


def _isolated(how: Isolation, command: list[str], workdir: str, env: dict[str, str], user_path: str | None,
              device: str, memory_limit: int | None, file_size_limit: int | None) -> tuple[list[str], bool]:
    """`command` under bubblewrap (and, on cuda, in a memory-capped cgroup where one can be made);
    whether host memory is capped by that cgroup."""
    python = command[0]
    readable = [os.path.dirname(python), *_interpreter_paths(how.bwrap, python, env.get("PYTHONPATH"))]
    readable += [p for name in ("PYTHONPATH", "LD_LIBRARY_PATH") for p in env.get(name, "").split(os.pathsep) if p]
    if user_path and os.path.exists(user_path):
        # The project, read-only; a file right in the home directory: that file, not the whole home.
        readable.append(workspace_of(user_path) or os.path.abspath(user_path))
    command = bubblewrap_command(how.bwrap, command, workdir, readable=readable, device=device,
                                 tmpfs_size=file_size_limit if how.tmpfs_size else None)
    if device == "cuda" and memory_limit and _memory_scope():
        # RLIMIT_AS would break CUDA (its driver maps far more address space than it uses): a cgroup instead.
        return [shutil.which("systemd-run"), "--user", "--scope", "--quiet", "-p", f"MemoryMax={memory_limit}", "--", *command], True
    return command, False


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
    harness: Path = HARNESS,
    spec_extra: dict | None = None,
) -> RunOutcome:
    """Run `program` under `harness` (default: confirm's; audit passes its own child with `spec_extra` for it)."""
    python = python or sys.executable
    workdir = os.path.realpath(tempfile.mkdtemp(prefix="autograd-lsp-confirm-"))
    _live(workdir, None)
    started = time.perf_counter()
    how = isolation()
    process = None
    try:
        harness_file = harness
        reproducer = os.path.join(workdir, "reproducer.py")
        harness = os.path.join(workdir, "__agl_harness__.py")
        spec_path = os.path.join(workdir, "__agl_spec__.json")
        result_path = os.path.join(workdir, "__agl_result__.json")
        Path(reproducer).write_text(program, encoding="utf-8")
        shutil.copyfile(harness_file, harness)
        user_dir = os.path.dirname(os.path.abspath(user_path)) if user_path and os.path.exists(user_path) else None
        env = scrubbed_environment(workdir)
        command, memory_cgroup = [python, "-B", harness, spec_path], False
        if how.kind == ISOLATED:
            resolved = _resolve(python, env.get("PATH"))
            if resolved is None:
                return RunOutcome(None, None, False, f"cannot start {python}: no such executable", False,
                                  time.perf_counter() - started, workdir, python, extra={"start_error": True},
                                  isolation=how.kind)
            command, memory_cgroup = _isolated(how, [resolved, "-B", harness, spec_path], workdir, env, user_path,
                                               device, memory_limit, file_size_limit)
        spec = {
            "reproducer": reproducer,
            "result": result_path,
            "line_map": {str(k): v for k, v in line_map.items()},
            "probe": probe,
            "device": device,
            "user_dir": user_dir,
            "memory_limit": memory_limit,
            "memory_cgroup": memory_cgroup,
            "file_size_limit": file_size_limit,
            **(spec_extra or {}),
        }
        Path(spec_path).write_text(json.dumps(spec), encoding="utf-8")
        try:
            process = subprocess.Popen(
                command,
                cwd=workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killed as a whole
            )
            _live(workdir, process)
        except OSError as error:
            return RunOutcome(None, None, False, f"cannot start {python}: {error.strerror or error}", False,
                              time.perf_counter() - started, workdir, python, extra={"start_error": True},
                              isolation=how.kind, isolation_note=how.reason)
        capture = _Capture(process.stdout)
        capture.start()
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_group(process.pid)  # under bwrap, its death takes the whole PID namespace with it
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
        died = -process.returncode if process.returncode is not None and process.returncode < 0 else None
        if died is None and how.kind == ISOLATED and process.returncode and process.returncode > 128:
            died = process.returncode - 128  # bwrap reports a child killed by signal N as exit 128 + N
        if died is not None:
            try:
                killed_by = signal.Signals(died).name
            except ValueError:
                killed_by = f"signal {died}"
        return RunOutcome(facts, process.returncode, timed_out, capture.text(), capture.truncated, duration, workdir, python,
                          killed_by, isolation=how.kind, isolation_note=how.reason)
    finally:
        with _LIVE_LOCK:
            _LIVE.pop(workdir, None)
        _end_run(workdir, process)  # (its program still runs only when interrupted: Ctrl-C in the CLI)


# Runs not finished yet: workdir -> its process once started. A cancelled job's thread may still be finishing one
# (a daemon thread, see server/jobs.py) when the server exits; the interpreter does not wait for it.
_LIVE: dict[str, subprocess.Popen | None] = {}
_LIVE_LOCK = threading.Lock()


def _live(workdir: str, process: subprocess.Popen | None) -> None:
    with _LIVE_LOCK:
        _LIVE[workdir] = process


@atexit.register
def _end_live_runs() -> None:
    """At exit, stop what runs are left and delete their directories, as their own `finally` would have done."""
    with _LIVE_LOCK:
        left = list(_LIVE.items())
        _LIVE.clear()
    for workdir, process in left:
        _end_run(workdir, process)


def _end_run(workdir: str, process: subprocess.Popen | None) -> None:
    """Stop a run's program if it still runs (its whole process group) and delete the run's directory."""
    if process is not None and process.returncode is None:
        _kill_group(process.pid)
    shutil.rmtree(workdir, ignore_errors=True)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
