"""The audit child: runs the user's script (or a notebook's cells in order) with its loops bounded, under the probes.

    python -B _child_run.py SPEC.json

``sandbox.run`` copies this file into the run's temporary directory and runs it there with the configured
interpreter; the parent never imports it. Pure stdlib: only the probes (``_child_probes.py``, whose text comes in
the spec) import torch. It writes a JSON document to ``spec["result"]``::

    {"final": bool, "findings": [{code, path, line, message, evidence}], "stopped": {reason, path, line, message} | null,
     "reached_lines": {path: [line, ...]}, "loops": {"path:line": iterations}, ...}

and rewrites it every half second while the script runs, so that a run killed from outside (the parent's
timeout, the memory limit) still tells what it observed and where it was.
Keep it runnable on any Python 3.8+: the user's interpreter runs it.
"""
import argparse
import ast
import builtins
import errno
import itertools
import json
import os
import signal
import sys
import threading
import time
import traceback
import types

SPEC = json.load(open(sys.argv[1], encoding="utf-8"))


def _limit_resources():
    """Set first, before torch loads (as confirm's harness does): the child limits itself."""
    import resource

    limit = SPEC.get("memory_limit")
    if limit and SPEC.get("device") != "cuda":
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    elif limit and not SPEC.get("memory_cgroup"):
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))  # CUDA maps far more address space than it uses
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    file_limit = SPEC.get("file_size_limit")
    if file_limit:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))


_limit_resources()
SCRIPT = SPEC["script"]
USER_FILES = set(SPEC.get("user_files") or [SCRIPT])
STEPS = max(1, int(SPEC.get("steps", 3)))
RESULT = {"final": False, "findings": [], "stopped": None, "reached_lines": {}, "loops": {},
          "python": sys.version.split()[0], "executable": sys.executable, "probe_errors": []}
REACHED = {}  # path -> set of lines executed
_LOCK = threading.Lock()
_MAIN = threading.main_thread()


class AuditTimeout(BaseException):
    """The run's own time limit (a little before the parent's hard one), raised in the script's frame."""


def _write(final=False):
    with _LOCK:
        RESULT["final"] = final
        RESULT["reached_lines"] = {path: sorted(lines) for path, lines in list(REACHED.items())}
        try:
            text = json.dumps(RESULT, default=repr)
        except (RuntimeError, ValueError):  # changed while read from the snapshot thread: next time
            return
        path = SPEC["result"]
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(path + ".tmp", path)


def report(code, path, line, message, evidence=""):
    """One finding of the probes (path/line: a line of the user's files)."""
    key = (str(code), str(path), int(line) if line else 0)
    for seen in RESULT["findings"]:
        if (seen["code"], seen["path"], seen["line"]) == key:
            return
    RESULT["findings"].append({"code": key[0], "path": key[1], "line": key[2], "message": str(message)[:2000],
                               "evidence": str(evidence)[:4000]})


# -- reached lines ---------------------------------------------------------------------------------------------
def _local_trace(frame, event, arg):
    if event == "line":
        REACHED[frame.f_code.co_filename].add(frame.f_lineno)
    return _local_trace


def _global_trace(frame, event, arg):
    filename = frame.f_code.co_filename
    if filename in USER_FILES:
        REACHED.setdefault(filename, set())
        return _local_trace
    return None


def _innermost_user_frame(frames):
    """(path, line) of the last frame in the user's files among `frames` (outermost first)."""
    for filename, lineno in reversed(frames):
        if filename in USER_FILES:
            return filename, lineno
    return None, None


def _where_now():
    frame = sys._current_frames().get(_MAIN.ident)
    frames = []
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return _innermost_user_frame(list(reversed(frames)))


def _snapshots():
    while True:
        time.sleep(0.5)
        if RESULT["final"]:
            return
        path, line = _where_now()
        with _LOCK:
            RESULT["running_at"] = {"path": path, "line": line}
        try:
            _write()
        except OSError:
            pass


# -- loop bounding -----------------------------------------------------------------------------------------------
class Bound:
    """What the rewritten loops call (the builtin ``__agl_audit__``)."""

    def __init__(self, steps):
        self.steps = steps
        self.step_boundary = None
        self._while = {}

    def _boundary(self, site, iteration):
        key = "%s:%d" % site
        RESULT["loops"][key] = max(RESULT["loops"].get(key, 0), iteration + 1)
        if self.step_boundary is not None:
            try:
                self.step_boundary(site, iteration)
            except Exception as error:  # a probe's failure must not change what the script does
                _probe_error("step_boundary", error)

    def loop(self, iterable, path, line):
        site = (path, line)
        for iteration, item in enumerate(itertools.islice(iterable, self.steps)):
            self._boundary(site, iteration)
            yield item

    def enter(self, path, line):
        self._while[(path, line)] = 0

    def spin(self, path, line):
        site = (path, line)
        iteration = self._while.get(site, 0)
        if iteration >= self.steps:
            return False
        self._while[site] = iteration + 1
        self._boundary(site, iteration)
        return True


class _Bounder(ast.NodeTransformer):
    """`for x in it:` -> `for x in __agl_audit__.loop(it, path, line):`; `while c:` -> `__agl_audit__.enter(...)`
    then `while (c) and __agl_audit__.spin(path, line):`. New nodes take the loop's own line, so every line
    keeps its number (tracebacks, findings and reached lines stay the user's)."""

    def __init__(self, path):
        self.path = path

    def _call(self, method, args, at):
        call = ast.Call(func=ast.Attribute(value=ast.Name(id="__agl_audit__", ctx=ast.Load()), attr=method, ctx=ast.Load()),
                        args=args + [ast.Constant(self.path), ast.Constant(at.lineno)], keywords=[])
        return ast.fix_missing_locations(ast.copy_location(call, at))

    def visit_For(self, node):
        self.generic_visit(node)
        node.iter = self._call("loop", [node.iter], node)
        return node

    def visit_While(self, node):
        self.generic_visit(node)
        spin = self._call("spin", [], node)
        node.test = ast.copy_location(ast.BoolOp(op=ast.And(), values=[node.test, spin]), node.test)
        enter = ast.copy_location(ast.Expr(value=self._call("enter", [], node)), node)
        return [enter, node]


def bounded(tree, path):
    return ast.fix_missing_locations(_Bounder(path).visit(tree))


# -- stop reasons ------------------------------------------------------------------------------------------------
ARGPARSE_ERRORS = []
_GPU_WORDS = ("not compiled with cuda", "no cuda gpus", "nvidia driver", "cuda driver", "cuda is not available",
              "no kernel image", "cuda error: no", "found no nvidia", "cuda_home")
_MEMORY_WORDS = ("out of memory", "can't allocate memory", "cannot allocate memory", "not enough memory")
_CODE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")


def _record_argparse_errors():
    real = argparse.ArgumentParser.error

    def error(self, message):
        ARGPARSE_ERRORS.append(message)
        return real(self, message)

    argparse.ArgumentParser.error = error


def _frames_of(tb):
    return [(frame.f_code.co_filename, lineno) for frame, lineno in traceback.walk_tb(tb)]


def _source_line(path, line):
    text = SOURCES.get(path, "").split("\n")
    return text[line - 1] if path and line and 0 < line <= len(text) else ""


def stop_reason(error, frames):
    """(reason, message) for what ended the script early."""
    name = type(error).__name__
    text = "%s: %s" % (name, error)
    lowered = str(error).lower()
    path, line = _innermost_user_frame(frames)
    if isinstance(error, AuditTimeout):
        return "timeout", "the run took longer than %gs" % SPEC.get("timeout", 0)
    if isinstance(error, SystemExit):
        if ARGPARSE_ERRORS:
            return "argument", "the script's arguments were rejected: %s" % ARGPARSE_ERRORS[-1]
        return "exit", "the script exited with status %r" % (error.code,)
    if isinstance(error, MemoryError) or any(word in lowered for word in _MEMORY_WORDS):
        return "memory", text
    if any(word in lowered for word in _GPU_WORDS) or ("cuda" in lowered and "available" in lowered):
        return "gpu", text
    if isinstance(error, IndexError) and "argv" in _source_line(path, line):
        return "argument", "the script reads an argument it was not given (%s); pass it after `--`" % text
    if isinstance(error, OSError) and getattr(error, "errno", None) == errno.ENOENT:
        filename = str(getattr(error, "filename", "") or "")
        if not filename.endswith(_CODE_SUFFIXES):
            return "data", "a file the script reads is missing: %s" % (filename or error)
    if isinstance(error, OSError) and getattr(error, "errno", None) in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "write", "the sandbox refused a write outside the run's temporary directory: %s" % text
    if name in ("URLError", "ConnectionError", "gaierror", "HTTPError", "MaxRetryError") or "name or service not known" in lowered \
            or "network is unreachable" in lowered or "temporary failure in name resolution" in lowered:
        return "data", "the script tried to download something (no network in the sandbox): %s" % text
    if isinstance(error, ModuleNotFoundError):
        return "import", text
    if isinstance(error, RuntimeError) and "dataset not found" in lowered:
        return "data", text
    return "exception", text


# -- running -----------------------------------------------------------------------------------------------------
SOURCES = {}


def _probe_error(where, error):
    RESULT["probe_errors"].append("%s: %s: %s" % (where, type(error).__name__, str(error)[:500]))


def _load_probes(bound):
    text = SPEC.get("probes")
    if not text:
        return {}
    namespace = {"__name__": "__agl_audit_probes__", "__builtins__": builtins}
    exec(compile(text, "<autograd-lsp audit probes>", "exec"), namespace)
    namespace["install"](report, set(USER_FILES))
    bound.step_boundary = namespace.get("step_boundary")
    return namespace


def _cells():
    """(first line, text) of each part to run: the script whole, or each notebook cell."""
    return [(cell["first_line"], cell["text"]) for cell in SPEC["cells"]]


def _run_cells(module):
    for index, (first_line, text) in enumerate(_cells()):
        try:
            tree = ast.parse(text, SCRIPT)
        except SyntaxError as error:
            lineno = (error.lineno or 1) + first_line - 1
            raise SyntaxError("%s (line %d)" % (error.msg, lineno)) from None
        if first_line > 1:
            ast.increment_lineno(tree, first_line - 1)
        code = compile(bounded(tree, SCRIPT), SCRIPT, "exec")
        RESULT["cells_run"] = index + 1
        exec(code, module.__dict__)


def main():
    script_dir = os.path.dirname(SCRIPT)
    sys.path[0] = script_dir
    SOURCES[SCRIPT] = "\n".join(text for _, text in _cells())
    _mirror_script_folder(script_dir)
    bound = Bound(STEPS)
    builtins.__agl_audit__ = bound
    _record_argparse_errors()
    threading.Thread(target=_snapshots, name="agl-audit-snapshots", daemon=True).start()
    started = time.perf_counter()
    probes = {}
    try:
        if SPEC.get("device") == "cuda":
            _check_cuda()
        probes = _load_probes(bound)
    except _NoGPU as error:
        RESULT["stopped"] = {"reason": "gpu", "path": None, "line": None, "message": str(error)}
        return
    except BaseException as error:  # noqa: BLE001 - the probes failing to load (torch missing...) stops the audit
        reason = "torch-missing" if isinstance(error, ImportError) else "probes"
        RESULT["stopped"] = {"reason": reason, "path": None, "line": None, "message": "%s: %s" % (type(error).__name__, error)}
        return
    module = types.ModuleType("__main__")
    module.__file__ = SCRIPT
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    sys.argv = [SCRIPT] + list(SPEC.get("argv") or [])
    failure = None
    timeout = SPEC.get("timeout")
    if timeout and hasattr(signal, "setitimer"):
        def expired(signum, frame):
            raise AuditTimeout()

        signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, max(0.5, float(timeout) - float(SPEC.get("timeout_margin", 2.0))))
    sys.settrace(_global_trace)
    try:
        _run_cells(module)
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            failure = exit_
    except BaseException as error:  # noqa: BLE001 - the user's script may raise anything
        failure = error
    finally:
        sys.settrace(None)
        if hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)
    RESULT["run_s"] = round(time.perf_counter() - started, 3)
    RESULT["torch_version"] = getattr(sys.modules.get("torch"), "__version__", None)
    if failure is not None:
        frames = _frames_of(failure.__traceback__)
        if isinstance(failure, SyntaxError) and not frames[1:]:
            path, line = SCRIPT, failure.lineno
        else:
            path, line = _innermost_user_frame(frames)
        reason, message = stop_reason(failure, frames)
        RESULT["stopped"] = {"reason": reason, "path": path, "line": line, "message": message[:4000],
                             "exception": type(failure).__name__}
    finish = probes.get("finish")
    if finish is not None:
        try:
            finish(failure)
        except BaseException as error:  # noqa: BLE001
            _probe_error("finish", error)
    del failure


class _NoGPU(Exception):
    pass


def _check_cuda():
    import torch

    if not torch.cuda.is_available():
        reason = "--device cuda was asked for but torch.cuda.is_available() is False"
        if torch.version.cuda is None:
            reason += " (torch %s is a CPU-only build)" % torch.__version__
        raise _NoGPU(reason)
    torch.set_default_device("cuda")
    limit = SPEC.get("memory_limit")
    if limit:
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total))
    RESULT["cuda_device"] = torch.cuda.get_device_name(0)


def _mirror_script_folder(script_dir):
    """Under bubblewrap, the working directory (the run's writable temporary directory) gets a link to each entry
    of the script's folder: relative data paths read as they would from there, and new files land in the temporary
    directory. The links are read-only under the sandbox; without it none are made (a write would reach the user's
    files through them)."""
    if not SPEC.get("mirror") or not script_dir or not os.path.isdir(script_dir):
        return
    here = os.getcwd()
    try:
        names = os.listdir(script_dir)
    except OSError:
        return
    for name in names:
        target = os.path.join(here, name)
        if not os.path.lexists(target):
            try:
                os.symlink(os.path.join(script_dir, name), target)
            except OSError:
                pass


if __name__ == "__main__":
    try:
        main()
    except BaseException as error:  # noqa: BLE001 - report the child's own failures as facts too
        RESULT["child_error"] = "".join(traceback.format_exception(type(error), error, error.__traceback__))[-4000:]
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        _write(final=True)
        os._exit(0)
