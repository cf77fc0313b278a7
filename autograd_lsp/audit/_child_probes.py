"""Child-side probes of `autograd-lsp audit` (imports torch; the parent reads this file as TEXT and never imports it).

The audit child (``_child_run.py``) execs this text, calls ``install(report, user_files)`` before the user's script
runs, ``step_boundary(site, iteration)`` at the start of each bounded loop iteration and ``finish(exc)`` when the
script ended (``exc``: what it raised, or None). Every rule's runtime signature is watched at once, and a finding is
reported only with the fact that proves the harm (a gradient that differs, a graph that grows, a value read before
it was written, an error autograd raised), on a line of the user's files:

* one ``TorchFunctionMode`` sees every torch call: in-place ops are found by the ``_version`` they bump (no list of
  op names), new ``grad_fn`` nodes get their user line, creation order, saved tensors' storages and leaf versions
  (the version tracking of ``explain``), ``.data`` results, aliases made under ``no_grad`` and reads of poisoned
  uninitialised storage are watched;
* ``torch.autograd.backward``/``grad`` are wrapped: the graph is walked before each call (``.data`` writes to saved
  tensors, proven by recomputing the gradient with the saved values; stale graphs across ``optimizer.step()``),
  marked freed or retained after it, and a failure is mapped to its rule and culprit line;
* optimizer step hooks (gradients reused without zeroing), ``Module._apply`` (tensors left behind by ``.to()``),
  ``Module``/``Tensor.__setattr__`` (misspelt ``requires_grad``), warnings (deprecated calls).

Keep it runnable on any Python 3.8+ with torch 2.x: the user's interpreter runs it.
"""
import ast
import difflib
import re
import sys
import types
import warnings
import weakref

import torch
from torch.overrides import TorchFunctionMode

MAX_NODES = 20000
MAX_LOG = 20000
MAX_SNAPSHOT = 1 << 22  # elements: larger .data sources are not snapshotted (their writes stay unproven)
_VERSION_RE = re.compile(r"is at version (\d+); expected version (\d+)")
_SECOND = "backward through the graph a second time"
_FREED = "have already been freed"
_VERSION = "modified by an inplace operation"
_TRANSPARENT = ("/torch/nn/modules/", "/torch/utils/_contextlib.py", "/torch/_tensor.py", "<autograd-lsp", "_child_run")
# Errors whose own line is the bug (rule, regex over the message, exception type names).
_ERRORS = [
    ("AG001", r"leaf Variable that requires grad (is being|has been) used in an in-place operation", ("RuntimeError",)),
    ("AG004", r"only Tensors of floating point( and complex)? dtype can require gradients", ("RuntimeError",)),
    ("AG005", r"grad can be implicitly created only for (real )?scalar outputs", ("RuntimeError",)),
    ("AG010", r"element \d+ of tensors does not require grad and does not have a grad_fn", ("RuntimeError",)),
    ("AG014", r"you can only change requires_grad flags of leaf variables", ("RuntimeError",)),
]
_WARNINGS = [("AG011", r"torch\.range is deprecated")]
_TYPO_TARGET = "requires_grad"


class S:
    report = None
    user = set()
    seq = 0
    busy = False
    in_step = 0
    steps = 0
    step_seqs = []
    inplace = []  # {seq, ptr, at, data, step}
    backwards = []  # {index, seq, at, retain, roots}
    loops = {}  # path -> [(first, last, site)]
    iter_start = {}  # site -> seq of the current iteration's start
    toggles = []  # (seq, at, weakref, value)
    data_writes = []  # {seq, ptr, at, view, before}
    poisoned = {}  # ptr -> {at, ref, read}
    aliases = {}  # id -> (weakref, ptr, seq, at)
    attr_lines = {}  # (id(module), name) -> at
    consumed = {}  # id(grad) -> (weakref grad, version, step at)
    accum = {}  # (site, dotted) -> {sizes, roots, at}
    saved_attrs = {}  # grad_fn type -> its _saved_* attribute names
    done = set()
    apply_depth = 0


def _tick():
    S.seq += 1
    return S.seq


def _say(code, at, message, evidence=""):
    if not at or not at[0] or not at[1]:
        return
    key = (code, at[0], at[1])
    if key in S.done:
        return
    S.done.add(key)
    try:
        S.report(code, at[0], at[1], message, evidence)
    except Exception:
        pass


def _stack():
    """User frames on the stack, innermost first: [(path, line, function, reachable)], where `reachable` is False
    for a frame called from the outer user frames through library code (a DataLoader, not a module call)."""
    frames = []
    frame = sys._getframe(2)
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    out, opaque = [], False
    for frame in reversed(frames):  # outermost first
        path = frame.f_code.co_filename
        if path in S.user:
            out.append((path, frame.f_lineno, frame.f_code.co_name, not opaque))
        elif out and not any(part in path for part in _TRANSPARENT):
            opaque = True
    out.reverse()
    return out


_SELF = sys._getframe().f_code.co_filename
_DISPATCH = ("/torch/overrides.py", "/torch/utils/_device.py", "/torch/_tensor.py")


def _called_by_user():
    """True when the torch call being handled was made by the user's code itself (not by torch on its behalf)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if path != _SELF and not path.endswith(_DISPATCH):
            return path in S.user
        frame = frame.f_back
    return False


def _at(stack):
    return (stack[0][0], stack[0][1]) if stack else None


def _reach(stack):
    for path, line, _, reachable in stack:
        if reachable:
            return (path, line)
    return _at(stack)


def _ptr(t):
    try:
        return t.untyped_storage().data_ptr()
    except Exception:
        return None


def _tensors(args, kwargs):
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value[:256]:
                if isinstance(item, torch.Tensor):
                    yield item


def _fmt(at):
    return "line %d" % at[1] if at else "an unknown line"


# ---------------------------------------------------------------------------------------------------------------
# Graph nodes: who made them, what they saved
# ---------------------------------------------------------------------------------------------------------------
def _saved(node):
    kind = type(node)
    names = S.saved_attrs.get(kind)
    if names is None:
        names = S.saved_attrs[kind] = [a for a in dir(node) if a.startswith("_saved_")]
    saved = {}
    for attr in names:
        try:
            value = getattr(node, attr)
        except Exception:
            continue
        if isinstance(value, torch.Tensor):
            saved[attr[7:]] = (_ptr(value), value._version)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value[:8]):
                if isinstance(item, torch.Tensor):
                    saved["%s[%d]" % (attr[7:], i)] = (_ptr(item), item._version)
    return saved


def _tag(root, seq, stack):
    todo, count = [root], 0
    at, reach = _at(stack), _reach(stack)
    while todo and count < 64:
        node = todo.pop()
        try:
            md = node.metadata
        except Exception:
            continue
        if "agl" in md:
            continue
        count += 1
        leaves = {}
        for child, _ in node.next_functions:
            if child is None:
                continue
            if type(child).__name__ == "AccumulateGrad":
                leaf = child.variable
                leaves[id(leaf)] = (leaf._version, weakref.ref(leaf))
            else:
                todo.append(child)
        md["agl"] = {"seq": seq, "at": at, "reach": reach, "saved": _saved(node), "leaves": leaves,
                     "freed_by": None, "retained_by": [], "used_by": None}


def _walk(roots):
    order, seen, parents = [], set(), {}
    queue = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    seen.update(id(n) for n in queue)
    i = 0
    while i < len(queue) and len(order) < MAX_NODES:
        node = queue[i]
        i += 1
        order.append(node)
        for child, _ in getattr(node, "next_functions", ()):
            if child is None:
                continue
            parents.setdefault(id(child), []).append(node)
            if id(child) not in seen:
                seen.add(id(child))
                queue.append(child)
    return order, parents


def _md(node):
    try:
        return node.metadata.get("agl")
    except Exception:
        return None


# ---------------------------------------------------------------------------------------------------------------
# The torch function mode
# ---------------------------------------------------------------------------------------------------------------
_PASS = {"__repr__", "__format__", "__str__", "dim", "size", "numel", "__len__", "__hash__", "backward",
         "data_ptr", "untyped_storage", "stride", "is_floating_point", "get_device", "storage_offset", "element_size",
         "is_contiguous", "register_hook", "retain_grad"}
_READS = {"item", "tolist", "__bool__", "__float__", "__int__", "__index__", "numpy"}


class AuditMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if S.busy:
            return func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if name == "__get__":
            out = func(*args, **kwargs)
            prop = getattr(getattr(func, "__self__", None), "__name__", "")
            if prop == "data" and args and isinstance(args[0], torch.Tensor) and isinstance(out, torch.Tensor):
                try:
                    out._agl_data = weakref.ref(args[0])
                except Exception:
                    pass
            return out
        if name == "__set__" or name == "requires_grad_":
            out = func(*args, **kwargs)
            prop = getattr(getattr(func, "__self__", None), "__name__", "") if name == "__set__" else "requires_grad"
            if prop == "requires_grad" and args and isinstance(args[0], torch.Tensor):
                S.toggles.append((_tick(), _at(_stack()), weakref.ref(args[0]), bool(args[0].requires_grad)))
            return out
        if name in _PASS:
            return func(*args, **kwargs)
        S.busy = True
        try:
            inputs = list(_tensors(args, kwargs))
            before = [(t, t._version) for t in inputs]
            suspects = _poisoned_inputs(inputs) if S.poisoned else ()
            if S.aliases:
                _check_alias_read(inputs)
            snapshots = _snapshot_data_sources(inputs)
        finally:
            S.busy = False
        out = func(*args, **kwargs)
        S.busy = True
        try:
            if suspects:
                _check_poison_read(name, suspects, out)
            if name in _READS:
                return out
            _after_call(name, inputs, before, snapshots, out)
        finally:
            S.busy = False
        return out


def _after_call(name, inputs, before, snapshots, out):
    seq = _tick()
    stack = None
    for t, version in before:
        if t._version != version:
            stack = stack if stack is not None else _stack()
            _record_inplace(t, seq, stack, snapshots)
        try:  # (grad_fn of a no_grad view whose base changed raises: such a tensor is no leaf to watch)
            if t.is_leaf:
                t._agl_used = seq
        except Exception:
            pass
    outs = out if isinstance(out, (list, tuple)) else [out]
    grad_mode = torch.is_grad_enabled()
    for t in outs[:64]:
        if not isinstance(t, torch.Tensor):
            continue
        try:
            fn = t.grad_fn
        except Exception:
            continue
        if fn is not None:
            try:
                tagged = "agl" in fn.metadata
            except Exception:
                tagged = True
            if not tagged:
                stack = stack if stack is not None else _stack()
                _tag(fn, seq, stack)
        elif not grad_mode and t.requires_grad and inputs and not any(t is i for i in inputs) and _called_by_user():
            ptr = _ptr(t)
            if any(i.requires_grad and _ptr(i) == ptr for i in inputs):
                stack = stack if stack is not None else _stack()
                if stack:
                    S.aliases[id(t)] = (weakref.ref(t), ptr, seq, _at(stack))


def _record_inplace(t, seq, stack, snapshots):
    ptr = _ptr(t)
    source = getattr(t, "_agl_data", None)
    entry = {"seq": seq, "ptr": ptr, "at": _at(stack), "data": source is not None, "step": S.in_step > 0}
    if len(S.inplace) < MAX_LOG:
        S.inplace.append(entry)
    if source is not None and id(t) in snapshots:
        S.data_writes.append({"seq": seq, "ptr": ptr, "at": _at(stack), "view": t, "before": snapshots[id(t)]})
    if ptr in S.poisoned:
        info = S.poisoned[ptr]
        obj = info["ref"]()
        if obj is not None and not info["read"]:
            try:
                if not bool(torch.isnan(obj).any()):
                    del S.poisoned[ptr]  # every value written: initialised before any read
            except Exception:
                pass
    if S.consumed and id(t) in S.consumed:
        try:
            if not bool(t.any()):
                del S.consumed[id(t)]  # a consumed gradient zeroed in place (zero_grad(set_to_none=False))
        except Exception:
            pass


def _snapshot_data_sources(inputs):
    """Values of `.data` tensors before an op that may write them (proof material for AG008)."""
    out = {}
    for t in inputs:
        if getattr(t, "_agl_data", None) is not None and t.numel() <= MAX_SNAPSHOT:
            try:
                out[id(t)] = t.clone()
            except Exception:
                pass
    return out


# ---------------------------------------------------------------------------------------------------------------
# AG012: torch.empty / torch.Tensor(n) values read before written (poisoned with NaN)
# ---------------------------------------------------------------------------------------------------------------
def _poison(t, stack):
    try:
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() and stack:
            with torch.no_grad():
                t.detach().fill_(float("nan"))
            S.poisoned[_ptr(t)] = {"at": _at(stack), "ref": weakref.ref(t), "read": False}
    except Exception:
        pass


def _poisoned_inputs(inputs):
    """Inputs on a poisoned storage that still hold poison (NaN) before the op."""
    out = []
    for t in inputs:
        info = S.poisoned.get(_ptr(t))
        if info is None or info["read"]:
            continue
        try:
            if bool(torch.isnan(t).any()):
                out.append((t, t._version, info))
        except Exception:
            continue
    return out


def _check_poison_read(name, suspects, out):
    """A read: an op that neither wrote the tensor in place (its version moved) nor returned a view of it (an output
    on the same storage) computed from its NaN-poisoned, never written values."""
    outs = out if isinstance(out, (list, tuple)) else [out]
    for t, version, info in suspects:
        if t._version != version:
            continue
        ptr = _ptr(t)
        if any(isinstance(o, torch.Tensor) and _ptr(o) == ptr for o in outs[:64]):
            continue
        stack = _stack()
        if not stack:
            continue
        info["read"] = True
        _say("AG012", info["at"], "values of this uninitialised tensor are read before they are written (garbage)",
             "the audit filled it with NaN when it was made; %s at %s read those values" % (name, _fmt(_at(stack))))


# ---------------------------------------------------------------------------------------------------------------
# AG007: an alias made under no_grad, read after its base changed in place
# ---------------------------------------------------------------------------------------------------------------
def _check_alias_read(inputs):
    for t in inputs:
        entry = S.aliases.get(id(t))
        if entry is None or entry[0]() is not t:
            continue
        ref, ptr, seq, at = entry
        changed = [e for e in S.inplace if e["ptr"] == ptr and e["seq"] > seq]
        if not changed:
            continue
        stack = _stack()
        if not stack:
            continue
        del S.aliases[id(t)]
        _say("AG007", at, "made under no_grad, this is still a view of a tensor that requires grad (requires_grad=True), "
                          "not a frozen copy: it changed when its base was updated in place",
             "its base was modified in place at %s (%d time(s)), then it was read at %s"
             % (_fmt(changed[0]["at"]) if changed[0]["at"] else "optimizer.step()", len(changed), _fmt(_at(stack))))


# ---------------------------------------------------------------------------------------------------------------
# backward / grad
# ---------------------------------------------------------------------------------------------------------------
REAL_BACKWARD = torch.autograd.backward
REAL_GRAD = torch.autograd.grad


def _roots_of(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def _watched(real, call):
    def wrapper(*args, **kwargs):
        if S.busy:
            return real(*args, **kwargs)
        first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
        roots = _roots_of(first)
        grads = args[1] if len(args) > 1 else kwargs.get("grad_tensors", kwargs.get("grad_outputs"))
        retain = kwargs.get("retain_graph")
        if retain is None and call == "backward" and len(args) > 2:
            retain = args[2]
        create = kwargs.get("create_graph", False)
        retain = bool(retain if retain is not None else create)
        S.busy = True
        try:
            stack = _stack()
            record = {"index": len(S.backwards), "seq": _tick(), "at": _at(stack), "retain": retain, "call": call,
                      "stack": stack,
                      "roots": {id(t.grad_fn) for t in roots if t.grad_fn is not None}}
            S.backwards.append(record)
            order, parents = _walk(roots)
            if call == "backward":
                _check_data_writes(order, roots, grads, record)
            stale = _stale_nodes(order, parents, record) if call == "backward" else []
            leaves = [n.variable for n in order if type(n).__name__ == "AccumulateGrad"]
        finally:
            S.busy = False
        try:
            result = real(*args, **kwargs)
        except RuntimeError as error:
            S.busy = True
            try:
                _map_backward_error(error, order, parents, record)
            finally:
                S.busy = False
            raise
        S.busy = True
        try:
            for node in order:
                md = _md(node)
                if md is None:
                    continue
                md["used_by"] = record["index"]
                if retain:
                    md["retained_by"].append(record["index"])
                elif md["freed_by"] is None:
                    md["freed_by"] = record["index"]
            if call == "backward":
                for at, message, evidence in stale:
                    _say("AG002", at, message, evidence)
                _check_unfreeze(leaves, record)
                _check_zero_grads(roots, leaves, record)
        finally:
            S.busy = False
        return result

    wrapper.__wrapped__ = real
    return wrapper


def _current_iteration_start(stack):
    """Seq at which the current iteration of the innermost running loop around the call began (0: no loop)."""
    for path, line, _, _ in stack or ():
        best = None
        for first, last, site in S.loops.get(path, ()):
            if first <= line <= last and site in S.iter_start and (best is None or first > best[0]):
                best = (first, site)
        if best:
            return S.iter_start[best[1]]
    return 0


def _consumer_at(node, parents, since):
    """The user line that used the old node `node` again: the newest consumer made after `since`."""
    ups = [p for p in parents.get(id(node), []) if (_md(p) or {}).get("seq", 0) > since]
    if ups:
        md = _md(ups[0])
        return md.get("reach") or md.get("at")
    return None


def _stale_nodes(order, parents, record):
    """AG002 (silent form): a node built before an optimizer.step() that changed the parameters it was computed from,
    used by this backward's forward again (its value is stale: it still holds the old parameters' result)."""
    if not S.step_seqs:
        return []
    out = []
    last_step = S.step_seqs[-1]
    start = _current_iteration_start(record["stack"])
    for node in order:
        md = _md(node)
        if not md or md["seq"] >= last_step or md["seq"] >= start or not md["leaves"]:
            continue
        changed = []
        for version, ref in md["leaves"].values():
            leaf = ref()
            if leaf is not None and leaf._version > version and any(
                    e["step"] and e["ptr"] == _ptr(leaf) and e["seq"] > md["seq"] for e in S.inplace):
                changed.append(leaf)
        if not changed:
            continue
        at = _consumer_at(node, parents, start) or record["at"]
        out.append((at, "a tensor composed from parameters before the training loop is used again after "
                        "optimizer.step() changed those parameters: it still holds their old values",
                    "built at %s from %d parameter(s) that optimizer.step() updated since; this iteration's "
                    "forward used it again" % (_fmt(md["at"]), len(changed))))
        break
    return out


# -- AG008 ------------------------------------------------------------------------------------------------------
def _check_data_writes(order, roots, grads, record):
    """A saved tensor written through `.data` after the forward saved it: prove the harm by computing the gradient
    with the values the forward saved (restored for a moment) and with the written ones; report when they differ."""
    if not S.data_writes:
        return
    hits = []
    for node in order:
        md = _md(node)
        if not md:
            continue
        for ptr, _ in md["saved"].values():
            for w in S.data_writes:
                if w["ptr"] == ptr and w["seq"] > md["seq"] and w not in hits:
                    hits.append(w)
    if not hits:
        return
    leaves = [n.variable for n in order if type(n).__name__ == "AccumulateGrad"][:64]
    if not leaves:
        return
    hits.sort(key=lambda w: w["seq"])
    try:
        now = REAL_GRAD(roots, leaves, grads, retain_graph=True, allow_unused=True)
        with torch.no_grad():
            current = [w["view"].clone() for w in hits]
            for w in reversed(hits):
                w["view"].copy_(w["before"])
            try:
                then = REAL_GRAD(roots, leaves, grads, retain_graph=True, allow_unused=True)
            finally:
                for w, values in zip(hits, current):
                    w["view"].copy_(values)
    except Exception:
        return
    differs = 0
    for a, b in zip(now, then):
        if a is None or b is None:
            continue
        if not torch.allclose(a, b, equal_nan=True):
            differs += 1
    S.data_writes = [w for w in S.data_writes if w not in hits]
    if differs:
        first = hits[0]
        _say("AG008", first["at"], "a change through .data of a tensor the pending backward() saved: the gradient is "
                                   "computed with the new values, silently wrong",
             "backward() at %s: %d of %d gradient(s) differ from the ones computed with the values the forward saved"
             % (_fmt(record["at"]), differs, len(leaves)))


# -- AG014 ------------------------------------------------------------------------------------------------------
def _check_unfreeze(leaves, record):
    if not S.toggles:
        return
    ids = {id(t) for t in leaves}
    previous = S.backwards[-2]["seq"] if len(S.backwards) >= 2 else 0
    keep = []
    for seq, at, ref, value in S.toggles:
        t = ref()
        if t is None or seq > record["seq"]:
            if t is not None:
                keep.append((seq, at, ref, value))
            continue
        used = getattr(t, "_agl_used", 0)
        if value and t.requires_grad and id(t) not in ids and previous < used < seq and t.grad is None:
            _say("AG014", at, "requires_grad was switched on after the forward that used this tensor and before its "
                              "backward(): that graph cannot reach it, its .grad stays None",
                 "used by the forward, unfrozen at %s, backward() at %s left .grad None" % (_fmt(at), _fmt(record["at"])))
    S.toggles = keep


# -- AG010 (silent form) ------------------------------------------------------------------------------------------
def _check_zero_grads(roots, leaves, record):
    params = [t for t in leaves if t.requires_grad][:256]
    if not params or any(t.grad is None for t in params):
        return
    try:
        if any(bool(t.grad.any()) for t in params):
            return
        if not any(bool(r.detach().any()) for r in roots):
            return
    except Exception:
        return
    _say("AG010", record["at"], "the loss reaches the parameters only through non-differentiable operations: every "
                                "gradient is exactly zero",
         "backward() at %s gave all-zero gradients to all %d parameter(s) of its graph" % (_fmt(record["at"]), len(params)))


# -- error mapping --------------------------------------------------------------------------------------------------
def _bumpers(ptr, after_seq):
    return [e for e in S.inplace if e["ptr"] == ptr and e["seq"] > after_seq]


def _map_backward_error(error, order, parents, record):
    text = str(error)
    first_line = text.split("\n")[0][:300]
    match = _VERSION_RE.search(text)
    if match and _VERSION in text:
        now, expected = int(match.group(1)), int(match.group(2))
        candidates = []
        for node in order:
            md = _md(node)
            if not md:
                continue
            for attr, (ptr, version) in md["saved"].items():
                if "[" in attr:
                    continue
                try:
                    getattr(node, "_saved_" + attr)
                except RuntimeError as inner:
                    m = _VERSION_RE.search(str(inner))
                    if m:
                        exact = int(m.group(1)) == now and int(m.group(2)) == expected
                        candidates.append((not exact, -md["seq"], node, ptr))
                except Exception:
                    continue
        candidates.sort(key=lambda c: (c[0], c[1]))
        for _, _, node, ptr in candidates[:1]:
            md = _md(node)
            bumps = _bumpers(ptr, md["seq"])
            if not bumps:
                return
            bump = bumps[0]
            if not bump["step"] and bump["at"]:
                _say("AG006", bump["at"], "in-place change of a tensor autograd saved for backward(): " + first_line,
                     "saved at %s, changed in place at %s, backward() at %s failed"
                     % (_fmt(md["at"]), _fmt(bump["at"]), _fmt(record["at"])))
                return
            _map_step_reuse(node, md, parents, record, first_line, bump)
        return
    if _SECOND in text or _FREED in text:
        freed = [n for n in order if (_md(n) or {}).get("freed_by") is not None]
        if not freed:
            return
        freed_ids = {id(n) for n in freed}
        boundary = [n for n in freed if not parents.get(id(n)) or any(id(p) not in freed_ids for p in parents[id(n)])]
        node = (boundary or freed)[0]
        md = _md(node)
        freer = S.backwards[md["freed_by"]]
        start = _current_iteration_start(record["stack"])
        if md["seq"] < start:
            at = _consumer_at(node, parents, start) or record["at"]
            _say("AG002", at, "a tensor built once, outside the training loop, from trainable tensors is used in every "
                              "iteration: its graph was freed by the first backward(). " + first_line,
                 "built at %s, its graph freed by backward() at %s, used again here; backward() at %s failed"
                 % (_fmt(md["at"]), _fmt(freer["at"]), _fmt(record["at"])))
        elif freer["roots"] != record["roots"]:
            _say("AG017", record["at"], "this loss shares a forward output with an earlier loss whose backward() freed "
                                        "it (no .detach() on the shared output). " + first_line,
                 "the shared part was built at %s and freed by backward() at %s" % (_fmt(md["at"]), _fmt(freer["at"])))


def _map_step_reuse(node, md, parents, record, first_line, bump):
    """A saved tensor changed by optimizer.step(): the graph that saved it was kept across the step."""
    retained = [S.backwards[i] for i in md["retained_by"] if S.backwards[i]["seq"] < bump["seq"]]
    if retained:
        keeper = retained[-1]
        _say("AG003", keeper["at"], "backward(retain_graph=True) kept this graph, then optimizer.step() changed a "
                                    "tensor it saved, and the graph was used again: " + first_line,
             "retained at %s, saved tensor (saved at %s) updated by optimizer.step(), backward() at %s failed"
             % (_fmt(keeper["at"]), _fmt(md["at"]), _fmt(record["at"])))
        if keeper["roots"] != record["roots"]:
            _say("AG017", record["at"], "this loss backpropagates through a forward output shared with an earlier loss, "
                                        "across optimizer.step() and without .detach(): " + first_line,
                 "shared graph built at %s, first backward() at %s" % (_fmt(md["at"]), _fmt(keeper["at"])))
        return
    start = _current_iteration_start(record["stack"])
    if md["seq"] < start:
        at = _consumer_at(node, parents, start) or record["at"]
        _say("AG002", at, "a tensor composed once from parameters is used after optimizer.step() changed them: "
                          + first_line, "built at %s; backward() at %s failed" % (_fmt(md["at"]), _fmt(record["at"])))
    else:
        _say("AG017", record["at"], "this loss backpropagates through a forward output whose saved tensors "
                                    "optimizer.step() changed (a shared graph without .detach()): " + first_line,
             "the shared part was built at %s" % _fmt(md["at"]))


# ---------------------------------------------------------------------------------------------------------------
# optimizer.step(): AG016 (gradients never zeroed), step marks for AG002/AG003/AG017
# ---------------------------------------------------------------------------------------------------------------
def _step_pre(optimizer, args, kwargs):
    S.in_step += 1
    if S.busy:
        return
    S.busy = True
    try:
        reused = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                entry = S.consumed.get(id(g))
                if entry is not None and entry[0]() is g and g._version != entry[1]:
                    reused.append(entry)
        if reused:
            stack = _stack()
            _say("AG016", _at(stack), "optimizer.step() uses gradients that still contain the ones an earlier step "
                                      "already applied: they are never zeroed, so they accumulate across steps",
                 "%d parameter(s) reached this step with the gradient tensor of the previous step (%s), added to by "
                 "backward() and never cleared" % (len(reused), _fmt(reused[0][2])))
    finally:
        S.busy = False


def _step_post(optimizer, args, kwargs):
    S.in_step = max(0, S.in_step - 1)
    if S.busy:
        return
    S.busy = True
    try:
        S.steps += 1
        seq = _tick()
        S.step_seqs.append(seq)
        at = _at(_stack())
        _observe_steps()
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is not None:
                    try:
                        if bool(g.any()):
                            S.consumed[id(g)] = (weakref.ref(g), g._version, at)
                    except Exception:
                        pass
    finally:
        S.busy = False


# ---------------------------------------------------------------------------------------------------------------
# AG009: tensors left behind by Module.to()/cuda()/double()
# ---------------------------------------------------------------------------------------------------------------
def _plain_tensors(module):
    for sub in module.modules():
        for name, value in list(vars(sub).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter) and not name.startswith("_"):
                yield sub, name, value


def _wrap_apply():
    real = torch.nn.Module._apply

    def _apply(self, *args, **kwargs):
        if S.apply_depth or S.busy:
            return real(self, *args, **kwargs)
        S.apply_depth += 1
        try:
            plain = [(sub, name, value, value.device, value.dtype) for sub, name, value in _plain_tensors(self)]
            out = real(self, *args, **kwargs)
        finally:
            S.apply_depth -= 1
        if not plain:
            return out
        fn = args[0] if args else kwargs.get("fn")
        if fn is None:
            return out
        S.busy = True
        try:
            where = _at(_stack())
            for sub, name, value, device, dtype in plain:
                if getattr(sub, name, None) is not value or value.device != device or value.dtype != dtype:
                    continue  # the module's own _apply moved it, or it was replaced
                try:  # what the move does to a tensor like this one
                    probe = fn(torch.empty(0, dtype=dtype, device=device))
                except Exception:
                    continue
                if not isinstance(probe, torch.Tensor) or (probe.device == device and probe.dtype == dtype):
                    continue
                at = (S.attr_lines.get((id(sub), name)) or [None])[0]
                if at:
                    _say("AG009", at, "a plain tensor attribute of a module (not a buffer): moving or casting the "
                                      "module left it behind",
                         "the module was moved to %s/%s at %s, but %s stayed %s/%s"
                         % (probe.device, str(probe.dtype).replace("torch.", ""), _fmt(where), name, device,
                            str(dtype).replace("torch.", "")))
        finally:
            S.busy = False
        return out

    _apply.__wrapped__ = real
    torch.nn.Module._apply = _apply
    real_state_dict = torch.nn.Module.state_dict

    def state_dict(self, *args, **kwargs):
        out = real_state_dict(self, *args, **kwargs)
        if S.apply_depth or S.busy or args or kwargs.get("destination") is not None or kwargs.get("prefix"):
            return out  # (a submodule's part of an outer call)
        S.busy = True
        try:
            where = _at(_stack())
            for sub, name, value in _plain_tensors(self):
                entry = S.attr_lines.get((id(sub), name))
                if not entry or not where:
                    continue
                at, sets, first, version = entry
                changed = sets > 0 or value is not first or value._version != version
                if changed:
                    _say("AG009", at, "a plain tensor attribute of a module (not a buffer): state_dict() leaves it "
                                      "out, so a checkpoint loses the values the module gave it",
                         "%s changed since it was made (set %d more time(s)); the state_dict() at %s has no entry "
                         "for it" % (name, sets, _fmt(where)))
        finally:
            S.busy = False
        return out

    state_dict.__wrapped__ = real_state_dict
    torch.nn.Module.state_dict = state_dict


# ---------------------------------------------------------------------------------------------------------------
# AG018 (and the attribute lines of AG009): setattr on modules and tensors
# ---------------------------------------------------------------------------------------------------------------
def _near_miss(name):
    return name != _TYPO_TARGET and difflib.SequenceMatcher(None, name.lower(), _TYPO_TARGET).ratio() >= 0.8


def _wrap_setattr():
    real_module = torch.nn.Module.__setattr__

    def module_setattr(self, name, value):
        real_module(self, name, value)
        if S.busy:
            return
        if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
            key = (id(self), name)
            if key in S.attr_lines:  # set again: the module's state moves on (a checkpoint must keep it)
                S.attr_lines[key][1] += 1
            else:
                stack = _stack()
                if stack:  # where it was made
                    S.attr_lines[key] = [_at(stack), 0, value, value._version]
        elif isinstance(value, bool) and _near_miss(name):
            flags = {p.requires_grad for p in self.parameters()}
            if flags and flags != {value}:
                _say("AG018", _at(_stack()), "misspelt requires_grad: this sets a new plain attribute %r; the "
                                             "parameters' requires_grad is unchanged" % name,
                     "%s = %s, but its parameters still have requires_grad=%s" % (name, value, not value))

    torch.nn.Module.__setattr__ = module_setattr
    real_tensor = torch.Tensor.__setattr__

    def tensor_setattr(self, name, value):
        real_tensor(self, name, value)
        if S.busy or name.startswith("_") or not isinstance(value, bool) or not _near_miss(name):
            return
        if bool(self.requires_grad) != value:
            _say("AG018", _at(_stack()), "misspelt requires_grad: this sets a new plain attribute %r; requires_grad "
                                         "is unchanged" % name,
                 "%s = %s, but requires_grad is still %s" % (name, value, bool(self.requires_grad)))

    torch.Tensor.__setattr__ = tensor_setattr


# ---------------------------------------------------------------------------------------------------------------
# AG012 creation hooks: torch.Tensor(n, ...) and the legacy typed constructors
# ---------------------------------------------------------------------------------------------------------------
def _sizes_only(args):
    return bool(args) and all(isinstance(a, int) and not isinstance(a, bool) for a in args) or (
        len(args) == 1 and isinstance(args[0], torch.Size))


def _wrap_constructors():
    real_new = torch.Tensor.__new__

    def new(*args, **kwargs):  # (*args, **kwargs): the signature torch._dynamo accepts for a wrapped __new__
        t = real_new(*args, **kwargs)
        if args and args[0] is torch.Tensor and _sizes_only(args[1:]) and not S.busy:
            _poison(t, _stack())
        return t

    torch.Tensor.__new__ = staticmethod(new)

    class _LegacyMeta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, cls._real)

        def __call__(cls, *args, **kwargs):
            t = cls._real(*args, **kwargs)
            if _sizes_only(args) and not S.busy:
                _poison(t, _stack())
            return t

    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor"):
        real = getattr(torch, name, None)
        if isinstance(real, type):
            setattr(torch, name, _LegacyMeta(name, (), {"_real": real}))


def _poison_factories(name, out):
    if name in ("empty", "empty_like", "new_empty", "empty_strided") and isinstance(out, torch.Tensor):
        _poison(out, _stack())


# ---------------------------------------------------------------------------------------------------------------
# AG015: a tensor with a graph accumulated across iterations, never backpropagated
# ---------------------------------------------------------------------------------------------------------------
def _graph_nodes(roots, cap=5000):
    seen, stack = set(), list(roots)
    while stack and len(seen) < cap:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(c for c, _ in getattr(node, "next_functions", ()) if c is not None)
    return seen


def _fn(t):
    try:
        return t.grad_fn if isinstance(t, torch.Tensor) else None
    except Exception:
        return None


def _graph_roots(value):
    if isinstance(value, torch.Tensor):
        items = [value]
    elif isinstance(value, (list, tuple)):
        items = value[-500:]
    elif isinstance(value, dict):
        items = list(value.values())[:200]
    else:
        return []
    flat = []
    for item in items:  # one level of containers inside (a list of per-step dicts of losses)
        if isinstance(item, dict):
            flat.extend(list(item.values())[:50])
        elif isinstance(item, (list, tuple)):
            flat.extend(item[:50])
        else:
            flat.append(item)
    return [fn for fn in map(_fn, flat) if fn is not None]


def _holders(frame):
    """(dotted name, roots) of what the loop's frame holds: locals, their containers, objects' attributes."""
    out = []
    try:
        items = list(frame.f_locals.items())
    except Exception:
        return out
    for name, value in items:
        if name.startswith("__"):
            continue
        roots = _graph_roots(value)
        if roots:
            out.append((name, roots))
        elif _plain_object(value):
            _object_holders(name, value, out, 2)
        elif isinstance(value, torch.nn.Module) and name == "self":
            _object_holders(name, value, out, 1)
    return out


def _plain_object(value):
    return hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType, torch.nn.Module, torch.Tensor)) \
        and not callable(value)


def _object_holders(prefix, obj, out, depth):
    try:
        attrs = list(vars(obj).items())[:100]
    except Exception:
        return
    for attr, value in attrs:
        if attr.startswith("__"):
            continue
        dotted = prefix + "." + attr
        roots = _graph_roots(value)
        if roots:
            out.append((dotted, roots))
        elif depth > 1 and _plain_object(value):
            _object_holders(dotted, value, out, depth - 1)


def _accumulation_line(site, dotted):
    path, first = site[0], site[1]
    if len(site) > 2:
        span = S.funcs.get(path, {}).get(first)
        if not span:
            return None
        start, last = span
    else:
        for start, last, loop in S.loops.get(path, ()):
            if loop == site:
                break
        else:
            return None
    tree = S.trees.get(path)
    if tree is None:
        return None
    parts = dotted.split(".")
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if not (start < line <= last):
            continue
        target, rank = None, 0
        if isinstance(node, ast.AugAssign):
            target = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0] if any(_dotted(n) == dotted for n in ast.walk(node.value)) else None
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
            target, rank = node.value.func.value, 1  # a statement calling a method of it: `outputs.append(loss)`
        if target is not None:
            while isinstance(target, ast.Subscript):
                target = target.value
            name = _dotted(target) or ""
            if name == dotted or (dotted.startswith(name + ".") and len(name.split(".")) >= min(2, len(parts))):
                found.append((rank, line))
    return (path, min(found)[1]) if found else None


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _observe_accumulators(site):
    frame = sys._getframe(2)
    while frame is not None and not (frame.f_code.co_filename == site[0] and frame.f_code.co_filename in S.user):
        frame = frame.f_back
    if frame is not None:
        _observe_frame(frame, site)


def _observe_steps():
    """At each optimizer.step(): what the user's functions on the stack hold (a training step written as a method
    called by a loop outside the user's files, as trainer libraries do)."""
    frame, looked = sys._getframe(2), 0
    while frame is not None and looked < 3:
        path = frame.f_code.co_filename
        if path in S.user and frame.f_code.co_name != "<module>":
            looked += 1
            span = S.funcs.get(path, {}).get(frame.f_code.co_firstlineno)
            if span:
                _observe_frame(frame, (path, frame.f_code.co_firstlineno, "def"))
        frame = frame.f_back


def _observe_frame(frame, site):
    for dotted, roots in _holders(frame):
        key = (site, dotted)
        entry = S.accum.setdefault(key, {"sizes": [], "roots": None, "grew": 0, "backwards": len(S.backwards)})
        seen = _graph_nodes(roots)
        old = entry["roots"]
        # Accumulation: the new graph holds the previous look's graph (total = total + loss, list.append), and it
        # spans training steps (a backward() ran in between), not one forward's own loop.
        if old and len(seen) > entry["sizes"][-1] and all(id(r) in seen for r in old) \
                and len(S.backwards) > entry["backwards"]:
            entry["grew"] += 1
        elif old:
            entry["grew"] = 0
        entry["sizes"].append(len(seen))
        entry["roots"] = roots
        entry["backwards"] = len(S.backwards)
        entry["seq"] = S.seq


def _finish_accumulators():
    for (site, dotted), entry in S.accum.items():
        sizes = entry["sizes"]
        if entry["grew"] < 1:
            continue
        roots = entry["roots"] or []
        mds = [_md(r) for r in roots]
        if mds and all(md is not None and md.get("used_by") is not None and
                       S.backwards[md["used_by"]]["seq"] > entry["seq"] for md in mds):
            continue  # a backward() after the last look used all of it: accumulating was the point
        at = _accumulation_line(site, dotted) or ((mds[0] or {}).get("at") if mds else None)
        if at is None:
            continue
        _say("AG015", at, "%s keeps every iteration's autograd graph alive (accumulated without .item()/.detach()); "
                          "memory grows every iteration" % dotted,
             "the graph held by %s grew over the iterations: %s nodes" % (dotted, " -> ".join(map(str, sizes))))


# ---------------------------------------------------------------------------------------------------------------
# warnings
# ---------------------------------------------------------------------------------------------------------------
def _wrap_warnings():
    real = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        try:
            text = str(message)
            for code, pattern in _WARNINGS:
                if re.search(pattern, text):
                    at = _at(_stack()) or ((filename, lineno) if filename in S.user else None)
                    _say(code, at, text.split("\n")[0][:300], "%s: %s" % (category.__name__, text[:300]))
        except Exception:
            pass
        return real(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning
    for _, pattern in _WARNINGS:
        warnings.filterwarnings("always", message=pattern.replace("\\", ""))


# ---------------------------------------------------------------------------------------------------------------
# The interface
# ---------------------------------------------------------------------------------------------------------------
class _FactoryMode(AuditMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = AuditMode.__torch_function__(self, func, types, args, kwargs)
        if not S.busy:
            name = getattr(func, "__name__", "")
            if name.startswith("empty") or name == "new_empty":
                S.busy = True
                try:
                    _poison_factories(name, out)
                finally:
                    S.busy = False
        return out


def _index_loops(path):
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
    except Exception:
        return
    S.trees[path] = tree
    loops = []
    funcs = S.funcs.setdefault(path, {})
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            span = (node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno)
            funcs[first] = funcs[node.lineno] = span
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            loops.append((node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno, (path, node.lineno)))
    S.loops[path] = loops


def install(report, user_files):
    S.report = report
    S.user = set(user_files)
    S.trees = {}
    S.funcs = {}
    for path in S.user:
        _index_loops(path)
    torch.autograd.backward = _watched(REAL_BACKWARD, "backward")
    torch.autograd.grad = _watched(REAL_GRAD, "grad")
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    register_optimizer_step_pre_hook(_step_pre)
    register_optimizer_step_post_hook(_step_post)
    _wrap_apply()
    _wrap_setattr()
    _wrap_constructors()
    _wrap_warnings()
    S.mode = _FactoryMode()
    S.mode.__enter__()


def step_boundary(loop_site, iteration):
    if S.busy:
        return
    site = (loop_site[0], int(loop_site[1]))
    S.busy = True
    try:
        S.iter_start[site] = _tick()
        _observe_accumulators(site)
    finally:
        S.busy = False


def finish(exc):
    S.busy = True
    try:
        if exc is not None:
            _map_exception(exc)
        _finish_accumulators()
    finally:
        S.busy = False


def _innermost_user(tb):
    at = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in S.user:
            at = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return at


def _map_exception(exc):
    names = [cls.__name__ for cls in type(exc).__mro__]
    text = str(exc)
    at = _innermost_user(exc.__traceback__)
    if at is None:
        return
    first = text.split("\n")[0][:300]
    for code, pattern, types_ in _ERRORS:
        if any(n in types_ for n in names) and re.search(pattern, text, re.I):
            _say(code, at, first, "%s raised at %s" % (type(exc).__name__, _fmt(at)))
            return
    if "TypeError" in names:
        match = re.search(r"unexpected keyword argument '(\w+)'", text)
        if match and _near_miss(match.group(1)):
            _say("AG018", at, "misspelt requires_grad keyword: " + first, "TypeError raised at %s" % _fmt(at))
            return
        if "not subscriptable" in text:
            source = _source_line(at)
            for m in re.finditer(r"\btorch\.(\w+)\s*\[", source):
                if callable(getattr(torch, m.group(1), None)):
                    _say("AG013", at, "a torch factory subscripted instead of called: " + first,
                         "torch.%s[...] at %s" % (m.group(1), _fmt(at)))
                    return


def _source_line(at):
    try:
        with open(at[0], encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        return lines[at[1] - 1]
    except Exception:
        return ""
