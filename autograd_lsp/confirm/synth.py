"""Synthesize a call to a function (or a method, through an instance) nothing in the file calls.

Each required parameter gets a value from, in order: its annotation; how the body uses it
(``range(n)`` → int; ``x.shape``/``x.sum()``/``x[...]`` → tensor; ``m.parameters()``/``m(x)`` →
module; ``opt.step()`` → optimizer; ``for x, y in loader`` → a list of batches; ``criterion(out, y)``
→ a loss); and last its name (``lr``, ``epochs``, ``model``, ``x``…). A parameter whose use is not
inferable makes the reproducer inconclusive — no guess. Tensors are ``randn`` of a plausible
shape: the input size of the module's first layer when the module is a class of this file
(``nn.Linear(in, out)`` → ``(4, in)``, ``nn.Conv2d(c, …)`` → ``(2, c, 16, 16)``…), else ``(4, 8)``.

Pure stdlib: the values are *source text* run later in the harness.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

BATCH = 4
WIDTH = 8
T = "_agl_torch"  # the reproducer imports torch under this name

# Rules whose flagged statement needs its tensor arguments to be leaves that require grad.
_GRAD_LEAF_RULES = {"AG001", "AG006", "AG007", "AG008", "AG014", "AG018"}

_TENSOR_ATTRS = {
    "shape", "size", "sum", "mean", "backward", "view", "reshape", "t", "T", "item", "grad", "requires_grad",
    "detach", "clone", "numel", "dim", "ndim", "dtype", "unsqueeze", "squeeze", "pow", "exp", "log", "abs",
    "norm", "data", "add_", "mul_", "sub_", "div_", "zero_", "fill_", "copy_", "matmul", "mm", "float", "long",
    "int", "double", "half", "sigmoid", "tanh", "relu", "softmax", "log_softmax", "max", "min", "argmax",
    "argmin", "clamp", "clamp_", "masked_fill", "expand", "permute", "transpose", "flatten", "grad_fn",
    "is_leaf", "retain_grad", "register_hook", "requires_grad_", "normal_", "uniform_", "tolist", "new_zeros",
    "new_ones", "sqrt", "square", "std", "var", "prod", "cumsum", "chunk", "split", "numpy", "contiguous",
}
_MODULE_ATTRS = {"parameters", "named_parameters", "train", "eval", "state_dict", "load_state_dict", "modules",
                 "children", "named_modules", "apply", "forward", "buffers", "register_buffer", "named_buffers"}
_OPTIMIZER_ATTRS = {"step", "param_groups", "add_param_group"}
_FACTORIES = {"zeros", "ones", "randn", "rand", "empty", "full", "arange", "eye", "randint", "Tensor", "FloatTensor", "linspace"}
_CLASSIFICATION = {"cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"}
_LOSS_NAME = re.compile(r"(loss|criterion|crit|objective)", re.I)


@dataclass
class Call:
    statements: list[ast.stmt]
    entry: str
    notes: list[str] = field(default_factory=list)


@dataclass
class Failure:
    reason: str


@dataclass
class _ModuleClass:
    node: ast.ClassDef
    input_expr: str | None  # a tensor expression the module's forward accepts
    out_features: int | None
    init: ast.FunctionDef | None


class _Context:
    def __init__(self, tree: ast.Module, code: str, flagged: ast.stmt):
        self.tree = tree
        self.code = code
        self.flagged_names = {n.id for n in ast.walk(flagged) if isinstance(n, ast.Name)}
        self.lines: list[str] = [f"import torch as {T}"]
        self.notes: list[str] = []
        self.constants = _module_constants(tree)
        self.classes = _module_classes(tree, self.constants)
        self.counter = 0
        self.module_var: str | None = None
        self.module_class: _ModuleClass | None = None
        self.building: set[str] = set()  # classes being instantiated (no recursion through __init__)

    def var(self, stem: str, expr: str) -> str:
        self.counter += 1
        name = f"_agl_{stem}{self.counter}"
        self.lines.append(f"{name} = {expr}")
        return name


def _module_constants(tree: ast.Module) -> dict[str, object]:
    out: dict[str, object] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                out[stmt.targets[0].id] = ast.literal_eval(stmt.value)
            except (ValueError, SyntaxError, TypeError):
                pass
    return out


def _is_module_class(node: ast.ClassDef, known: set[str]) -> bool:
    for base in node.bases:
        text = ast.unparse(base)
        if text.endswith("Module") or text in known:
            return True
    return False


def _module_classes(tree: ast.Module, constants: dict) -> dict[str, _ModuleClass]:
    classes: dict[str, _ModuleClass] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and _is_module_class(stmt, set(classes)):
            init = next((n for n in stmt.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            env = dict(constants)
            if init is not None:
                args = init.args
                positional = args.posonlyargs + args.args
                for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
                    try:
                        env[arg.arg] = ast.literal_eval(default)
                    except (ValueError, SyntaxError, TypeError):
                        pass
                for arg in positional[1:len(positional) - len(args.defaults)]:
                    env.setdefault(arg.arg, WIDTH)  # required sizes get WIDTH (see _init_args)
            input_expr, out = _layer_shapes(stmt, init, env)
            classes[stmt.name] = _ModuleClass(stmt, input_expr, out, init)
    return classes


def _value(node: ast.expr, env: dict) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        pass
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    return None


def _layer(call: ast.expr, env: dict) -> tuple[str, str | None, int | None] | None:
    """(layer kind, input tensor expression, out features) of an nn layer constructor."""
    if not isinstance(call, ast.Call):
        return None
    name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id if isinstance(call.func, ast.Name) else ""
    args = [_value(a, env) for a in call.args]
    kw = {k.arg: _value(k.value, env) for k in call.keywords if k.arg}
    first = args[0] if args else None
    second = args[1] if len(args) > 1 else None
    if name == "Sequential":
        layers = [_layer(a, env) for a in call.args]
        layers = [l for l in layers if l]
        if not layers:
            return None
        return name, layers[0][1], next((l[2] for l in reversed(layers) if l[2]), None)
    if name in {"Linear", "Bilinear", "LazyLinear"}:
        first = kw.get("in_features", first)
        out = kw.get("out_features", second)
        return name, f"{T}.randn({BATCH}, {first})" if isinstance(first, int) else None, out if isinstance(out, int) else None
    if name in {"Conv1d", "Conv2d", "Conv3d", "BatchNorm1d", "BatchNorm2d"}:
        channels = kw.get("in_channels", kw.get("num_features", first))
        if not isinstance(channels, int):
            return name, None, None
        spatial = {"1": ", 16", "2": ", 16, 16", "3": ", 8, 8, 8"}[name[-2]]
        return name, f"{T}.randn({BATCH}, {channels}{spatial})", None
    if name == "Embedding":
        num = kw.get("num_embeddings", first)
        return name, f"{T}.randint(0, {num}, ({BATCH}, 6))" if isinstance(num, int) else None, None
    if name in {"LSTM", "GRU", "RNN"}:
        size = kw.get("input_size", first)
        if not isinstance(size, int):
            return name, None, None
        batch_first = kw.get("batch_first") is True
        shape = f"{BATCH}, 6, {size}" if batch_first else f"6, {BATCH}, {size}"
        return name, f"{T}.randn({shape})", None
    return None


def _layer_shapes(cls: ast.ClassDef, init: ast.FunctionDef | None, env: dict) -> tuple[str | None, int | None]:
    layers: dict[str, tuple] = {}
    order: list[str] = []
    if init is not None:
        for node in ast.walk(init):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    info = _layer(node.value, env)
                    if info:
                        layers[target.attr] = info
                        order.append(target.attr)
    forward = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is not None:
        called = []
        for node in ast.walk(forward):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" and node.func.attr in layers:
                called.append((node.lineno, node.col_offset, node.func.attr))
        if called:
            order = [name for *_, name in sorted(called)] + [n for n in order if n not in {c[2] for c in called}]
    first = next((layers[n][1] for n in order if layers[n][1]), None) if order else None
    if order and layers[order[0]][1] is None:
        first = None  # the first layer's input is unknown: do not guess from a later one
    out = next((layers[n][2] for n in reversed(order) if layers[n][2]), None)
    return first, out


# --------------------------------------------------------------------------------------------
def _evidence(fn: ast.FunctionDef, name: str) -> dict:
    ev = {"attrs": set(), "called": False, "loop_targets": [], "int": False, "tensor": False, "loss_target": False,
          "module_input": False, "classification": False}
    module_like_callees: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
            ev["attrs"].add(node.attr)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
            ev["tensor"] = True
        elif isinstance(node, ast.BinOp) and any(isinstance(side, ast.Name) and side.id == name for side in (node.left, node.right)):
            other = node.right if isinstance(node.left, ast.Name) and node.left.id == name else node.left
            if not (isinstance(other, ast.Constant) and isinstance(other.value, int)) or isinstance(node.op, ast.MatMult):
                ev["tensor"] = True
        elif isinstance(node, (ast.For, ast.comprehension)):
            loop_iter = node.iter
            target = node.target
            if isinstance(loop_iter, ast.Call) and isinstance(loop_iter.func, ast.Name) and loop_iter.func.id in {"enumerate", "tqdm", "iter"} and loop_iter.args:
                if loop_iter.func.id == "enumerate" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                    target = target.elts[1]
                loop_iter = loop_iter.args[0]
            if isinstance(loop_iter, ast.Name) and loop_iter.id == name:
                ev["loop_targets"].append(target)
            if isinstance(loop_iter, ast.Call) and isinstance(loop_iter.func, ast.Name) and loop_iter.func.id == "range" and any(isinstance(a, ast.Name) and a.id == name for a in loop_iter.args):
                ev["int"] = True
        if isinstance(node, ast.Call):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if fname in _CLASSIFICATION:
                ev["classification"] = True
            args = list(node.args) + [k.value for k in node.keywords]
            uses = [i for i, a in enumerate(node.args) if isinstance(a, ast.Name) and a.id == name]
            if isinstance(func, ast.Name) and func.id == name:
                ev["called"] = True
            if not any(isinstance(a, ast.Name) and a.id == name for a in args):
                continue
            if fname == "range":
                ev["int"] = True
            elif fname in _FACTORIES and (isinstance(func, ast.Attribute) and ast.unparse(func.value) in {"torch"}):
                ev["int"] = True
            elif isinstance(func, ast.Attribute) and ast.unparse(func.value).split(".")[0] in {"torch", "F", "nn"}:
                ev["tensor"] = True
                if uses and uses[0] >= 1 and (fname.endswith("loss") or fname in _CLASSIFICATION):
                    ev["loss_target"] = True
            elif isinstance(func, ast.Name) and _LOSS_NAME.search(func.id) and uses and uses[0] >= 1:
                ev["tensor"] = ev["loss_target"] = True
            elif isinstance(func, ast.Name):
                module_like_callees.add(func.id)
                if uses and uses[0] == 0:
                    ev["module_input"] = True
                    ev["tensor"] = True
    return ev


def _annotation_kind(annotation: ast.expr | None, ctx: _Context) -> str | None:
    if annotation is None:
        return None
    text = ast.unparse(annotation)
    last = text.split(".")[-1].strip("'\"")
    if last in ctx.classes:
        return "module:" + last
    for kind, words in (("tensor", ("Tensor", "Parameter")), ("optimizer", ("Optimizer", "SGD", "Adam")),
                        ("loader", ("DataLoader", "Iterable")), ("module", ("Module",)), ("device", ("device",))):
        if any(w in text for w in words):
            return kind
    return {"int": "int", "float": "float", "bool": "bool", "str": "str"}.get(last)


def _name_kind(name: str) -> str | None:
    lowered = name.lower()
    if lowered in {"lr", "learning_rate", "alpha", "beta", "eps", "momentum", "weight_decay", "scale", "gamma", "temperature", "tau"}:
        return "float"
    if re.search(r"(^n_|^num_|_size$|_dim$|^dim$|epochs?$|steps?$|iters?$|iterations$|^n$|^k$|count$|hidden)", lowered):
        return "int"
    if lowered in {"device"}:
        return "device"
    if re.search(r"(^opt$|optim)", lowered):
        return "optimizer"
    if _LOSS_NAME.search(lowered):
        return "loss"
    if re.search(r"(loader|dataset|batches)", lowered):
        return "loader"
    if re.search(r"(^model$|^net$|module|network|encoder|decoder|generator|discriminator|^layer$)", lowered):
        return "module"
    if re.search(r"^(x|y|z|w|inputs?|targets?|labels?|data|tensor|t|a|b|img|images?|features?|logits|preds?|out|output|batch|weights?|bias|grad|params?)$", lowered):
        return "tensor"
    return None


def _kind(fn: ast.FunctionDef, arg: ast.arg, ctx: _Context) -> tuple[str | None, dict]:
    ev = _evidence(fn, arg.arg)
    kind = _annotation_kind(arg.annotation, ctx)
    if kind:
        return kind, ev
    attrs = ev["attrs"]
    if attrs & _OPTIMIZER_ATTRS:
        return "optimizer", ev
    if attrs & _MODULE_ATTRS:
        return "module", ev
    if ev["loop_targets"]:
        return "loader", ev
    if ev["called"]:
        return ("loss" if _LOSS_NAME.search(arg.arg) else "module"), ev
    if ev["int"]:
        return "int", ev
    if "zero_grad" in attrs:
        return ("module" if _name_kind(arg.arg) == "module" else "optimizer"), ev
    if ev["tensor"] or attrs & _TENSOR_ATTRS:
        return "tensor", ev
    return _name_kind(arg.arg), ev


def _module_value(ctx: _Context, class_name: str | None = None) -> str | Failure:
    if ctx.module_var:
        return ctx.module_var
    candidates = [ctx.classes[class_name]] if class_name else list(ctx.classes.values())
    for info in candidates:
        if info.node.name in ctx.building:
            continue
        ctx.building.add(info.node.name)
        args = _init_args(info.node, info.init, ctx)
        ctx.building.discard(info.node.name)
        if isinstance(args, Failure):
            if class_name:
                return args
            continue
        ctx.module_class = info
        ctx.module_var = ctx.var("model", f"{info.node.name}({args})")
        ctx.notes.append(f"module argument: an instance of {info.node.name}")
        return ctx.module_var
    ctx.module_var = ctx.var("model", f"{T}.nn.Linear({WIDTH}, {WIDTH})")
    ctx.notes.append(f"module argument: nn.Linear({WIDTH}, {WIDTH}) (no constructible module class in the file)")
    return ctx.module_var


def _input_expr(ctx: _Context) -> str:
    if ctx.module_class and ctx.module_class.input_expr:
        return ctx.module_class.input_expr
    return f"{T}.randn({BATCH}, {WIDTH})"


def _target_expr(ctx: _Context, classification: bool) -> str:
    out = (ctx.module_class.out_features if ctx.module_class else None) or WIDTH
    if classification:
        return f"{T}.randint(0, {out}, ({BATCH},))"
    return f"{T}.randn({BATCH}, {out})"


def _value_for(kind: str, arg: ast.arg, ev: dict, ctx: _Context, fn: ast.FunctionDef) -> str | Failure:
    name = arg.arg
    if kind == "int":
        return "2" if re.search(r"(epoch|step|iter)", name, re.I) else str(WIDTH)
    if kind == "float":
        return "0.01" if re.search(r"(lr|learning)", name, re.I) else "0.5"
    if kind == "bool":
        return "False"
    if kind == "str":
        return "'cpu'" if "device" in name.lower() else repr(name)
    if kind == "device":
        return f"{T}.empty(0).device"
    if kind.startswith("module"):
        return _module_value(ctx, kind.split(":", 1)[1] if ":" in kind else None)
    if kind == "optimizer":
        module = ctx.module_var
        params = f"{module}.parameters()" if module else f"[{T}.zeros({WIDTH}, requires_grad=True)]"
        return ctx.var("optimizer", f"{T}.optim.SGD({params}, lr=0.01)")
    if kind == "loss":
        return ctx.var("loss_fn", f"{T}.nn.{'CrossEntropyLoss' if _classification(fn) else 'MSELoss'}()")
    if kind == "loader":
        target = ev["loop_targets"][0] if ev["loop_targets"] else None
        size = len(target.elts) if isinstance(target, (ast.Tuple, ast.List)) else 1
        parts = [_input_expr(ctx)]
        if size >= 2:
            parts.append(_target_expr(ctx, _classification(fn)))
            parts += [f"{T}.randn({BATCH})"] * (size - 2)
        batch = parts[0] if size == 1 else "(" + ", ".join(parts) + ")"
        ctx.notes.append(f"data argument {name}: 3 random batches")
        return f"[{batch} for _ in range(3)]"
    if kind == "tensor":
        if ev.get("module_input"):
            expr = _input_expr(ctx)
        elif ev.get("loss_target") or re.fullmatch(r"(y|targets?|labels?|y_true|gt)", name, re.I):
            expr = _target_expr(ctx, ev.get("classification") or _classification(fn))
        else:
            expr = _input_expr(ctx)
        if ctx.code in _GRAD_LEAF_RULES and name in ctx.flagged_names and "randn" in expr:
            expr = expr[:-1] + ", requires_grad=True)"
        return expr
    return Failure(f"cannot infer a value for parameter '{name}' of {fn.name}()")


def _classification(fn: ast.FunctionDef) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, (ast.Attribute, ast.Name)):
            text = node.attr if isinstance(node, ast.Attribute) else node.id
            if text in _CLASSIFICATION:
                return True
    return False


def _arguments(fn: ast.FunctionDef, ctx: _Context, skip_first: bool) -> str | Failure:
    args = fn.args
    positional = args.posonlyargs + args.args
    required = positional[: len(positional) - len(args.defaults)]
    if skip_first and required:
        required = required[1:]
    kw_required = [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    params = required + kw_required
    # Modules first, so optimizers can be built over their parameters and tensors shaped for them.
    kinds = {a.arg: _kind(fn, a, ctx) for a in params}
    order = sorted(params, key=lambda a: 0 if (kinds[a.arg][0] or "").startswith("module") else 1)
    values: dict[str, str] = {}
    for arg in order:
        kind, ev = kinds[arg.arg]
        if kind is None:
            return Failure(f"cannot infer a value for parameter '{arg.arg}' of {fn.name}(): its use is not inferable")
        value = _value_for(kind, arg, ev, ctx, fn)
        if isinstance(value, Failure):
            return value
        values[arg.arg] = value
    parts = [values[a.arg] for a in required] + [f"{a.arg}={values[a.arg]}" for a in kw_required]
    return ", ".join(parts)


def _init_args(cls: ast.ClassDef, init: ast.FunctionDef | None, ctx: _Context) -> str | Failure:
    if init is None:
        return ""
    return _arguments(init, ctx, skip_first=True)


def synthesize_call(tree: ast.Module, cls: ast.ClassDef | None, fn: ast.FunctionDef, code: str, flagged: ast.stmt) -> Call | Failure:
    ctx = _Context(tree, code, flagged)
    decorators = {ast.unparse(d) for d in fn.decorator_list}
    if cls is None:
        args = _arguments(fn, ctx, skip_first=False)
        if isinstance(args, Failure):
            return args
        ctx.lines.append(f"{fn.name}({args})")
        return Call(_parse(ctx.lines), f"{fn.name}({args})", ctx.notes)
    static = "staticmethod" in decorators
    classmethod_ = "classmethod" in decorators
    if static or classmethod_:
        args = _arguments(fn, ctx, skip_first=classmethod_)
        if isinstance(args, Failure):
            return args
        ctx.lines.append(f"{cls.name}.{fn.name}({args})")
        return Call(_parse(ctx.lines), f"{cls.name}.{fn.name}({args})", ctx.notes)
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    info = ctx.classes.get(cls.name)
    if info is not None:
        ctx.module_class = info
    ctx.building.add(cls.name)
    init_args = _init_args(cls, init, ctx)
    if isinstance(init_args, Failure):
        return Failure(f"cannot instantiate {cls.name}: {init_args.reason}")
    instance = ctx.var("obj", f"{cls.name}({init_args})")
    if info is not None:
        ctx.module_var = instance
    if fn.name == "__init__":
        return Call(_parse(ctx.lines), f"{cls.name}({init_args})", ctx.notes)
    args = _arguments(fn, ctx, skip_first=True)
    if isinstance(args, Failure):
        return args
    if fn.name == "forward" and info is not None:
        ctx.lines.append(f"{instance}({args})")
        entry = f"{cls.name}({init_args})({args})"
    else:
        ctx.lines.append(f"{instance}.{fn.name}({args})")
        entry = f"{cls.name}({init_args}).{fn.name}({args})"
    return Call(_parse(ctx.lines), entry, ctx.notes)


def _parse(lines: list[str]) -> list[ast.stmt]:
    return ast.parse("\n".join(lines)).body
