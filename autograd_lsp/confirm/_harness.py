"""The confirm harness: runs one reproducer under instrumentation, in a child process.

    python -B _harness.py SPEC.json

This file is copied into the run's temporary directory and executed there by the configured
interpreter; the analyzer and the language server never import it (it is the only place that
imports torch). It reports *facts* as JSON in ``spec["result"]`` — the exception the program
raised (with its frames mapped back to the user's lines), the warnings it emitted, whether the
flagged statement ran, and what the rule's probe measured. ``verdict.py`` in the parent process
turns those facts into a status.

Instrumentation the reproducer calls (it is installed as the builtin ``__agl__``):
``__agl__.before()`` / ``__agl__.after()`` around the flagged statement, ``__agl__.bound(it, n)``
for bounded loops, ``__agl__.track_class(C)`` after a class whose instances a probe inspects.
"""
import builtins
import copy
import itertools
import json
import math
import os
import re
import sys
import time
import traceback
import types
import warnings

SPEC = json.load(open(sys.argv[1], encoding="utf-8"))


def _limit_resources():
    """Set first, before torch loads: the child limits itself (a preexec_fn is unsafe in the
    threaded language server). Children the program starts (os.system…) inherit the limits."""
    import resource

    limit = SPEC.get("memory_limit")
    if limit and SPEC.get("device") != "cuda":
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    elif limit and not SPEC.get("memory_cgroup"):
        # CUDA maps far more address space than it uses, so RLIMIT_AS would break it; RLIMIT_DATA counts
        # only the private writable memory (the heap, anonymous maps): host memory stays capped.
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    file_limit = SPEC.get("file_size_limit")
    if file_limit:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))


_limit_resources()
REPRO = SPEC["reproducer"]
LINE_MAP = {int(k): v for k, v in SPEC.get("line_map", {}).items()}
RESULT = {"python": sys.version.split()[0], "executable": sys.executable, "reached": 0, "warnings": [], "probe": None}
MISSING = object()
_MAX_WARNINGS = 40


class _Stop(BaseException):
    """A decisive probe has seen enough: end the program."""


def _write_result():
    path = SPEC["result"]
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(RESULT, handle, default=repr)
    os.replace(tmp, path)


def user_line(lineno):
    """The user's line for a line of the reproducer (None for synthesized code)."""
    return LINE_MAP.get(lineno) or None


def _user_frame():
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != REPRO:
        frame = frame.f_back
    return frame


def _frame_user_line(frame):
    return user_line(frame.f_lineno) if frame is not None else None


def _eval(expr, frame):
    if frame is None or not expr:
        return MISSING
    try:
        return eval(expr, frame.f_globals, dict(frame.f_locals))
    except Exception:
        return MISSING


def _mro_names(obj):
    return [cls.__name__ for cls in type(obj).__mro__]


class Hooks:
    """The instrumentation. One instance per run, reached from the reproducer as ``__agl__``."""

    def __init__(self, torch, spec):
        self.torch = torch
        self.cfg = spec.get("probe") or {}
        self.name = self.cfg.get("name")
        self.outcome = None  # {"state": symptom|clean|inconclusive, "detail": str, "line": int|None}
        self.completed = False
        self._tracked = []
        self._real_backward = None
        self._watch = []  # AG008
        self._flipped = []  # AG014
        self._sizes = []  # AG015
        self._consumed = {}  # AG016
        self._steps = 0
        self._backwards = 0
        self._stale = None  # AG002
        self._mode = None  # AG012
        self._poisoned = None
        self._quiet = False  # the probe's own torch calls are not the program's reads
        self._lines = _source_lines()
        setup = getattr(self, "_setup_" + (self.name or ""), None)
        if setup is not None:
            setup()

    # -- reproducer entry points ------------------------------------------------------------
    def bound(self, iterable, limit):
        return itertools.islice(iterable, limit)

    def fake_dataset(self, name, shape, classes, train=True):
        """A stand-in for a dataset that would download or read files: random images, random labels."""
        torch = self.torch
        generator = torch.Generator(device="cpu").manual_seed(0 if train else 1)
        count = 64
        images = torch.rand((count, *shape), generator=generator)
        labels = torch.randint(0, classes, (count,), generator=generator)
        return torch.utils.data.TensorDataset(images, labels)

    def before(self):
        RESULT["reached"] += 1
        hook = getattr(self, "_before_" + (self.name or ""), None)
        if hook is not None and self.outcome is None:
            hook(_user_frame())

    def after(self):
        hook = getattr(self, "_after_" + (self.name or ""), None)
        if hook is not None and self.outcome is None:
            hook(_user_frame())

    def caught(self):
        """Called first thing in every `except` block of the reproducer: the program caught this."""
        error = sys.exc_info()[1]
        if isinstance(error, _Stop):  # a bare `except:` must not swallow a probe's verdict
            raise error
        raised = RESULT.setdefault("raised", [])
        if isinstance(error, Exception) and len(raised) < _MAX_CAUGHT:
            lines = [f["user_line"] for f in _frames(error.__traceback__) if f["user_line"]]
            raised.append({"types": _mro_names(error), "message": str(error)[:2000], "user_line": lines[-1] if lines else None})

    def track_class(self, cls):
        if self.name != "module_attribute" or not isinstance(cls, type):
            return
        self._tracked.append(cls)
        original = cls.__dict__.get("__init__")
        if original is None:
            return
        hooks = self

        def __init__(self, *args, **kwargs):
            original(self, *args, **kwargs)
            if hooks.outcome is None:
                hooks._check_module(self, _user_frame())

        __init__.__wrapped__ = original
        cls.__init__ = __init__

    # -- verdicts -------------------------------------------------------------------------
    def conclude(self, state, detail, stop=True, frame=None):
        if self.outcome is not None:
            return
        self.outcome = {"state": state, "detail": detail, "line": _frame_user_line(frame)}
        if stop:
            raise _Stop()

    def finish(self):
        """End-of-program checks for probes that decide only once the program has run."""
        if self.outcome is not None or self.name is None:
            return
        end = getattr(self, "_finish_" + self.name, None)
        if end is not None:
            try:
                end()
            except _Stop:
                pass

    # -- helpers ----------------------------------------------------------------------------
    def _tensor(self, value):
        return value if isinstance(value, self.torch.Tensor) else None

    def _snapshot(self, tensor):
        with self.torch.no_grad():
            return tensor.detach().clone()

    def _same(self, a, b):
        try:
            return a.shape == b.shape and a.dtype == b.dtype and bool(self.torch.equal(a.cpu(), b.cpu()))
        except Exception:
            return False

    def _install_backward_wrapper(self, before, after):
        autograd = self.torch.autograd
        real = autograd.backward
        self._real_backward = real

        def backward(*args, **kwargs):
            token = before()
            result = real(*args, **kwargs)
            after(token)
            return result

        backward.__wrapped__ = real
        autograd.backward = backward

    def _step_pre_hook(self, hook):
        from torch.optim.optimizer import register_optimizer_step_pre_hook

        register_optimizer_step_pre_hook(hook)

    def _step_post_hook(self, hook):
        from torch.optim.optimizer import register_optimizer_step_post_hook

        register_optimizer_step_post_hook(hook)

    # -- AG002: the composed tensor keeps its value while its sources change, and is used ------
    # A stale tensor nothing reads again harms nothing: the symptom is a forward that computed with it
    # between two optimizer steps while its sources moved.
    def _setup_stale_composed(self):
        self._composed = None  # the composed tensor (known from the first step on)
        self._uses = 0  # ops that read it since the last step
        self._stale_unused = None
        if self.cfg.get("composed") and self.cfg.get("sources"):
            self._step_post_hook(self._stale_after_step)
            self._watch_reads()

    def _read_stale_composed(self, func, args, kwargs):
        composed = self._composed
        if composed is None or getattr(func, "__name__", "") in _METADATA:
            return
        storage = composed.untyped_storage().data_ptr()
        for operand in itertools.chain(_tensors_in(args, self.torch), _tensors_in(kwargs.values(), self.torch)):
            try:
                if operand is composed or operand.untyped_storage().data_ptr() == storage:
                    self._uses += 1
                    return
            except Exception:
                continue

    def _stale_after_step(self, optimizer, args, kwargs):
        self._quiet = True
        try:
            self._stale_check()
        finally:
            self._quiet = False

    def _stale_check(self):
        frame = _user_frame()
        composed = self._tensor(_eval(self.cfg["composed"], frame))
        sources = [self._tensor(_eval(name, frame)) for name in self.cfg["sources"]]
        sources = [(name, s) for name, s in zip(self.cfg["sources"], sources) if s is not None]
        uses, self._uses = self._uses, 0
        self._composed = composed
        if composed is None or not sources:
            return
        now = (self._snapshot(composed), [(name, self._snapshot(s)) for name, s in sources])
        previous, self._stale = self._stale, now
        if previous is None:
            return
        changed = [name for (name, old), (_, new) in zip(previous[1], now[1]) if not self._same(old, new)]
        if not changed:
            return
        name = self.cfg["composed"]
        if not self._same(previous[0], now[0]):
            self.conclude("clean", f"{name} was recomputed after {', '.join(changed)} changed", frame=frame)
        if uses:
            self.conclude(
                "symptom",
                f"{name} kept its value across optimizer.step() while {', '.join(changed)} changed, and the forward "
                f"between the steps computed with it ({uses} op(s)): the composed tensor is stale (built once, never recomputed)",
                frame=frame,
            )
        self._stale_unused = f"{name} kept its value while {', '.join(changed)} changed, but nothing computed with it between the steps"

    def _finish_stale_composed(self):
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        if self._stale_unused:
            self.conclude("clean", self._stale_unused, stop=False)

    # -- AG007: the alias under no_grad is read as a frozen copy after the tensor changed -------
    # `b = a` under no_grad leaves b.requires_grad True: true of every alias, harmless ones included. The
    # harm is reading b (as the snapshot it was meant to be) after an in-place update changed a.
    def _after_requires_grad_alias(self, frame):
        tensors = [(name, self._tensor(_eval(name, frame))) for name in self.cfg.get("aliases", [])]
        tensors = [(name, t) for name, t in tensors if t is not None]
        if not tensors:
            return
        tracked = [(name, t) for name, t in tensors if t.requires_grad]
        if not tracked:
            self.conclude("clean", f"{', '.join(name for name, _ in tensors)} does not require grad", frame=frame)
        # Made again (a loop): a new alias of the tensor as it is now.
        self._aliases = [(name, t, t._version, self._snapshot(t), re.compile(r"(?<![\w.])" + re.escape(name) + r"\b"))
                         for name, t in tracked]
        self._watch_reads()

    def _read_requires_grad_alias(self, func, args, kwargs):
        if getattr(func, "__name__", "") in _METADATA:
            return
        operands = list(_tensors_in(args, self.torch)) + list(_tensors_in(kwargs.values(), self.torch))
        for name, tensor, version, values, pattern in self._aliases:
            if not any(operand is tensor for operand in operands) or tensor._version == version:
                continue
            frame = _user_frame()
            line = frame.f_lineno if frame is not None else None
            text = self._lines[line - 1] if line and line <= len(self._lines) else ""
            if not pattern.search(text):
                continue
            self._quiet = True
            try:
                moved = not self._same(values, tensor.detach())
            finally:
                self._quiet = False
            if moved:
                self.conclude(
                    "symptom",
                    f"{name} was read after an in-place update changed the tensor it names (version {version} -> "
                    f"{tensor._version}): the assignment under no_grad made a second name, not a frozen copy, so {name} "
                    "holds the current values and is still tracked by autograd",
                    frame=frame,
                )

    def _finish_requires_grad_alias(self):
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        if getattr(self, "_aliases", None):
            names = ", ".join(a[0] for a in self._aliases)
            self.conclude("clean", f"{names} is a plain alias (still requires grad), but it was never read after the tensor changed", stop=False)

    # -- AG008: a change through .data that a pending backward() then computes with ---------
    # The mechanism (.data changes values without bumping _version) is true of every .data write, correct
    # ones included; what confirms is the harm: a graph saved the tensor before the change, and the
    # backward() of that graph gives a different gradient than at the values the forward used.
    def _setup_data_invisible(self):
        self._invisible = []  # (expr, tensor, values before, graph nodes that saved it)
        self._unsaved = []  # exprs changed through .data while no pending graph had saved them
        self._reads = []  # (target, value, source name, |d reference / d source|) for `v = f(x.data)`
        self._fed = []  # autograd nodes computed from a value read through .data
        self._missing = []  # reads a backward() went through (their source got no gradient from them)
        self._step_pre_hook(self._data_before_step)
        hooks = self
        real = self.torch.autograd.backward

        def backward(*args, **kwargs):
            if hooks.outcome is None and (hooks._invisible or hooks._fed):
                roots = args[0] if args else kwargs.get("tensors")
                grads = args[1] if len(args) > 1 else kwargs.get("grad_tensors")
                hooks._judge_data_backward(roots, grads)
            return real(*args, **kwargs)

        backward.__wrapped__ = real
        self.torch.autograd.backward = backward

    def _before_data_invisible(self, frame):
        self._watch = []
        for expr in self.cfg.get("exprs", []):
            tensor = self._tensor(_eval(expr, frame))
            if tensor is not None and all(tensor is not w[1] for w in self._watch):
                self._watch.append((expr, tensor, tensor._version, self._snapshot(tensor)))

    def _after_data_invisible(self, frame):
        read = self.cfg.get("read")
        if read:
            self._note_data_read(read, frame)
        for expr, tensor, version, values in self._watch:
            if self._same(values, tensor.detach()):
                continue
            # (A version bump does not mean autograd saw it: `c = out.data; c.zero_()` bumps c's counter,
            # not the one out's graph checks. The gradient comparison decides; a check autograd makes raises.)
            savers = self._graphs_saving(tensor, frame)
            if savers:
                if all(tensor is not r[1] for r in self._invisible):
                    self._invisible.append((expr, tensor, values, savers))
            elif expr not in self._unsaved:
                self._unsaved.append(expr)

    def _note_data_read(self, read, frame):
        """`v = f(x.data)`: does v depend on x, had autograd seen it? (the reference f(x), under the same
        grad mode and random state). Only then can a backward() through v miss a gradient."""
        torch = self.torch
        value = self._tensor(_eval(read["target"], frame))
        if value is None or not torch.is_grad_enabled():
            return
        if read["reference"] in read["sources"]:
            # `c = x.data`: a second name for x's storage that autograd does not watch; a later change through
            # it is judged like one at this line, against the graphs pending now.
            savers = self._graphs_saving(value, frame)
            if savers and all(value is not r[1] for r in self._invisible):
                self._invisible.append((f"{read['target']} (= {read['reference']}.data)", value, self._snapshot(value), savers))
            return
        state = torch.get_rng_state()
        self._quiet = True
        try:
            reference = self._tensor(_eval(read["reference"], frame))
        finally:
            torch.set_rng_state(state)
            self._quiet = False
        if reference is None or reference.grad_fn is None:
            return
        for name in read["sources"]:
            source = self._tensor(_eval(name, frame))
            if source is None or not source.requires_grad:
                continue
            try:
                (grad,) = torch.autograd.grad(reference, source, torch.ones_like(reference), allow_unused=True)
            except Exception:
                continue
            size = float(grad.abs().sum()) if grad is not None else 0.0
            if size > 0 and all(value is not r[1] for r in self._reads):
                self._reads.append((read["target"], value, name, source, size, _frame_user_line(frame)))
                if value.grad_fn is not None:
                    self._fed.append((value.grad_fn, len(self._reads) - 1))
                self._watch_reads()

    def _data_before_step(self, optimizer, args, kwargs):
        """A missing gradient term harms only a tensor being trained: one optimizer.step() updates."""
        if self.outcome is not None or not self._missing:
            return
        trained = {id(p) for group in optimizer.param_groups for p in group["params"]}
        for index in self._missing:
            target, _, name, source, size, line = self._reads[index]
            if id(source) in trained:
                at = f" at line {line}" if line else ""
                self.conclude(
                    "symptom",
                    f"{target} was computed from {name}.data{at} and backward() went through it, so optimizer.step() "
                    f"updated {name} without the gradient through {target} (d{target}/d{name}: sum |.| = {size:.4g} "
                    "had autograd seen it)",
                    frame=_user_frame(),
                )

    def _result_data_invisible(self, args, kwargs, result):
        """Track what is computed from a value read through .data (autograd nodes it feeds)."""
        torch = self.torch
        outputs = [r for r in (result if isinstance(result, (list, tuple)) else (result,)) if isinstance(r, torch.Tensor) and r.grad_fn is not None]
        if not outputs:
            return
        operands = list(_tensors_in(args, torch)) + list(_tensors_in(kwargs.values(), torch))
        for index, (_, value, *_rest) in enumerate(self._reads):
            if any(operand is value for operand in operands):
                self._fed.extend((out.grad_fn, index) for out in outputs)
                del self._fed[:-10000]

    def _graphs_saving(self, tensor, frame):
        """Nodes of the pending graphs reachable from the frame's tensors that saved `tensor`'s storage."""
        torch = self.torch
        storage = tensor.untyped_storage().data_ptr()
        roots = []
        for scope in (frame.f_locals, frame.f_globals) if frame is not None else ():
            for value in list(scope.values()):
                for item in (value if isinstance(value, (list, tuple)) else (value,)):
                    if isinstance(item, torch.Tensor) and item.grad_fn is not None:
                        roots.append(item.grad_fn)
        savers = []
        for node in _graph_nodes(roots):
            for attr in dir(node):
                if not attr.startswith("_saved_"):
                    continue
                try:
                    saved = getattr(node, attr)
                except Exception:  # freed by an earlier backward(): that graph is not pending
                    continue
                for item in (saved if isinstance(saved, (list, tuple)) else (saved,)):
                    if isinstance(item, torch.Tensor) and item.untyped_storage().data_ptr() == storage:
                        savers.append(node)
        return savers

    def _judge_data_backward(self, roots, grads):
        torch = self.torch
        roots = [roots] if isinstance(roots, torch.Tensor) else list(roots or ())
        if grads is not None:
            grads = [grads] if isinstance(grads, torch.Tensor) else list(grads)
        nodes = _graph_nodes([r.grad_fn for r in roots if isinstance(r, torch.Tensor)])
        ids = {id(node) for node in nodes}
        frame = _user_frame()
        for index in sorted({index for node, index in self._fed if id(node) in ids}):
            if index not in self._missing:
                self._missing.append(index)
        for expr, tensor, values, savers in self._invisible:
            if not any(id(node) in ids for node in savers) or self._same(values, tensor.detach()):
                continue
            leaves = [n.variable for n in nodes if type(n).__name__ == "AccumulateGrad"]
            if not leaves:
                continue
            try:
                actual = torch.autograd.grad(roots, leaves, grads, retain_graph=True, allow_unused=True)
                changed = tensor.detach().clone()
                with torch.no_grad():
                    tensor.data.copy_(values)  # the values the forward saw; .data: no version bump
                try:
                    reference = torch.autograd.grad(roots, leaves, grads, retain_graph=True, allow_unused=True)
                finally:
                    with torch.no_grad():
                        tensor.data.copy_(changed)
            except Exception:  # e.g. a non-scalar root: the real backward() reports it
                continue
            worst, where = 0.0, None
            for leaf, a, r in zip(leaves, actual, reference):
                a = torch.zeros_like(leaf) if a is None else a
                r = torch.zeros_like(leaf) if r is None else r
                error = float((a - r).abs().max()) if a.numel() else 0.0
                if not torch.allclose(a, r, rtol=1e-5, atol=1e-7) and error >= worst:
                    worst, where = error, leaf
            if where is not None:
                self.conclude(
                    "symptom",
                    f"{expr} was changed through .data after the forward saved it, and backward() computed with the "
                    f"changed values: the gradient of {_name_of(where, frame) or 'a leaf'} is off by up to {worst:.4g} from the "
                    "gradient at the values the forward used (autograd's version counter did not see the change)",
                    frame=frame,
                )
            self.conclude("clean", f"{expr} was changed through .data after the forward saved it, but the gradient "
                                   "backward() computed is the same as at the values the forward used", frame=frame)

    def _finish_data_invisible(self):
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        if self._missing:
            target, _, name, *_ = self._reads[self._missing[0]]
            self.conclude("clean", f"{target} was computed from {name}.data and backward() went through it, but no "
                                   f"optimizer trains {name}: a constant on purpose", stop=False)
        if self._reads:
            target, _, name, *_ = self._reads[0]
            self.conclude("clean", f"{target} was computed from {name}.data, but no backward() went through it", stop=False)
        if self._invisible:
            names = ", ".join(r[0] for r in self._invisible)
            self.conclude("clean", f"{names} changed through .data after a forward saved it, but that graph was never backpropagated", stop=False)
        elif self._unsaved:
            names = ", ".join(self._unsaved)
            self.conclude("clean", f"{names} changed through .data while no pending graph had saved it: "
                                   "the next forward computes with the new values (no wrong gradient)", stop=False)
        elif self._watch:
            names = ", ".join(w[0] for w in self._watch)
            self.conclude("clean", f"{names} did not change through .data at the flagged line", stop=False)

    # -- AG009: a plain tensor attribute is left behind by module.to() ---------------------
    def _check_module(self, module, frame=None):
        torch = self.torch
        attr = self.cfg.get("attr")
        cls = type(module).__name__
        value = getattr(module, attr, MISSING) if attr else MISSING
        if not attr:
            self.conclude("inconclusive", f"which attribute of {cls} to check is unknown (no `self.x = ...` at the flagged line)", frame=frame)
        if not isinstance(value, torch.Tensor):
            self.conclude("clean", f"{cls}.{attr} is not a tensor attribute ({type(value).__name__ if value is not MISSING else 'not set'})", frame=frame)
        registered = attr in getattr(module, "_parameters", {}) or attr in getattr(module, "_buffers", {})
        try:
            moved = copy.deepcopy(module)
            moved.to("meta")
            after = getattr(moved, attr)
        except Exception as error:  # non-leaf tensors refuse deepcopy; judge by registration then
            if registered:
                self.conclude("clean", f"{cls}.{attr} is a registered buffer/parameter", frame=frame)
            self.conclude(
                "symptom",
                f"{cls}.{attr} is a plain tensor attribute, not a registered buffer or parameter: module.to() "
                f"skips it (could not move a copy: {type(error).__name__})",
                frame=frame,
            )
        if isinstance(after, torch.Tensor) and after.device.type != "meta":
            self.conclude("symptom", f"{cls}.{attr} stayed on {after.device} after module.to('meta') moved the module's parameters and buffers", frame=frame)
        self.conclude("clean", f"{cls}.{attr} moved with the module (module.to('meta'))", frame=frame)

    def _finish_module_attribute(self):
        for cls in self._tracked:
            try:
                instance = cls()
            except Exception as error:
                self.conclude("inconclusive", f"{cls.__name__} was never instantiated and {cls.__name__}() failed: {type(error).__name__}: {error}", stop=False)
                return
            if self.outcome is None:
                self._check_module(instance)
        if self.outcome is None:
            self.conclude("inconclusive", "the module class was never instantiated", stop=False)

    # -- AG010: backward() through non-differentiable ops gives all-zero gradients ----------
    def _before_zero_grads(self, frame):
        value = self._tensor(_eval(self.cfg.get("target"), frame))
        self._leaves = []
        if value is None or value.grad_fn is None:
            return
        seen, stack = set(), [value.grad_fn]
        while stack and len(seen) < 100000:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            leaf = getattr(node, "variable", None)
            if leaf is not None:
                grad = leaf.grad
                self._leaves.append((leaf, None if grad is None else self._snapshot(grad)))
            stack.extend(child for child, _ in getattr(node, "next_functions", ()))

    def _after_zero_grads(self, frame):
        leaves = getattr(self, "_leaves", [])
        if not leaves:
            return
        target = self.cfg.get("target")
        for leaf, before in leaves:
            grad = leaf.grad
            if grad is None:
                continue
            delta = grad.detach() - before if before is not None else grad.detach()
            if bool((delta != 0).any()):
                self.conclude("clean", f"backward() of {target} gave non-zero gradients", frame=frame)
        self.conclude(
            "symptom",
            f"backward() of {target} gave all-zero gradients to its {len(leaves)} leaf tensor(s): "
            "the loss reaches them only through non-differentiable ops",
            frame=frame,
        )

    # -- AG012: values read before they were written --------------------------------------
    def _before_uninitialized_read(self, frame):
        sizes = self.cfg.get("size_args")
        if sizes is None:
            return
        values = [_eval(expr, frame) for expr in sizes]

        def is_size(v):
            return isinstance(v, int) and not isinstance(v, bool) or isinstance(v, (tuple, list, self.torch.Size)) and all(isinstance(i, int) for i in v)

        if not values or not all(is_size(v) for v in values):
            self.cfg["uninit"] = False  # torch.Tensor(data): a copy of data, not uninitialized

    def _after_uninitialized_read(self, frame):
        torch = self.torch
        if not self.cfg.get("uninit") or self._poisoned is not None:
            return
        tensor = self._tensor(_eval(self.cfg.get("target"), frame))
        if tensor is None:
            return
        with torch.no_grad():
            if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
                tensor.fill_(float("nan"))
                sentinel = None
            elif tensor.dtype == torch.bool:
                self.conclude("inconclusive", "a bool tensor cannot be filled with a recognisable sentinel", stop=False)
                return
            else:
                sentinel = int(torch.iinfo(tensor.dtype).max) - 7
                tensor.fill_(sentinel)
        self._poisoned = (tensor, sentinel, tensor.untyped_storage().data_ptr())
        self._watch_reads()

    def _on_torch_function(self, func, args, kwargs):
        hook = getattr(self, "_read_" + self.name, None)
        if hook is not None and not self._quiet:
            hook(func, args, kwargs)

    def _on_torch_result(self, args, kwargs, result):
        hook = getattr(self, "_result_" + self.name, None)
        if hook is not None:
            hook(args, kwargs, result)

    def _watch_reads(self):
        if self._mode is None:
            self._mode = _read_watch_mode(self.torch, self)
            self._mode.__enter__()

    def _read_uninitialized_read(self, func, args, kwargs):
        name = getattr(func, "__name__", "") or ""
        if name in _METADATA or name in _VIEWS:
            return
        tensor, sentinel, pointer = self._poisoned
        torch = self.torch
        operands = list(_tensors_in(args, torch)) + list(_tensors_in(kwargs.values(), torch))
        outs = list(_tensors_in([kwargs.get("out")], torch)) if "out" in kwargs else []
        if name in _WRITES or getattr(func, "__module__", "") == "torch.nn.init":
            operands = operands[1:]  # pure writes (fill_, copy_, x[i] = v, nn.init.*): args[0] is written, not read  # the written tensor is args[0]; the rest are read
        for operand in operands:
            if any(operand is out for out in outs):
                continue
            try:
                if operand.untyped_storage().data_ptr() != pointer:
                    continue
                poisoned = operand.isnan() if sentinel is None else operand == sentinel
                count = int(poisoned.sum())
            except Exception:
                continue
            if count:
                frame = _user_frame()
                line = _frame_user_line(frame)
                where = f" at line {line}" if line else ""
                self.conclude(
                    "symptom",
                    f"{self.cfg.get('target')} was read ({name}){where} while {count} of its {operand.numel()} "
                    f"elements had never been written (uninitialized memory)",
                    frame=frame,
                )

    def _finish_uninitialized_read(self):
        if self._mode is not None:
            try:
                self._mode.__exit__(None, None, None)
            except Exception:
                pass
        if self._poisoned is not None:
            self.conclude("clean", f"every read of {self.cfg.get('target')} came after its elements were written", stop=False)
        else:
            self.conclude("clean", "the flagged statement does not create an uninitialized tensor", stop=False)

    # -- AG014: requires_grad switched on after the forward --------------------------------
    def _setup_unfreeze_grad_none(self):
        self._install_backward_wrapper(lambda: None, self._unfreeze_after_backward)

    def _before_unfreeze_grad_none(self, frame):
        tensor = self._tensor(_eval(self.cfg.get("target"), frame))
        self._pending = (tensor, tensor.requires_grad) if tensor is not None else None

    def _after_unfreeze_grad_none(self, frame):
        pending = getattr(self, "_pending", None)
        if pending and pending[0] is not None and not pending[1] and pending[0].requires_grad:
            self._flipped.append(pending[0])

    def _unfreeze_after_backward(self, token):
        self._backwards += 1
        if not self._flipped:
            return
        frame = _user_frame()
        target = self.cfg.get("target")
        for tensor in self._flipped:
            if tensor.grad is None:
                self.conclude(
                    "symptom",
                    f"{target}.requires_grad was switched on after the forward; the pending backward() left {target}.grad None",
                    frame=frame,
                )
        self.conclude("clean", f"{target}.grad was computed by backward()", frame=frame)

    def _finish_unfreeze_grad_none(self):
        what = f"{self.cfg['target']}.requires_grad" if self.cfg.get("target") else "requires_grad"
        if self._flipped:
            self.conclude("inconclusive", f"{what} was switched on but no backward() followed", stop=False)
        self.conclude("clean", f"{what} was not switched on at the flagged line between a forward and its backward()", stop=False)

    # -- AG015: the accumulator keeps every iteration's graph alive, never backpropagated -------
    # Growing is what an accumulate-then-backward loop does on purpose (`losses.append(loss)`, then one
    # backward() of their sum): the harm is a graph that grows and that no backward() ever consumes whole.
    def _setup_graph_growth(self):
        self._roots = []  # the accumulator's graph roots at its latest update
        self._consumed = False
        hooks = self
        real = self.torch.autograd.backward

        def backward(*args, **kwargs):
            if hooks.outcome is None and hooks._roots:
                tensors = args[0] if args else kwargs.get("tensors")
                tensors = [tensors] if isinstance(tensors, hooks.torch.Tensor) else list(tensors or ())
                ids = {id(node) for node in _graph_nodes([t.grad_fn for t in tensors if isinstance(t, hooks.torch.Tensor)])}
                if all(id(root) in ids for root in hooks._roots):
                    hooks._consumed = True
            return real(*args, **kwargs)

        backward.__wrapped__ = real
        self.torch.autograd.backward = backward

    def _after_graph_growth(self, frame):
        value = _eval(self.cfg.get("target"), frame)
        self._sizes.append(_graph_size(value, self.torch))
        self._roots = _graph_roots(value, self.torch)
        self._consumed = False
        if len(self._sizes) >= 3 and not any(self._sizes):
            self.conclude("clean", f"{self.cfg.get('target')} holds no autograd graph", frame=frame)

    def _finish_graph_growth(self):
        sizes, target = self._sizes, self.cfg.get("target")
        growth = " -> ".join(map(str, sizes))
        if len(sizes) >= 2 and sizes[0] > 0 and all(b > a for a, b in zip(sizes, sizes[1:])):
            if self._consumed:
                self.conclude("clean", f"the graph held by {target} grew ({growth} nodes), then one backward() used all of it: "
                                       "accumulating it was the point", stop=False)
            self.conclude("symptom", f"the autograd graph kept alive by {target} grew every iteration ({growth} nodes) and no "
                                     "backward() ever used it: every iteration's graph stays in memory", stop=False)
        elif len(sizes) >= 2:
            self.conclude("clean", f"the graph held by {target} did not grow ({growth} nodes)", stop=False)
        elif sizes:
            self.conclude("inconclusive", f"the accumulation ran only once ({sizes[0]} graph nodes); growth needs two iterations", stop=False)

    # -- AG016: backward() adds onto gradients optimizer.step() already used ----------------
    def _setup_grad_accumulation(self):
        self._step_post_hook(self._accumulation_after_step)
        self._install_backward_wrapper(self._accumulation_before_backward, self._accumulation_after_backward)

    def _accumulation_after_step(self, optimizer, args, kwargs):
        self._steps += 1
        self._consumed = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is not None:
                    self._consumed[id(param)] = (param, grad, grad._version, float(grad.detach().abs().sum()))

    def _accumulation_before_backward(self):
        stale = []
        for param, grad, version, magnitude in self._consumed.values():
            if param.grad is grad and grad._version == version and magnitude > 0:
                stale.append((param, grad, magnitude))
        return stale

    def _accumulation_after_backward(self, stale):
        self._backwards += 1
        if self._steps and self._consumed:
            self._consumed = {}
            if stale:
                param, grad, before = stale[0]
                after = float(param.grad.detach().abs().sum()) if param.grad is not None else 0.0
                self.conclude(
                    "symptom",
                    f"backward() ran while {len(stale)} parameter(s) still held the gradients optimizer.step() had "
                    f"already used; the new gradients were added to them (sum |grad| {before:.4g} -> {after:.4g})",
                    frame=_user_frame(),
                )
            self._clean_steps = getattr(self, "_clean_steps", 0) + 1

    def _finish_grad_accumulation(self):
        if getattr(self, "_clean_steps", 0):
            self.conclude("clean", f"gradients were cleared before each backward() after optimizer.step() ({self._steps} steps)", stop=False)
        elif self._steps:
            self.conclude("clean", f"no backward() followed optimizer.step() ({self._steps} step(s))", stop=False)
        else:
            self.conclude("inconclusive", "optimizer.step() never ran", stop=False)

    # -- AG018: a misspelt requires_grad attribute ------------------------------------------
    def _after_typo_attribute(self, frame):
        """`x.require_grad = False` sets a plain attribute: requires_grad keeps its old value."""
        target, attr = self.cfg.get("target"), self.cfg.get("attr")
        value = _eval(target, frame)
        torch = self.torch
        wanted = getattr(value, attr, MISSING) if attr and value is not MISSING else MISSING
        if not isinstance(wanted, bool):
            return
        if isinstance(value, torch.nn.Module):
            actual = {p.requires_grad for p in value.parameters()}
            if attr != "requires_grad" and actual and actual != {wanted}:
                self.conclude("symptom", f"{target}.{attr} = {wanted} set a plain attribute; its parameters' requires_grad is still {not wanted}", frame=frame)
            self.conclude("clean", f"{target}'s parameters have requires_grad={wanted}", frame=frame)
        tensor = self._tensor(value)
        if tensor is None:
            return
        if tensor.requires_grad != wanted:
            self.conclude(
                "symptom",
                f"{target}.{attr} = {wanted} only set a new plain attribute: {target}.requires_grad is still {tensor.requires_grad}",
                frame=frame,
            )
        self.conclude("clean", f"{target}.requires_grad is {tensor.requires_grad}, as assigned", frame=frame)


# Torch functions that only look at metadata, or make aliases (tracked by storage), or write.
_METADATA = {
    "__get__", "__set__", "size", "dim", "numel", "nelement", "stride", "storage_offset", "element_size",
    "is_contiguous", "data_ptr", "untyped_storage", "requires_grad_", "__len__", "is_floating_point",
    "is_complex", "get_device", "type", "__hash__", "retain_grad", "register_hook", "_version",
    "__reduce_ex__", "__setstate__", "__deepcopy__", "dim_order", "__torch_function__",
}
_VIEWS = {
    "view", "reshape", "__getitem__", "detach", "t", "transpose", "unsqueeze", "squeeze", "expand", "narrow",
    "select", "permute", "flatten", "unflatten", "view_as", "expand_as", "as_strided", "unbind", "split", "chunk",
    "movedim", "swapaxes", "diagonal", "real", "imag", "to", "cpu", "cuda", "contiguous",
}
_WRITES = {"__setitem__", "fill_", "zero_", "copy_", "normal_", "uniform_", "random_", "bernoulli_", "exponential_",
           "geometric_", "cauchy_", "log_normal_", "set_", "resize_", "fill_diagonal_", "index_fill_", "masked_fill_",
           "index_copy_", "masked_scatter_", "scatter_", "index_put_", "put_"}


def _tensors_in(values, torch):
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, torch.Tensor):
                    yield item


def _read_watch_mode(torch, hooks):
    from torch.overrides import TorchFunctionMode

    class ReadWatch(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = kwargs or {}
            if hooks.outcome is None:
                hooks._on_torch_function(func, args, kwargs)
            result = func(*args, **kwargs)
            if hooks.outcome is None and not hooks._quiet:
                hooks._on_torch_result(args, kwargs, result)
            return result

    return ReadWatch()


def _graph_roots(value, torch):
    if isinstance(value, torch.Tensor):
        return [value.grad_fn] if value.grad_fn is not None else []
    if isinstance(value, (list, tuple)):
        return [v.grad_fn for v in value[-1000:] if isinstance(v, torch.Tensor) and v.grad_fn is not None]
    return []


def _source_lines():
    try:
        with open(REPRO, encoding="utf-8") as handle:
            return handle.read().split("\n")
    except OSError:
        return []


def _graph_size(value, torch, cap=200000):
    roots = []
    if isinstance(value, torch.Tensor):
        roots = [value.grad_fn]
    elif isinstance(value, (list, tuple)):
        roots = [v.grad_fn for v in value[-1000:] if isinstance(v, torch.Tensor)]
    seen = set()
    stack = [r for r in roots if r is not None]
    while stack and len(seen) < cap:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for child, _ in getattr(node, "next_functions", ()):
            if child is not None and id(child) not in seen:
                stack.append(child)
    return len(seen)


def _graph_nodes(roots, cap=100000):
    """Every autograd node reachable from `roots` (grad_fn objects), at most `cap`."""
    seen, nodes, stack = set(), [], [r for r in roots if r is not None]
    while stack and len(nodes) < cap:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(child for child, _ in getattr(node, "next_functions", ()) if child is not None)
    return nodes


def _name_of(value, frame):
    """A name the user's frame gives `value` (None when it has none)."""
    for scope in (frame.f_locals, frame.f_globals) if frame is not None else ():
        for name, item in scope.items():
            if item is value and not name.startswith("_"):
                return name
    return None


def _frames(tb):
    frames = []
    for summary in traceback.extract_tb(tb):
        mapped = user_line(summary.lineno) if summary.filename == REPRO else None
        frames.append({"file": summary.filename, "line": summary.lineno, "user_line": mapped, "name": summary.name})
    return frames


_FORWARD_RE = re.compile(r'File "([^"]+)", line (\d+)')


def _forward_line(text):
    lines = [user_line(int(m.group(2))) for m in _FORWARD_RE.finditer(text) if m.group(1) == REPRO]
    lines = [line for line in lines if line]
    return lines[-1] if lines else None


def _record_warning(message, category, filename, lineno):
    text = str(message)
    entry = {
        "category": [cls.__name__ for cls in category.__mro__],
        "message": text[:2000],
        "user_line": user_line(lineno) if filename == REPRO else None,
    }
    if "Traceback of forward call that caused the error" in text:
        RESULT["forward_line"] = _forward_line(text)
        entry["message"] = text.split("\n", 1)[0]
    if len(RESULT["warnings"]) < _MAX_WARNINGS:
        RESULT["warnings"].append(entry)


_MAX_CAUGHT = 20


def main():
    user_dir = SPEC.get("user_dir")
    if user_dir:
        sys.path[0] = user_dir
    else:
        del sys.path[0]
    try:
        import torch
    except BaseException as error:  # noqa: BLE001 - any failure to import is "torch-missing"
        RESULT.update(status="torch-missing", observed=f"{type(error).__name__}: {error}")
        return
    RESULT["torch_version"] = torch.__version__
    if SPEC.get("device") == "cuda":
        if not torch.cuda.is_available():
            reason = "torch.cuda.is_available() is False"
            if torch.version.cuda is None:
                reason += f" (torch {torch.__version__} is a CPU-only build)"
            elif os.environ.get("CUDA_VISIBLE_DEVICES") is not None:
                reason += f" (CUDA_VISIBLE_DEVICES={os.environ['CUDA_VISIBLE_DEVICES']!r})"
            RESULT.update(status="cuda-unavailable", observed=reason)
            return
        torch.set_default_device("cuda")
        limit = SPEC.get("memory_limit")
        if limit:
            total = torch.cuda.get_device_properties(0).total_memory
            torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total))
        RESULT["cuda_device"] = torch.cuda.get_device_name(0)

    original_showwarning = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        _record_warning(message, category, filename, lineno)
        original_showwarning(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning
    warnings.simplefilter("always")
    torch.autograd.set_detect_anomaly(True, check_nan=False)

    hooks = Hooks(torch, SPEC)
    builtins.__agl__ = hooks
    with open(REPRO, encoding="utf-8") as handle:
        code = compile(handle.read(), REPRO, "exec")
    module = types.ModuleType("__main__")
    module.__file__ = REPRO
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    sys.argv = [REPRO]
    started = time.perf_counter()
    try:
        exec(code, module.__dict__)
        RESULT["completed"] = True
    except _Stop:
        RESULT["stopped_by_probe"] = True
    except SystemExit as exit_:
        RESULT["completed"] = exit_.code in (None, 0)
        RESULT["exit_code"] = exit_.code if isinstance(exit_.code, int) else repr(exit_.code)
    except BaseException as error:  # noqa: BLE001 - the user's program may raise anything
        message = str(error)
        RESULT["exception"] = {
            "types": _mro_names(error),
            "message": message[:4000],
            "frames": _frames(error.__traceback__),
        }
        mapped = [f["user_line"] for f in RESULT["exception"]["frames"] if f["user_line"]]
        RESULT["exception"]["user_line"] = mapped[-1] if mapped else None
        del error
    RESULT["run_s"] = round(time.perf_counter() - started, 3)
    if RESULT.get("completed") or RESULT.get("stopped_by_probe"):
        try:
            hooks.finish()
        except BaseException as error:  # noqa: BLE001
            RESULT["probe_error"] = f"{type(error).__name__}: {error}"
    RESULT["probe"] = hooks.outcome


if __name__ == "__main__":
    try:
        main()
    except BaseException as error:  # noqa: BLE001 - report harness failures as facts too
        RESULT["harness_error"] = "".join(traceback.format_exception(type(error), error, error.__traceback__))[-4000:]
    finally:
        sys.stdout.flush()
        _write_result()
        sys.stdout.flush()
        sys.stderr.flush()
        # Skip interpreter teardown (threads, atexit handlers of the user's program).
        os._exit(0)
