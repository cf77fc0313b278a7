"""What the analyzer knows about torch's API, as plain data: factories, dtypes, in-place methods, graph cuts.

Names are fully qualified ("torch.nn.functional.conv2d"); import aliases are resolved before lookup.
"""
from __future__ import annotations

FLOAT, INT = "float", "int"  # dtype classes; "int" covers integer and bool dtypes

FLOAT_DTYPES = {
    "float", "float16", "float32", "float64", "half", "double", "bfloat16", "complex64", "complex128",
    "cfloat", "cdouble", "complex32", "chalf", "float8_e4m3fn", "float8_e5m2",
}
INT_DTYPES = {"long", "int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "short", "bool", "byte", "char"}

# Factories whose result is float unless dtype= says otherwise.
FLOAT_FACTORIES = {
    "zeros", "ones", "empty", "rand", "randn", "full", "eye", "linspace", "logspace", "range", "normal",
    "rand_like", "randn_like", "empty_strided", "zeros_like", "ones_like", "empty_like", "full_like", "tensor",
    "as_tensor", "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "arange", "from_numpy",
}
INT_FACTORIES = {"randint", "randperm", "LongTensor", "IntTensor", "ShortTensor", "ByteTensor", "CharTensor", "BoolTensor", "randint_like"}
LIKE_FACTORIES = {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like"}
# Factories whose dtype comes from their data/arguments rather than the default float dtype.
DATA_FACTORIES = {"tensor", "as_tensor", "arange", "full"}
LEGACY_CONSTRUCTORS = {"Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
                       "ShortTensor", "ByteTensor", "CharTensor", "BoolTensor"}

TENSOR_FACTORIES = FLOAT_FACTORIES | INT_FACTORIES

# Tensor methods that return an integer/bool tensor whatever the input.
INT_RESULT_METHODS = {"long", "int", "short", "bool", "byte", "char", "argmax", "argmin", "argsort", "nonzero", "eq", "ne", "lt", "le", "gt", "ge",
                      "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "logical_xor", "sign_", "count_nonzero", "bucketize",
                      "searchsorted", "histc_"}
FLOAT_RESULT_METHODS = {"float", "double", "half", "bfloat16", "cfloat", "cdouble", "softmax", "log_softmax", "sigmoid", "tanh", "exp", "log",
                        "sqrt", "rsqrt", "mean", "std", "var", "norm", "true_divide"}
# Methods that keep dtype class and derive a new tensor (graph-connected when the input requires grad).
SHAPE_METHODS = {"view", "reshape", "unsqueeze", "squeeze", "transpose", "permute", "flatten", "contiguous", "t", "expand", "expand_as",
                 "repeat", "narrow", "select", "index_select", "gather", "flip", "roll", "chunk", "split", "unbind", "view_as", "reshape_as",
                 "movedim", "unfold", "tile", "clone", "abs", "neg", "relu", "clamp", "clip", "pow", "mul", "add", "sub", "div", "matmul",
                 "mm", "bmm", "dot", "sum", "prod", "max", "min", "cumsum", "cumprod", "masked_fill", "where", "to", "cpu", "cuda", "type_as",
                 "square", "amax", "amin", "mv", "outer", "diag", "tril", "triu", "trace", "logsumexp", "floor_divide", "remainder", "fmod"}
REDUCTIONS = {"sum", "mean", "prod", "max", "min", "norm", "std", "var", "amax", "amin", "logsumexp", "trace", "dot", "count_nonzero", "all", "any", "median"}

# Non-differentiable operations: results have no grad_fn (or zero gradients) whatever the input.
NONDIFFERENTIABLE = {"argmax", "argmin", "argsort", "eq", "ne", "lt", "le", "gt", "ge", "round", "sign", "floor", "ceil", "trunc",
                     "long", "int", "bool", "byte", "short", "char", "nonzero", "isnan", "isinf", "bucketize", "searchsorted",
                     "logical_and", "logical_or", "logical_not", "count_nonzero", "heaviside"}  # frac: gradient 1

# Tensor methods ending in "_" that do not modify the tensor's values (or are legal on leaves).
NOT_INPLACE_METHODS = {"requires_grad_", "share_memory_", "detach_", "retain_grad", "record_stream", "pin_memory", "_version",
                       "register_hook", "is_shared", "to_"}

# Ops that save their *output* for backward (in-place edits of the output break backward) ...
# (Checked against torch 2.13: an in-place change of the saved tensor makes backward raise the version error.)
SAVES_OUTPUT = {"sigmoid", "tanh", "exp", "exp2", "expm1", "softmax", "log_softmax", "relu", "sqrt", "rsqrt", "reciprocal", "tan"}
# ... and ops that save their *inputs* (in-place edits of an input break backward).
SAVES_INPUT = {"pow", "mul", "matmul", "mm", "bmm", "div", "log", "log2", "log10", "log1p", "sin", "cos", "atan", "asin", "acos",
               "prod", "cumprod", "norm", "dot", "mv", "outer", "conv1d", "conv2d", "conv3d", "linear", "bilinear", "max_pool2d",
               "layer_norm", "batch_norm", "abs", "square", "erf", "erfinv", "lgamma", "digamma", "elu", "selu", "celu", "gelu",
               "silu", "softplus", "leaky_relu", "hardtanh", "relu6", "mish", "hardswish", "logsigmoid"}
# Of those, the products save an operand only for the *other* operand's gradient: `h * mask` with a constant mask keeps
# only the mask; `h / t` keeps t (and h only when t requires grad).
SAVES_INPUT_FOR_PARTNER = {"mul", "*", "matmul", "@", "mm", "bmm", "dot", "mv", "outer", "linear", "bilinear", "conv1d", "conv2d",
                           "conv3d", "div", "/", "true_divide"}

NO_GRAD_CONTEXTS = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
                    "torch.autograd.inference_mode", "torch.autograd.grad_mode.inference_mode"}
ENABLE_GRAD_CONTEXTS = {"torch.enable_grad", "torch.autograd.enable_grad"}
SET_GRAD_ENABLED = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"}

PARAMETER_CLASSES = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}
MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module", "pytorch_lightning.LightningModule", "lightning.LightningModule",
                "lightning.pytorch.LightningModule", "pytorch_lightning.core.LightningModule", "torch.nn.Sequential"}
OPTIMIZER_PREFIXES = ("torch.optim.",)
NOT_OPTIMIZERS_PREFIXES = ("torch.optim.lr_scheduler.", "torch.optim.swa_utils.")

# Loss functions: scalar results by default (reduction="mean").
FUNCTIONAL_LOSSES = {"mse_loss", "l1_loss", "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                     "smooth_l1_loss", "huber_loss", "kl_div", "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
                     "soft_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
                     "ctc_loss", "multi_margin_loss", "multilabel_margin_loss"}


def is_inplace_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in NOT_INPLACE_METHODS


def out_of_place(name: str) -> str | None:
    """The out-of-place twin of an in-place method (add_ -> add), where one exists."""
    base = name[:-1]
    return base if base in SHAPE_METHODS | FLOAT_RESULT_METHODS | {"clamp", "clamp_min", "clamp_max", "sub", "mul", "div", "add", "pow",
                                                                     "addmm", "addcmul", "addcdiv", "lerp", "masked_fill", "fill_diagonal",
                                                                     "index_add", "scatter", "scatter_add", "index_fill", "copy"} - {"copy"} else None


def dtype_class(qualname: str | None) -> str | None:
    """torch.float32 -> float, torch.long -> int, anything else -> unknown."""
    if not qualname or not qualname.startswith("torch."):
        return None
    name = qualname.rsplit(".", 1)[-1]
    if name in FLOAT_DTYPES:
        return FLOAT
    if name in INT_DTYPES:
        return INT
    return None


OPTIMIZER_NAMES = {"opt", "optim", "optimizer", "optimiser", "opt_g", "opt_d", "optimizer_g", "optimizer_d", "g_optimizer", "d_optimizer"}


def looks_like_optimizer_name(name: str) -> bool:
    lowered = name.lower()
    return (
        lowered in OPTIMIZER_NAMES
        or lowered.endswith(("_optimizer", "_optimiser", "_opt", "_optim"))
        or lowered.startswith(("optimizer_", "optimiser_", "opt_", "optim_"))
    )


def misspells_requires_grad(name: str) -> bool:
    """`require_grad`, `requires_grads`, `requiers_grad`, `Requires_Grad`, `requires_gard`...: near `requires_grad`, not it.

    A trailing `_` is kept apart, so `require_grad_` is a misspelt `requires_grad_`. Private names (`_requires_grad`)
    are someone's own attribute, not a typo.
    """
    if not 9 <= len(name) <= 18 or name[0] not in "rRq" or name in ("requires_grad", "requires_grad_"):
        return False
    key = name.lower().rstrip("_").replace("_", "")
    return key == "requiresgrad" or _near(key, "requiresgrad")


def _near(word: str, target: str) -> bool:
    """Optimal string alignment distance of at most 2 (a swap of neighbours counts once)."""
    if abs(len(word) - len(target)) > 2:
        return False
    previous2, previous = None, list(range(len(target) + 1))
    for i, a in enumerate(word, 1):
        current = [i] + [0] * len(target)
        for j, b in enumerate(target, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b))
            if previous2 is not None and i > 1 and j > 1 and a == target[j - 2] and word[i - 2] == b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1] <= 2
