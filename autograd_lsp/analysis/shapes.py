"""A tensor's shape as far as it is known: a tuple of dims, each an int or None (unknown size); None for an unknown rank.

Pure arithmetic on those tuples, for the walker: broadcasting, reshapes, reductions, indexing and the layers' shape
functions (named by torch.jit._shape_functions, see torch_ops.SHAPE_FUNCTIONS). Every function answers None (or a None
dim) where a fact behind the answer is missing: a shape is only as known as every size it was computed from.
"""
from __future__ import annotations

from math import prod

Shape = "tuple | None"


def scalar_of(shape) -> bool | None:
    """One element (every dim 1, a 0-dim tensor included): True; a dim known to be larger: False; else unknown."""
    if shape is None:
        return None
    if all(d == 1 for d in shape):
        return True
    if any(d is not None and d > 1 for d in shape):
        return False
    return None


def numel(shape) -> int | None:
    if shape is None or any(d is None for d in shape):
        return None
    return prod(shape)


def merge(a, b):
    """What two branches agree on: the same rank keeps the dims both give the same size."""
    if a is None or b is None or len(a) != len(b):
        return None
    if a == b:
        return a
    return tuple(x if x == y else None for x, y in zip(a, b))


def broadcast(shapes):
    """The broadcast shape of the operands (0-dim for Python numbers); None when one is unknown or they cannot broadcast."""
    if not shapes or any(s is None for s in shapes):
        return None
    rank = max(len(s) for s in shapes)
    out = []
    for position in range(-rank, 0):
        dims = [s[position] for s in shapes if len(s) >= -position]
        known = {d for d in dims if d is not None}
        if len(known - {1}) > 1:
            return None  # (would not broadcast: the code is not what we think it is)
        if known - {1}:
            out.append((known - {1}).pop())  # a size other than 1 is the result's whatever the unknown ones are
        elif None in dims:
            out.append(None)  # 1 broadcast with an unknown size: that size
        else:
            out.append(1)
    return tuple(out)


def _dim(position, rank: int) -> int | None:
    if not isinstance(position, int) or isinstance(position, bool) or not -rank <= position < rank:
        return None
    return position % rank


def view(shape, sizes):
    """x.view(*sizes) / reshape: each size an int (-1: inferred) or None (unknown)."""
    if sizes is None:
        return None
    if sizes.count(-1) > 1 or any(s is not None and s < -1 for s in sizes):
        return None
    if -1 not in sizes:
        return tuple(sizes)
    total, rest = numel(shape), [s for s in sizes if s != -1]
    if total is None or any(s is None for s in rest) or prod(rest) == 0:
        return tuple(None if s == -1 else s for s in sizes)
    inferred, remainder = divmod(total, prod(rest))
    return tuple(inferred if s == -1 else s for s in sizes) if remainder == 0 else None


def split_piece(shape, size, dim=0):
    """Every piece of `x.split(size, dim)` as one shape: that dim is `size` when the pieces all have it (an even split),
    or the whole dim when `size` covers it (one piece); else unknown (a shorter last piece)."""
    if shape is None or not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        return None
    position = _dim(dim, len(shape))
    if position is None:
        return None
    n = shape[position]
    piece = None if n is None else n if n <= size else size if n % size == 0 else None
    return shape[:position] + (piece,) + shape[position + 1:]


def flatten(shape, start=0, end=-1):
    if shape is None:
        return None
    if not shape:
        return (1,)
    first, last = _dim(start, len(shape)), _dim(end, len(shape))
    if first is None or last is None or first > last:
        return None
    middle = shape[first:last + 1]
    return shape[:first] + (numel(middle),) + shape[last + 1:]


def unsqueeze(shape, dim):
    if shape is None:
        return None
    position = _dim(dim, len(shape) + 1)
    return None if position is None else shape[:position] + (1,) + shape[position:]


def squeeze(shape, dims=None):
    """squeeze() drops the dims of size 1 (an unknown size might be 1: unknown rank); squeeze(d) that one, if 1."""
    if shape is None:
        return None
    if dims is None:
        return None if None in shape else tuple(d for d in shape if d != 1)
    positions = _positions(shape, dims)
    if positions is None:
        return None
    if not shape:
        return shape
    if any(shape[p] is None for p in positions):
        return None
    return tuple(d for i, d in enumerate(shape) if not (i in positions and d == 1))


def _positions(shape, dims):
    """The dims as positions in `shape` (a 0-dim tensor takes 0 and -1), None if one is out of range or unknown."""
    positions = set()
    for dim in dims:
        position = _dim(dim, len(shape)) if shape else (0 if dim in (0, -1) else None)
        if position is None:
            return None
        positions.add(position)
    return positions


def permute(shape, order):
    if shape is None or order is None or len(order) != len(shape):
        return None
    positions = [_dim(o, len(shape)) for o in order]
    if None in positions or len(set(positions)) != len(shape):
        return None
    return tuple(shape[p] for p in positions)


def transpose(shape, a, b):
    if shape is None:
        return None
    if not shape:
        return shape
    first, second = _dim(a, len(shape)), _dim(b, len(shape))
    if first is None or second is None:
        return None
    out = list(shape)
    out[first], out[second] = out[second], out[first]
    return tuple(out)


def reduce(shape, dims, keepdim: bool | None):
    """A reduction over `dims` (None: every dim, a 0-dim result)."""
    if dims is None:
        return ()
    if shape is None or keepdim is None:
        return None
    positions = _positions(shape, dims)
    if positions is None:
        return None
    if not shape:
        return shape
    if keepdim:
        return tuple(1 if i in positions else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in positions)


FULL, PART, INT, NEW, ELLIPSIS, OTHER = "full", "part", "int", "new", "...", "other"


class Window(tuple):
    """A slice item `x[i:i + width]` whose start `i` runs through `starts` (a builtin range loop's counter)."""

    def __new__(cls, starts: range, width: int):
        return super().__new__(cls, (starts, width))


def _sliced(size, item) -> int | None:
    """The size a slice item leaves of a dim of `size`: a `slice` of known ints (Python's own arithmetic), or a Window
    every start of which fits whole in the dim; else unknown."""
    if size is None:
        return None
    if isinstance(item, slice):
        return len(range(size)[item]) if item.step != 0 else None
    starts, width = item
    if not starts or width < 0:
        return None
    low, high = min(starts[0], starts[-1]), max(starts[0], starts[-1])
    return width if 0 <= low and high + width <= size else None


def _cut(item) -> bool:
    return isinstance(item, (slice, Window))


def _placed(items, start: int, step: int) -> list:
    """Each index item with the dim of the shape it consumes, counted from `start` by `step` (from the end for what
    follows an Ellipsis); None for a new axis, and for every item after one whose width is unknown."""
    position, placed = start, []
    for item in items:
        if item == OTHER:
            position = None
        if item == NEW:
            placed.append((item, None))
            continue
        placed.append((item, position))
        if position is not None:
            position += step
    return placed


def index(shape, items):
    """x[items]: each item FULL (`:`), PART (another slice), a `slice` of known ints or a Window (a slice whose size
    the dim tells), INT (a Python int), NEW (None), ELLIPSIS, or OTHER (a
    tensor, a list, anything unknown: advanced indexing, whose dims are not known). Returns (shape, kept): the result's
    shape (None when not known) and the sizes of the input dims a `:` keeps, which the result has wherever they land."""
    if shape is None:
        return None, ()
    if items.count(ELLIPSIS) > 1:
        return None, ()
    consuming = [item for item in items if item not in (NEW, ELLIPSIS)]
    if len(consuming) > len(shape):
        return None, ()
    # which input dim each item stands for: from the left up to an Ellipsis, from the right after it (an OTHER item
    # may be a boolean mask of several dims: positions past one are unknown)
    if ELLIPSIS in items:
        cut = items.index(ELLIPSIS)
        left, right = items[:cut], items[cut + 1:]
    else:
        left, right = items, []
    kept = []
    mapped, back = _placed(left, 0, 1), _placed(reversed(right), len(shape) - 1, -1)
    for item, at in mapped + back:
        if item == FULL and at is not None:
            kept.append(shape[at])
        elif _cut(item) and at is not None:
            kept.append(_sliced(shape[at], item))
    if OTHER in items:
        return None, tuple(kept)
    out = []
    for item, at in mapped:
        if item == NEW:
            out.append(1)
        elif item == FULL:
            out.append(shape[at])
        elif item == PART:
            out.append(None)
        elif _cut(item):
            out.append(_sliced(shape[at], item))
    if ELLIPSIS in items or len(consuming) < len(shape):
        skipped = len(shape) - len(consuming)
        start = sum(1 for item, _ in mapped if item != NEW)
        out.extend(shape[start:start + skipped])
    for item, at in reversed(back):
        if item == NEW:
            out.append(1)
        elif item == FULL:
            out.append(shape[at])
        elif item == PART:
            out.append(None)
        elif _cut(item):
            out.append(_sliced(shape[at], item))
    return tuple(out), tuple(kept)


def _agree(a, b):
    """Two shapes an op requires to be equal (the tensors stack() joins): a size either gives is both's; None when they
    cannot be equal."""
    if len(a) != len(b):
        return None
    out = []
    for x, y in zip(a, b):
        if x is not None and y is not None and x != y:
            return None
        out.append(x if x is not None else y)
    return tuple(out)


def stack(shapes, dim=0):
    if not shapes or any(s is None for s in shapes):
        return None
    common = shapes[0]
    for other in shapes[1:]:
        common = _agree(common, other)
        if common is None:
            return None
    position = _dim(dim, len(common) + 1)
    return None if position is None else common[:position] + (len(shapes),) + common[position:]


def cat(shapes, dim=0):
    if not shapes or any(s is None or not s for s in shapes) or len({len(s) for s in shapes}) != 1:
        return None
    position = _dim(dim, len(shapes[0]))
    if position is None:
        return None
    sizes = [s[position] for s in shapes]
    rest = [tuple(d for i, d in enumerate(s) if i != position) for s in shapes]
    common = rest[0]
    for other in rest[1:]:
        common = _agree(common, other)
        if common is None:
            return None
    total = None if None in sizes else sum(sizes)
    return common[:position] + (total,) + common[position:]


def spatial(function: str) -> int | None:
    """How many trailing spatial dims a shape function works on: conv2d, max_pool2d, conv_transpose2d_input -> 2."""
    for count in (1, 2, 3):
        if f"{count}d" in function:
            return count
    return None


def layer(functions, shape, width: int | None, output_size=None, geometry=None):
    """The output shape of a layer or functional op whose shape functions are `functions`, given its input's.
    linear: the last dim becomes `width`; convolutions: the channel dim before the spatial ones becomes `width` and the
    spatial sizes are computed from `geometry` (else unknown); pooling and upsampling: the spatial sizes change (an
    adaptive pool's `output_size` when known; a max pool's from `geometry`), every dim before them stays; unary/batch
    norm: the input's shape."""
    if shape is None or not functions:
        return None
    if functions & {"unary", "batch_norm", "native_batch_norm"}:
        return shape
    if functions == {"linear"}:
        return shape[:-1] + (width,) if shape else None
    if len(functions) != 1:
        return None
    function = next(iter(functions))
    count = spatial(function)
    if count is None or len(shape) not in (count + 1, count + 2):
        return None  # (an unbatched input has one dim fewer: the channels come first)
    if function.startswith("conv"):
        return shape[:-count - 1] + (width,) + _window(function, shape[-count:], geometry)
    if function.startswith(("max_pool", "adaptive_avg_pool", "upsample")):
        sizes = _window(function, shape[-count:], geometry) if function.startswith("max_pool") else (None,) * count
        if function.startswith("adaptive") and output_size is not None:
            sizes = tuple(output_size) if isinstance(output_size, tuple) else (output_size,) * count
            if len(sizes) != count:
                return None
        return shape[:-count] + sizes
    return None


def _window(function: str, sizes, geometry) -> tuple:
    """The spatial sizes out of a convolution or max pool (torch.jit._shape_functions' arithmetic) given the input's and
    the layer's `geometry`: {kernel_size, stride, padding, dilation, output_padding: a tuple of ints per spatial dim
    (padding may be "same"/"valid"), ceil_mode: a bool}; None for a size not known."""
    unknown = (None,) * len(sizes)
    if not geometry or geometry.get("ceil_mode") not in (None, False) or geometry.get("kernel_size") is None:
        return unknown
    kernel = geometry["kernel_size"]
    stride = geometry.get("stride") or kernel  # (a pool's stride defaults to its kernel)
    dilation = geometry.get("dilation") or (1,) * len(sizes)
    padding = geometry.get("padding") or (0,) * len(sizes)
    extra = geometry.get("output_padding") or (0,) * len(sizes)
    if padding == "same":
        return tuple(sizes) if all(s == 1 for s in stride) and not function.startswith("conv_transpose") else unknown
    if padding == "valid":
        padding = (0,) * len(sizes)
    if isinstance(padding, str) or any(len(v) != len(sizes) for v in (kernel, stride, dilation, padding, extra)):
        return unknown
    out = []
    for size, k, s, d, p, e in zip(sizes, kernel, stride, dilation, padding, extra):
        if size is None or s < 1:
            out.append(None)
        elif function.startswith("conv_transpose"):
            out.append((size - 1) * s - 2 * p + d * (k - 1) + e + 1)
        else:
            span = size + 2 * p - d * (k - 1) - 1
            out.append(span // s + 1 if span >= 0 else None)
    return tuple(out)
