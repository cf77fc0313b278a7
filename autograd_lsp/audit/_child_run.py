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
_USER_BY_REAL_PATH = {os.path.realpath(path): path for path in USER_FILES}
STEPS = max(1, int(SPEC.get("steps", 3)))
LOOP_BUDGET_S = 0.5  # how long a loop without autograd work may run past STEPS iterations
RESULT = {"final": False, "findings": [], "stopped": None, "reached_lines": {}, "loops": {},
          "python": sys.version.split()[0], "executable": sys.executable, "probe_errors": []}
REACHED = {}  # path -> set of lines executed
_LOCK = threading.Lock()
_MAIN = threading.main_thread()


class AuditTimeout(BaseException):
    """The run's own time limit (a little before the parent's hard one), raised in the script's frame."""


def _write(final=False):
    with _LOCK:
        if RESULT["final"] and not final:  # a snapshot must never overwrite the last word
            return
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
    """What the rewritten loops call (the builtin ``__agl_audit__``).

    A loop that did autograd work since it was entered (a backward, ``autograd.grad`` or an optimizer step: a
    training loop, or the data stream feeding one) stops after ``steps`` iterations. One that did none (building
    layers from a list of sizes, reading a vocabulary) runs on past them until it has taken LOOP_BUDGET_S, so the
    model and data it builds stay the script's own; a slow loop without autograd stops after ``steps``."""

    def __init__(self, steps, budget_s):
        self.steps = steps
        self.budget_s = budget_s
        self.step_boundary = None
        self.work = 0  # autograd calls and optimizer steps so far
        self._while = {}
        self._hooked = False

    def _watch_torch(self):
        """Count autograd work, once the script has imported torch (this file never imports it itself)."""
        torch = sys.modules.get("torch")
        autograd = getattr(torch, "autograd", None)
        if autograd is None or not hasattr(autograd, "backward"):
            return
        self._hooked = True
        bound = self
        def counting(real):
            def counted(*args, **kwargs):
                bound.work += 1
                return real(*args, **kwargs)

            counted.__wrapped__ = real
            return counted

        for name in ("backward", "grad"):
            setattr(autograd, name, counting(getattr(autograd, name)))
        try:
            from torch.optim.optimizer import register_optimizer_step_post_hook

            def stepped(optimizer, args, kwargs):
                bound.work += 1

            register_optimizer_step_post_hook(stepped)
        except Exception:  # an older torch: backward alone marks a training loop
            pass

    def _go_on(self, iteration, started, work_at_entry):
        if iteration < self.steps:
            return True
        if self.work > work_at_entry:
            return False
        return time.perf_counter() - started < self.budget_s

    def _boundary(self, site, iteration):
        if not self._hooked:
            self._watch_torch()
        key = "%s:%d" % site
        RESULT["loops"][key] = max(RESULT["loops"].get(key, 0), iteration + 1)
        if self.step_boundary is not None:
            try:
                self.step_boundary(site, iteration)
            except Exception as error:  # a probe's failure must not change what the script does
                _probe_error("step_boundary", error)

    def loop(self, iterable, path, line):
        site = (path, line)
        iterator = iter(iterable)
        started, work_at_entry, iteration = time.perf_counter(), self.work, 0
        while self._go_on(iteration, started, work_at_entry):  # checked before the next item is taken
            try:
                item = next(iterator)
            except StopIteration:
                return
            self._boundary(site, iteration)
            yield item
            iteration += 1

    def enter(self, path, line):
        self._while[(path, line)] = [0, time.perf_counter(), self.work]

    def spin(self, path, line):
        site = (path, line)
        state = self._while.setdefault(site, [0, time.perf_counter(), self.work])
        if not self._go_on(*state):
            return False
        self._boundary(site, state[0])
        state[0] += 1
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


class _BoundingFinder:
    """Modules of the user's project (their files are in USER_FILES) import with their loops bounded too: a
    `train()` in trainer.py called from main.py must not run every epoch."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or not spec.origin or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        # by real path: "lib/x.py" through the working directory's links to the script's folder is the user's file
        user_path = _USER_BY_REAL_PATH.get(os.path.realpath(spec.origin))
        if user_path is not None:
            spec.loader = _BoundingLoader(spec.loader.name, spec.origin, user_path)
        return spec


def _bounding_loader_class():
    import importlib.machinery

    class BoundingLoader(importlib.machinery.SourceFileLoader):
        def __init__(self, fullname, path, user_path):
            super().__init__(fullname, path)
            self.user_path = user_path  # the name its code carries: the user's file as the report names it

        def get_code(self, fullname):  # never the cached bytecode (it holds the unbounded loops)
            tree = ast.parse(self.get_data(self.get_filename(fullname)), self.user_path)
            return compile(bounded(tree, self.user_path), self.user_path, "exec", dont_inherit=True)

    return BoundingLoader


_BoundingLoader = None


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
    if isinstance(error, EOFError) and "input" in _source_line(path, line):
        return "input", "the script reads standard input, which is empty in an audit: %s" % text
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
    namespace["install"](report, USER_FILES)
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
            raise _UnparsedCell(error.msg, (error.lineno or 1) + first_line - 1) from None
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
    bound = Bound(STEPS, float(SPEC.get("loop_budget_s", LOOP_BUDGET_S)))
    builtins.__agl_audit__ = bound
    global _BoundingLoader
    _BoundingLoader = _bounding_loader_class()
    sys.meta_path.insert(0, _BoundingFinder)
    _record_argparse_errors()
    threading.Thread(target=_snapshots, name="agl-audit-snapshots", daemon=True).start()
    started = time.perf_counter()
    RESULT["timings"] = {"child_start_s": round(time.time() - SPEC.get("launched_at", time.time()), 3)}
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
    RESULT["timings"]["probes_s"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    module = types.ModuleType("__main__")
    module.__file__ = SCRIPT
    module.__builtins__ = builtins
    if SPEC.get("notebook"):  # what IPython gives every notebook, that plain Python lacks
        module.__dict__["display"] = _display
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
    RESULT["timings"]["script_s"] = round(time.perf_counter() - started, 3)
    RESULT["torch_version"] = getattr(sys.modules.get("torch"), "__version__", None)
    if failure is not None:
        frames = _frames_of(failure.__traceback__)
        if isinstance(failure, _UnparsedCell):  # the script (or a cell) does not parse: nothing of it ran
            (path, line), reason, message = (SCRIPT, failure.line), "syntax", "SyntaxError: %s" % failure.message
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


class _UnparsedCell(Exception):
    def __init__(self, message, line):
        super().__init__(message)
        self.message, self.line = message, line


def _display(*objects, **options):
    """IPython's display() without a front end: print what a cell would show."""
    for obj in objects:
        print(repr(obj))


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
