"""Child-side instrumentation of `autograd-lsp explain` (the only explain code that imports torch).

The parent never imports this module: ``runner.py`` reads this file's text and prepends one line to
the confirm reproducer that ``exec``s it inside the confirm harness's child process, with a spec
(``SPEC``: the flagged lines, the expressions to capture, the reproducer->user line map). It then
watches the whole run:

* a ``TorchFunctionMode`` sees every torch call of the program: each new ``grad_fn`` node gets the
  user's line, call stack, module call and the versions of the tensors it saved (in
  ``node.metadata["agl"]``); any call that raised a tensor argument's ``_version`` is an in-place
  op (logged with its line, storage and versions before/after: no list of op names needed);
  ``detach``/``.data``/``no_grad`` results are marked as graph cuts; ``requires_grad`` flips logged;
* ``torch.autograd.backward``/``grad`` are wrapped: the graph is walked before each call (stale
  leaves, parameters unfrozen after the forward), marked as freed after a call that does not retain
  it, and a failure is explained (which in-place op bumped the saved tensor, which earlier backward
  freed the graph and which tensor carries it);
* ``zero_grad``/``step`` (optimizer step post hook) add rows to the versions table;
* ``__agl__.before()/after()`` around the flagged statement capture the graph at the line.

Everything found goes to the harness's result document under ``"explain"`` (plain JSON values).
Keep it runnable on any Python 3.8+ with torch 2.x: the user's interpreter runs it.
"""
import inspect
import re
import sys
import weakref

import torch
from torch.overrides import TorchFunctionMode

REPRO = USER_GLOBALS["__file__"]  # noqa: F821 - given by the exec that runs this file
LINE_MAP = {int(k): v for k, v in SPEC["line_map"].items()}  # noqa: F821
FLAG_FIRST, FLAG_LAST = SPEC["flagged"]  # noqa: F821
MAX_NODES = 20000
MAX_LOG = 20000
MAX_ROWS = 16
MAX_TRACKED = 8
_VERSION_RE = re.compile(r"is at version (\d+); expected version (\d+)")
_OUTPUT_RE = re.compile(r"output (\d+) of (\w+)")


def _result_doc():
    """The confirm harness's hooks object and result document (written as JSON when the run ends)."""
    import builtins

    hooks = getattr(builtins, "__agl__", None)
    result = getattr(type(hooks).__init__, "__globals__", {}).get("RESULT") if hooks is not None else None
    return hooks, result


HOOKS, RESULT = _result_doc()
DOC = {"capture": None, "culprits": [], "backwards": [], "inplace": [], "versions": {"leaves": [], "rows": []},
       "notes": [], "executions": 0, "inplace_ops": 0}
if RESULT is not None:
    RESULT["explain"] = DOC


class State:
    seq = 0
    busy = False
    inside = False
    captured_in_exec = False
    calls = []  # module call stack: (call id, module)
    call_counter = 0
    toggles = []  # (seq, line, tensor weakref, value)
    tracked = []  # leaves of the versions table (strong refs: they outlive the table)
    reported = set()
    inplace = []  # every in-place op: line, storage, versions; "ref" names the tensor lazily


def _tick():
    State.seq += 1
    return State.seq


def _user_line(lineno):
    return LINE_MAP.get(lineno) or None


def _user_frames():
    """User frames on the stack, innermost first: [(frame, user line)]."""
    out = []
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == REPRO:
            line = _user_line(frame.f_lineno)
            if line:
                out.append((frame, line))
        frame = frame.f_back
    return out


def _stack_of(frames):
    return [[f.f_code.co_name, line] for f, line in frames]


def _is_tensor(value):
    return isinstance(value, torch.Tensor)


def _tensor_args(args, kwargs):
    for value in list(args) + list(kwargs.values()):
        if _is_tensor(value):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value[:64]:
                if _is_tensor(item):
                    yield item


def _ptr(t):
    try:
        return t.untyped_storage().data_ptr()
    except Exception:
        return None


def _shape(t):
    try:
        return list(t.shape)
    except Exception:
        return None


def _dtype(t):
    return str(t.dtype).replace("torch.", "")


def _op_name(func):
    name = getattr(func, "__name__", None) or str(func)
    return name


# ---------------------------------------------------------------------------------------------
# Names: what the user calls a tensor/module, found in the frames' locals and module attributes
# ---------------------------------------------------------------------------------------------
def _names(frames):
    """id(object) -> [(name, frame code name, is-attribute-path)] for tensors, modules, grad_fn nodes."""
    found = {}

    def add(obj, name, code, dotted):
        found.setdefault(id(obj), []).append((name, code, dotted))
        if _is_tensor(obj) and obj.grad_fn is not None:
            found.setdefault(id(obj.grad_fn), []).append((name, code, dotted))

    seen_modules = set()
    for frame, _ in frames:
        code = frame.f_code.co_name
        try:
            items = list(frame.f_locals.items())
        except Exception:
            continue
        modules = []
        for name, value in items:
            if name.startswith("__"):
                continue
            if _is_tensor(value):
                add(value, name, code, False)
            elif isinstance(value, torch.nn.Module):
                modules.append((name, value))
            elif isinstance(value, (list, tuple)) and value and len(value) <= 64:
                for i, item in enumerate(value):
                    if _is_tensor(item):
                        add(item, "%s[%d]" % (name, i), code, True)
            elif name == "self" and hasattr(value, "__dict__"):
                for attr, item in list(vars(value).items())[:200]:
                    if _is_tensor(item):
                        add(item, "self." + attr, code, True)
        for name, module in modules:
            if id(module) in seen_modules:
                continue
            seen_modules.add(id(module))
            try:
                for sub, child in module.named_modules(prefix=name):
                    found.setdefault(id(child), []).append((sub, code, True))
                    for attr, item in list(vars(child).items())[:200]:
                        if _is_tensor(item) and not attr.startswith("_"):
                            add(item, sub + "." + attr, code, True)
                for sub, param in module.named_parameters(prefix=name):
                    add(param, sub, code, True)
                for sub, buf in module.named_buffers(prefix=name):
                    add(buf, sub, code, True)
            except Exception:
                pass
    return found


def _best_name(names, obj):
    entries = names.get(id(obj))
    if not entries:
        return None, None
    if isinstance(obj, torch.nn.Parameter):  # `model.fc.weight` rather than a loop variable `p`
        dotted = [e for e in entries if e[2] and "[" not in e[0]]
        if dotted:
            return dotted[0][0], dotted[0][1]
    return entries[0][0], entries[0][1]


def _line_in(stack, code):
    """The line of the creation stack in the frame `code` (where the name is bound), else innermost."""
    for name, line in stack or ():
        if name == code:
            return line
    return stack[0][1] if stack else None


# ---------------------------------------------------------------------------------------------
# Tagging new graph nodes
# ---------------------------------------------------------------------------------------------
def _module_stack():
    out = []
    for call, module in State.calls:
        cls = type(module)
        forward = getattr(cls, "forward", None)
        user = getattr(getattr(forward, "__code__", None), "co_filename", None) == REPRO
        container = isinstance(module, (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict))
        out.append([call, id(module), cls.__name__, user, container])
    return out


def _saved_of(node):
    saved = {}
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(node, attr)
        except Exception:
            continue
        items = [value] if _is_tensor(value) else [v for v in value if _is_tensor(v)] if isinstance(value, (list, tuple)) else []
        for i, t in enumerate(items[:8]):
            key = attr[len("_saved_"):] + ("" if _is_tensor(value) else "[%d]" % i)
            saved[key] = {"ptr": _ptr(t), "version": t._version, "shape": _shape(t), "dtype": _dtype(t)}
    return saved


def _tag(root, seq, op, frames, inputs):
    line = frames[0][1] if frames else None
    stack = _stack_of(frames)
    modules = _module_stack()
    consts, cuts = [], []
    for t in inputs:
        cut = getattr(t, "_agl_cut", None)
        if cut is not None and not t.requires_grad:
            cuts.append(dict(cut, ref=weakref.ref(t)))
        elif not t.requires_grad and len(consts) < 4:
            consts.append(weakref.ref(t))
    todo = [(root, False)]
    count = 0
    while todo and count < 256:
        node, inner = todo.pop()
        md = node.metadata
        if "agl" in md:
            continue
        count += 1
        leaf_versions = {}
        for child, _ in node.next_functions:
            if child is None:
                continue
            if type(child).__name__ == "AccumulateGrad":
                leaf = child.variable
                leaf_versions[id(leaf)] = [leaf._version, weakref.ref(leaf)]
            else:
                todo.append((child, True))
        md["agl"] = {"seq": seq, "line": line, "stack": stack, "op": op, "modules": modules, "inner": inner,
                     "saved": _saved_of(node), "leaf_versions": leaf_versions,
                     "cuts": [] if inner else cuts, "consts": [] if inner else consts}


def _local_name(frames, tensor):
    """The plain local name of `tensor` in the innermost user frame (cheap: no module scan)."""
    if not frames or tensor is None:
        return None
    try:
        for name, value in frames[0][0].f_locals.items():
            if value is tensor:
                return name
    except Exception:
        pass
    return None


def _mark_cut(out, kind, frames, source=None):
    of = _local_name(frames, source)
    for t in out if isinstance(out, (list, tuple)) else [out]:
        if _is_tensor(t) and not t.requires_grad:
            try:
                t._agl_cut = {"kind": kind, "line": frames[0][1] if frames else None, "of": of}
            except Exception:
                pass


def _record_inplace(func, bumped, frames, seq):
    for t, before, after in bumped:
        DOC["inplace_ops"] += 1
        if len(State.inplace) < MAX_LOG:
            State.inplace.append({"seq": seq, "op": _op_name(func), "line": frames[0][1] if frames else None,
                                  "stack": _stack_of(frames), "ptr": _ptr(t), "from": before, "to": after,
                                  "shape": _shape(t), "ref": weakref.ref(t),
                                  "via": (getattr(t, "_agl_cut", None) or {}).get("kind"), "of": (getattr(t, "_agl_cut", None) or {}).get("of")})


_PASS_THROUGH = {"backward", "__repr__", "__format__", "__str__", "tolist", "item", "dim", "size", "numel",
                 "__len__", "__bool__", "__hash__"}


class ExplainMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if State.busy:
            return func(*args, **kwargs)
        name = _op_name(func)
        if name == "__get__":
            out = func(*args, **kwargs)
            prop = getattr(getattr(func, "__self__", None), "__name__", "")
            if prop == "data" and args and _is_tensor(args[0]) and args[0].requires_grad:
                _mark_cut(out, ".data", _user_frames(), args[0])
            return out
        if name in _PASS_THROUGH:
            return func(*args, **kwargs)
        if name in ("__set__", "requires_grad_"):
            out = func(*args, **kwargs)
            prop = getattr(getattr(func, "__self__", None), "__name__", "") if name == "__set__" else "requires_grad"
            if prop == "requires_grad" and args and _is_tensor(args[0]):
                frames = _user_frames()
                State.toggles.append((_tick(), frames[0][1] if frames else None, weakref.ref(args[0]), bool(args[0].requires_grad)))
            return out
        inputs = list(_tensor_args(args, kwargs))
        before = [(t, t._version) for t in inputs]
        try:
            out = func(*args, **kwargs)
        except RuntimeError as error:
            if "leaf Variable that requires grad is being used in an in-place operation" in str(error):
                _culprit_leaf_inplace(func, inputs, error)
            raise
        seq = _tick()
        frames = None
        bumped = [(t, v, t._version) for t, v in before if t._version != v]
        if bumped:
            frames = _user_frames()
            _record_inplace(func, bumped, frames, seq)
        outs = out if isinstance(out, (list, tuple)) else [out]
        for t in outs[:64]:
            if not _is_tensor(t):
                continue
            fn = t.grad_fn
            if fn is not None:
                if "agl" not in fn.metadata:
                    if frames is None:
                        frames = _user_frames()
                    _tag(fn, seq, name, frames, inputs)
            elif t.requires_grad:
                if getattr(t, "_agl_line", None) is None and not any(t is i for i in inputs):
                    if frames is None:
                        frames = _user_frames()
                    try:
                        t._agl_line = frames[0][1] if frames else None
                    except Exception:
                        pass
            elif name in ("detach", "detach_") or not torch.is_grad_enabled():
                if any(i.requires_grad for i in inputs):  # (a non-differentiable op, e.g. zeros_like, is no cut)
                    if frames is None:
                        frames = _user_frames()
                    source = next((i for i in inputs if i.requires_grad), None)
                    _mark_cut(t, "detach" if name in ("detach", "detach_") else "no_grad", frames, source)
        return out


def _culprit_leaf_inplace(func, inputs, error):
    frames = _user_frames()
    names = _names(frames)
    leaf = next((t for t in inputs if t.is_leaf and t.requires_grad), None)
    name, _ = _best_name(names, leaf) if leaf is not None else (None, None)
    _add_culprit({"kind": "inplace-on-leaf", "line": frames[0][1] if frames else None, "op": _op_name(func),
                  "variable": name, "message": str(error).split("\n")[0],
                  "tensor": _leaf_info(leaf, names) if leaf is not None else None})


def _add_culprit(entry):
    key = (entry["kind"], entry.get("line"), entry.get("carrier", {}).get("name") if isinstance(entry.get("carrier"), dict) else None)
    if key in State.reported:
        return
    State.reported.add(key)
    DOC["culprits"].append(entry)


# ---------------------------------------------------------------------------------------------
# Graph walking and serialisation
# ---------------------------------------------------------------------------------------------
def _walk(roots):
    """BFS over grad_fn nodes from root tensors: (order, parents) with parents[id] = [parent ids]."""
    order, seen, parents = [], {}, {}
    queue = [t.grad_fn for t in roots if _is_tensor(t) and t.grad_fn is not None]
    for node in queue:
        seen[id(node)] = node
    i = 0
    while i < len(queue) and len(order) < MAX_NODES:
        node = queue[i]
        i += 1
        order.append(node)
        for child, _ in getattr(node, "next_functions", ()):
            if child is None:
                continue
            parents.setdefault(id(child), []).append(id(node))
            if id(child) not in seen:
                seen[id(child)] = child
                queue.append(child)
    return order, parents


def _leaf_info(t, names):
    name, code = _best_name(names, t)
    return {"name": name, "shape": _shape(t), "dtype": _dtype(t), "requires_grad": bool(t.requires_grad),
            "is_leaf": bool(t.is_leaf), "version": t._version, "grad": t.grad is not None,
            "param": isinstance(t, torch.nn.Parameter), "line": getattr(t, "_agl_line", None),
            "device": str(t.device)}


def _saved_state(node, attr, entry):
    if "[" in attr:
        return dict(entry, attr=attr, current=None, state="unknown")
    try:
        value = getattr(node, "_saved_" + attr)
        current = value._version if _is_tensor(value) else None
        state = "ok" if current == entry["version"] else "modified"
    except RuntimeError as error:
        text = str(error)
        match = _VERSION_RE.search(text)
        if match:
            current, state = int(match.group(1)), "modified"
        elif "second time" in text or "freed" in text:
            current, state = None, "freed"
        else:
            current, state = None, "unknown"
    return {"attr": attr, "shape": entry["shape"], "dtype": entry["dtype"], "saved_version": entry["version"],
            "version": current, "state": state}


def _serialise(roots, frames, names=None):
    names = names if names is not None else _names(frames)
    module_names = {}
    order, parents = _walk(roots)
    ids = {id(n): i for i, n in enumerate(order)}
    nodes, edges = [], []
    for i, node in enumerate(order):
        kind = type(node).__name__
        if kind == "AccumulateGrad":
            info = _leaf_info(node.variable, names)
            nodes.append(dict(info, id=i, kind="leaf", op="AccumulateGrad"))
            continue
        md = node.metadata.get("agl") or {}
        name, code = _best_name(names, node)
        modules = []
        for call, mid, cls, user, container in md.get("modules", ()):
            if mid not in module_names:
                entries = names.get(mid)
                module_names[mid] = entries[0][0] if entries else None
            modules.append({"call": call, "name": module_names[mid], "cls": cls, "user": user, "container": container})
        record = {"id": i, "kind": "op", "op": kind, "call": md.get("op"), "line": md.get("line"),
                  "stack": md.get("stack"), "seq": md.get("seq"), "inner": md.get("inner", False), "name": name,
                  "name_line": _line_in(md.get("stack"), code) if name else None, "modules": modules,
                  "saved": [_saved_state(node, a, e) for a, e in sorted(md.get("saved", {}).items())],
                  "freed_by": md.get("freed_by"), "tagged": bool(md)}
        cuts = []
        for cut in md.get("cuts", ()):
            t = cut["ref"]()
            cuts.append({"kind": cut["kind"], "line": cut["line"], "of": cut.get("of"),
                         "name": _best_name(names, t)[0] if t is not None else None,
                         "shape": _shape(t) if t is not None else None})
        consts = []
        for ref in md.get("consts", ()):
            t = ref()
            if t is not None:
                cname = _best_name(names, t)[0]
                if cname:
                    consts.append({"name": cname, "shape": _shape(t), "dtype": _dtype(t)})
        record["cuts"], record["consts"] = cuts, consts
        nodes.append(record)
        for child, _ in node.next_functions:
            if child is not None and id(child) in ids:
                edges.append([i, ids[id(child)]])
    truncated = len(order) >= MAX_NODES
    return {"nodes": nodes, "edges": edges, "truncated": truncated}


def _root_info(expr, value, names):
    info = {"expr": expr, "shape": _shape(value), "dtype": _dtype(value), "requires_grad": bool(value.requires_grad),
            "is_leaf": bool(value.is_leaf), "version": value._version, "grad_fn": type(value.grad_fn).__name__ if value.grad_fn is not None else None}
    cut = getattr(value, "_agl_cut", None)
    if cut is not None and not value.requires_grad:
        info["cut"] = dict(cut)
    return info


def _capture(pairs, frames, how):
    """The graph of the tensors `pairs` [(expr, tensor)] computed/backpropagated at the flagged line."""
    State.busy = True
    try:
        names = _names(frames)
        roots = [t for _, t in pairs]
        graph = _serialise(roots, frames, names)
        order, _ = _walk(roots)
        index = {id(n): i for i, n in enumerate(order)}
        targets = []
        for expr, t in pairs:
            info = _root_info(expr, t, names)
            info["node"] = index.get(id(t.grad_fn)) if t.grad_fn is not None else None
            if t.grad_fn is None and t.requires_grad:
                info["leaf"] = _leaf_info(t, names)
            targets.append(info)
        # The latest execution of the line wins: in a loop, the iteration that failed (or the last one).
        DOC["capture"] = {"how": how, "execution": DOC["executions"], "line": frames[0][1] if frames else None,
                          "targets": targets, "graph": graph}
        State.captured_in_exec = True
    finally:
        State.busy = False


def _eval_targets(frame, exprs):
    pairs = []
    for expr in exprs:
        try:
            value = eval(expr, frame.f_globals, frame.f_locals)
        except Exception:
            continue
        if _is_tensor(value):
            pairs.append((expr, value))
        elif isinstance(value, (list, tuple)) and len(value) <= 16:
            pairs.extend(("%s[%d]" % (expr, i), v) for i, v in enumerate(value) if _is_tensor(v))
    return pairs


# ---------------------------------------------------------------------------------------------
# Backward: before (stale leaves, late unfreezing), after (freed), failure (culprit)
# ---------------------------------------------------------------------------------------------
def _bumpers(ptr, after_seq, from_version, to_version=None):
    out = []
    for entry in State.inplace:
        if entry["ptr"] != ptr or entry["seq"] <= after_seq or entry["from"] < from_version:
            continue
        if to_version is not None and entry["to"] > to_version:
            continue
        out.append(entry)
    return out


def _public(entry, names=None):
    out = {k: entry[k] for k in ("op", "line", "stack", "from", "to", "shape") if k in entry}
    t = entry["ref"]()
    out["variable"] = _best_name(names, t)[0] if (t is not None and names) else None
    return out


def _check_stale(order, parents, frames, names, backward):
    by_id = {id(n): n for n in order}
    for node in order:
        md = node.metadata.get("agl")
        if not md:
            continue
        for leaf_id, (version, ref) in md.get("leaf_versions", {}).items():
            leaf = ref()
            if leaf is None or leaf._version <= version:
                continue
            bumps = _bumpers(_ptr(leaf), md["seq"], version)
            if not bumps:
                continue
            first = bumps[0]["seq"]
            top = node  # walk up while the consumer is older than the change: the old graph's root
            while True:
                ups = [by_id[p] for p in parents.get(id(top), []) if p in by_id]
                older = [u for u in ups if (u.metadata.get("agl") or {}).get("seq", 0) < first and u.metadata.get("agl")]
                if not older:
                    break
                top = older[0]
            tmd = top.metadata.get("agl") or {}
            carrier, code = _best_name(names, top)
            leaf_name = _best_name(names, leaf)[0]
            _add_culprit({
                "kind": "stale-graph", "line": _line_in(tmd.get("stack"), code) if carrier else tmd.get("line"),
                "carrier": {"name": carrier, "line": _line_in(tmd.get("stack"), code) if carrier else tmd.get("line"),
                            "op": type(top).__name__},
                "leaf": {"name": leaf_name, "saved_version": version, "version": leaf._version},
                "modified_by": [_public(b, names) for b in bumps[:8]],
                "backward": backward,
                "message": "the graph of %s was built from %s at version %d; %s is now at version %d"
                           % (carrier or type(top).__name__, leaf_name or "a leaf", version, leaf_name or "it", leaf._version),
            })


def _check_data_writes(order, names, backward):
    """Saved tensors whose storage was written through `.data` after they were saved: autograd cannot
    see such a write (no version bump), so this backward silently uses the new values."""
    for node in order:
        md = node.metadata.get("agl")
        if not md:
            continue
        for attr, entry in md.get("saved", {}).items():
            writes = [e for e in State.inplace if e["ptr"] == entry["ptr"] and e["seq"] > md["seq"] and e.get("via") == ".data"]
            if writes:
                first = writes[0]
                _add_culprit({
                    "kind": "data-write", "line": first["line"], "op": first["op"], "variable": first.get("of"),
                    "saved_by": {"line": md.get("line"), "op": type(node).__name__, "attr": attr},
                    "backward": backward,
                    "message": "written through .data after autograd saved it: the backward uses the new values, unseen",
                })
                return


def _check_late_unfreeze(order, roots, frames, names, backward):
    leaves = {id(n.variable) for n in order if type(n).__name__ == "AccumulateGrad"}
    root_seq = min([(t.grad_fn.metadata.get("agl") or {}).get("seq", 0) for t in roots if _is_tensor(t) and t.grad_fn is not None] or [0])
    lines = {}
    for seq, line, ref, value in State.toggles:
        t = ref()
        if t is None or not value or seq <= root_seq or id(t) in leaves or not t.requires_grad:
            continue
        lines.setdefault(line, []).append(t)
    for line, tensors in lines.items():
        roots_md = [t.grad_fn.metadata.get("agl") or {} for t in roots if _is_tensor(t) and t.grad_fn is not None]
        _add_culprit({
            "kind": "requires-grad-after-forward", "line": line,
            "variables": [_best_name(names, t)[0] for t in tensors],
            "graph_line": roots_md[0].get("line") if roots_md else None,
            "backward": backward,
            "message": "requires_grad was turned on after the graph was built; this backward cannot reach it",
        })


def _mark_freed(order, index):
    for node in order:
        md = node.metadata.get("agl")
        if md is not None and md.get("freed_by") is None and md.get("saved"):
            md["freed_by"] = index


def _explain_failure(error, roots, order, parents, frames, backward):
    text = str(error)
    names = _names(frames)
    first_line = text.split("\n")[0]
    match = _VERSION_RE.search(text)
    if match:
        now, expected = int(match.group(1)), int(match.group(2))
        output = _OUTPUT_RE.search(text)
        candidates = []
        for node in order:
            md = node.metadata.get("agl")
            if not md:
                continue
            for attr, entry in md.get("saved", {}).items():
                if "[" in attr:
                    continue
                try:
                    getattr(node, "_saved_" + attr)
                except RuntimeError as inner:
                    m = _VERSION_RE.search(str(inner))
                    if m:
                        candidates.append((int(m.group(1)) == now and int(m.group(2)) == expected, node, attr, entry))
        candidates.sort(key=lambda c: not c[0])
        if candidates:
            _, node, attr, entry = candidates[0]
            md = node.metadata["agl"]
            bumps = _bumpers(entry["ptr"], md["seq"], expected, now)
            tensor_name = _name_by_storage(entry["ptr"], names, frames)  # a tensor in scope on that storage
            public = [_public(b, names) for b in bumps[:8]]
            culprit = {
                "kind": "version", "message": first_line, "version_expected": expected, "version_now": now,
                "line": public[0]["line"] if public else None, "op": public[0]["op"] if public else None,
                "variable": (public[0]["variable"] if public else None) or tensor_name,
                "bumps": public,
                "saved_by": {"line": md.get("line"), "op": type(node).__name__, "attr": attr, "stack": md.get("stack")},
                "tensor": {"name": tensor_name, "shape": entry["shape"], "dtype": entry["dtype"],
                           "output_of": output.group(2) if output else None},
                "backward": backward,
            }
            if not bumps:
                culprit["note"] = "no logged in-place op bumped this storage (modified outside torch calls, e.g. through .data or numpy)"
            _add_culprit(culprit)
            return
        _add_culprit({"kind": "version", "message": first_line, "line": None, "backward": backward,
                      "version_expected": expected, "version_now": now, "note": "the saved tensor was not found in the walked graph"})
        return
    if "backward through the graph a second time" in text or "have already been freed" in text:
        freed = {id(n) for n in order if (n.metadata.get("agl") or {}).get("freed_by") is not None}
        by_id = {id(n): n for n in order}
        boundary = []
        for node in order:
            if id(node) not in freed:
                continue
            ups = parents.get(id(node), [])
            if not ups or any(p not in freed for p in ups):
                boundary.append(node)
        if not boundary:
            _add_culprit({"kind": "freed", "message": first_line, "line": None, "backward": backward,
                          "note": "no node of this graph was freed by an earlier backward that was watched"})
            return
        node = boundary[0]
        md = node.metadata["agl"]
        freed_index = md["freed_by"]
        freer = DOC["backwards"][freed_index] if freed_index < len(DOC["backwards"]) else {}
        # the tensor carrying the old graph: walk up while the consumer is older than the freeing backward
        while True:
            ups = [by_id[p] for p in parents.get(id(node), []) if p in by_id]
            older = [u for u in ups if u.metadata.get("agl") and u.metadata["agl"]["seq"] < freer.get("seq", 0)]
            if not older:
                break
            node = older[0]
        md = node.metadata["agl"]
        carrier, code = _best_name(names, node)
        _add_culprit({
            "kind": "freed", "message": first_line, "line": freer.get("line"),
            "freed_by": {"line": freer.get("line"), "index": freed_index, "call": freer.get("call")},
            "carrier": {"name": carrier, "line": _line_in(md.get("stack"), code) if carrier else md.get("line"),
                        "op": type(node).__name__},
            "boundary": [{"op": type(n).__name__, "line": (n.metadata.get("agl") or {}).get("line"),
                          "name": _best_name(names, n)[0]} for n in boundary[:6]],
            "backward": backward,
        })


def _name_by_storage(ptr, names, frames):
    for frame, _ in frames:
        try:
            items = list(frame.f_locals.items())
        except Exception:
            continue
        for name, value in items:
            if _is_tensor(value) and _ptr(value) == ptr:
                return name
    for frame, _ in frames:  # module parameters and buffers
        for value in list(frame.f_locals.values()):
            if isinstance(value, torch.nn.Module):
                try:
                    for sub, param in value.named_parameters():
                        if _ptr(param) == ptr:
                            return _best_name(names, param)[0] or sub
                except Exception:
                    pass
    return None


def _row(event, frames):
    rows = DOC["versions"]["rows"]
    if len(rows) >= MAX_ROWS or not State.tracked:
        return
    names = None
    leaves = DOC["versions"]["leaves"]
    for i, t in enumerate(State.tracked):
        if leaves[i]["name"] is None:
            names = names if names is not None else _names(_user_frames())
            leaves[i]["name"] = _best_name(names, t)[0]
    rows.append({"event": event, "line": frames[0][1] if frames else None,
                 "cells": [[t._version, t.grad is not None] for t in State.tracked]})


def _track(tensors, names):
    known = {id(t) for t in State.tracked}
    for t in tensors:
        if len(State.tracked) >= MAX_TRACKED:
            return
        if id(t) not in known and _is_tensor(t):
            State.tracked.append(t)
            known.add(id(t))
            DOC["versions"]["leaves"].append({"name": _best_name(names, t)[0], "shape": _shape(t)})


REAL_BACKWARD = torch.autograd.backward
REAL_GRAD = torch.autograd.grad
_BACKWARD_SIG = inspect.signature(REAL_BACKWARD)
_GRAD_SIG = inspect.signature(REAL_GRAD)


def _as_list(value):
    if _is_tensor(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if _is_tensor(v)]
    return []


def _watched(real, signature, call):
    def wrapper(*args, **kwargs):
        if State.busy:
            return real(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return real(*args, **kwargs)
        first = "tensors" if "tensors" in bound.arguments else "outputs"
        roots = _as_list(bound.arguments.get(first))
        retain = bound.arguments.get("retain_graph")
        create = bound.arguments.get("create_graph", False)
        frames = _user_frames()
        index = len(DOC["backwards"])
        backward = {"index": index, "line": frames[0][1] if frames else None, "call": call, "seq": _tick(),
                    "retain_graph": bool(retain if retain is not None else create), "status": "running"}
        DOC["backwards"].append(backward)
        if State.inside and not State.captured_in_exec:
            _capture([("(%s of line %s)" % (call, backward["line"]), t) for t in roots], frames, call)
        State.busy = True
        try:
            order, parents = _walk(roots)
            names = _names(frames)
            leaves = [n.variable for n in order if type(n).__name__ == "AccumulateGrad"]
            _track(leaves, names)
            ref = {"index": index, "line": backward["line"], "call": call}
            _check_stale(order, parents, frames, names, ref)
            _check_late_unfreeze(order, roots, frames, names, ref)
            _check_data_writes(order, names, ref)
            try:
                result = real(*args, **kwargs)
            except RuntimeError as error:
                backward["status"] = "error"
                _explain_failure(error, roots, order, parents, frames, ref)
                raise
            backward["status"] = "ok"
            if not backward["retain_graph"]:
                _mark_freed(order, index)
            _row(call, frames)
            return result
        finally:
            State.busy = False

    wrapper.__wrapped__ = real
    return wrapper


torch.autograd.backward = _watched(REAL_BACKWARD, _BACKWARD_SIG, "backward")
torch.autograd.grad = _watched(REAL_GRAD, _GRAD_SIG, "autograd.grad")


def _wrap_zero_grad(cls):
    real = cls.zero_grad

    def zero_grad(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        if not State.busy:
            State.busy = True
            try:
                frames = _user_frames()
                if isinstance(self, torch.optim.Optimizer):
                    _track([p for g in self.param_groups for p in g["params"]], _names(frames))
                _row("zero_grad", frames)
            finally:
                State.busy = False
        return out

    zero_grad.__wrapped__ = real
    cls.zero_grad = zero_grad


_wrap_zero_grad(torch.optim.Optimizer)
_wrap_zero_grad(torch.nn.Module)


def _after_step(optimizer, args, kwargs):
    if State.busy:
        return
    State.busy = True
    try:
        frames = _user_frames()
        _track([p for g in optimizer.param_groups for p in g["params"]], _names(frames))
        _row("step", frames)
    finally:
        State.busy = False


from torch.optim.optimizer import register_optimizer_step_post_hook  # noqa: E402 - torch.optim hides the module

register_optimizer_step_post_hook(_after_step)


def _on_parameter(module, name, param):
    """Where a parameter was made: the user's line that built its module (`nn.Linear(4, 8)`, `self.w = ...`)."""
    if param is not None and getattr(param, "_agl_line", None) is None:
        frames = _user_frames()
        try:
            param._agl_line = frames[0][1] if frames else None
        except Exception:
            pass


try:
    torch.nn.modules.module.register_module_parameter_registration_hook(_on_parameter)
except AttributeError:  # older torch: parameters keep no creation line
    pass


def _pre_forward(module, args):
    State.call_counter += 1
    State.calls.append((State.call_counter, module))


def _post_forward(module, args, output):
    while State.calls:
        _, top = State.calls.pop()
        if top is module:
            break


torch.nn.modules.module.register_module_forward_pre_hook(_pre_forward)
try:
    torch.nn.modules.module.register_module_forward_hook(_post_forward, always_call=True)
except TypeError:  # older torch
    torch.nn.modules.module.register_module_forward_hook(_post_forward)


# ---------------------------------------------------------------------------------------------
# The flagged statement
# ---------------------------------------------------------------------------------------------
if HOOKS is not None:
    _real_before, _real_after = HOOKS.before, HOOKS.after

    def _before():
        _real_before()
        DOC["executions"] += 1
        State.inside = True
        State.captured_in_exec = False
        if SPEC.get("inputs"):  # noqa: F821 - a line that raises before after(): keep its inputs' graph
            frame = sys._getframe(1)
            if frame.f_code.co_filename == REPRO:
                pairs = _eval_targets(frame, SPEC["inputs"])  # noqa: F821
                if pairs:
                    _capture(pairs, _user_frames(), "before")
                    State.captured_in_exec = False  # after() still captures what the line computed

    def _after():
        _real_after()
        State.inside = False
        frame = sys._getframe(1)
        if frame.f_code.co_filename != REPRO:
            return
        if State.captured_in_exec:
            return
        pairs = _eval_targets(frame, SPEC.get("targets") or SPEC.get("inputs") or [])  # noqa: F821
        if pairs:
            _capture(pairs, _user_frames(), "after")

    HOOKS.before = _before
    HOOKS.after = _after
else:
    DOC["notes"].append("the confirm harness did not expose its hooks: the flagged line is not captured")

MODE = ExplainMode()
MODE.__enter__()
