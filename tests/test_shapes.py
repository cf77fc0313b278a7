"""The shape arithmetic the walker follows tensors with (analysis/shapes.py): each answer, and each unknown."""
from autograd_lsp.analysis import shapes
from autograd_lsp.analysis.shapes import ELLIPSIS, FULL, INT, NEW, OTHER, PART


def test_scalar_needs_every_dim_one_or_one_known_larger():
    assert shapes.scalar_of(()) is True and shapes.scalar_of((1, 1)) is True
    assert shapes.scalar_of((None, 3)) is False
    assert shapes.scalar_of((None, 1)) is None and shapes.scalar_of(None) is None


def test_broadcast():
    assert shapes.broadcast([(2, 1), (1, 8)]) == (2, 8)
    assert shapes.broadcast([(), (3,)]) == (3,)
    assert shapes.broadcast([(None, 1), (4,)]) == (None, 4)
    assert shapes.broadcast([(2,), (3,)]) is None  # would not broadcast
    assert shapes.broadcast([(2,), None]) is None


def test_reshapes():
    assert shapes.view((2, 3), [-1, 1]) == (6, 1)
    assert shapes.view((None, 3), [-1, 3]) == (None, 3)
    assert shapes.view((2, 3), [4, -1]) is None  # 6 is not a multiple of 4
    assert shapes.flatten((8, 4, None), 1) == (8, None)
    assert shapes.flatten((2, 3, 4)) == (24,)
    assert shapes.unsqueeze((5,), -1) == (5, 1)
    assert shapes.squeeze((1, 5, 1)) == (5,) and shapes.squeeze((1, None)) is None
    assert shapes.squeeze((1, 5), [0]) == (5,) and shapes.squeeze((2, 5), [0]) == (2, 5)
    assert shapes.permute((2, 3, 4), [2, 0, 1]) == (4, 2, 3)
    assert shapes.transpose((2, 3), 0, -1) == (3, 2)


def test_reductions():
    assert shapes.reduce((4, 10), [1], False) == (4,)
    assert shapes.reduce((4, 10), [-1], True) == (4, 1)
    assert shapes.reduce((4, 10), None, False) == ()
    assert shapes.reduce((4, 10), [2], False) is None


def test_indexing():
    assert shapes.index((4, 5), [INT, INT]) == ((), ())
    assert shapes.index((4, 5), [FULL, INT]) == ((4,), (4,))
    assert shapes.index((4, 5), [INT]) == ((5,), ())
    assert shapes.index((4, 5), [NEW, INT, INT]) == ((1,), ())
    assert shapes.index((4, 5, 6), [ELLIPSIS, INT]) == ((4, 5), ())
    assert shapes.index((4, 5), [PART, INT]) == ((None,), ())
    # advanced indexing: unknown shape, but the `:` before it keeps dim 0 wherever it lands
    assert shapes.index((4, 5), [FULL, OTHER]) == (None, (4,))
    assert shapes.index((4, 5), [OTHER, FULL]) == (None, ())  # a mask may take several dims: the `:` is not placed


def test_sized_slices():
    assert shapes.index((12, 3), [slice(2, 10, None)]) == ((8, 3), (8,))
    assert shapes.index((4, 5), [slice(None, -1, None), INT]) == ((3,), (3,))
    assert shapes.index((None, 5), [slice(1, None, None)]) == ((None, 5), (None,))
    assert shapes.index((120, 4), [shapes.Window(range(0, 120, 40), 40)]) == ((40, 4), (40,))
    assert shapes.index((121, 4), [shapes.Window(range(0, 121, 40), 40)]) == ((None, 4), (None,))  # a last window of one row


def test_layers():
    assert shapes.layer({"linear"}, (8, 16), 4) == (8, 4)
    assert shapes.layer({"linear"}, (8, 16), None) == (8, None)
    assert shapes.layer({"conv2d"}, (2, 3, 16, 16), 8) == (2, 8, None, None)
    assert shapes.layer({"conv2d"}, (3, 16, 16), 8) == (8, None, None)  # unbatched
    assert shapes.layer({"conv2d"}, (16, 16), 8) is None
    assert shapes.layer({"adaptive_avg_pool2d"}, (2, 8, 5, 5), None, 1) == (2, 8, 1, 1)
    assert shapes.layer({"unary"}, (2, 3), None) == (2, 3)
    assert shapes.layer(frozenset(), (2, 3), None) is None


def test_stack_and_cat():
    assert shapes.stack([(3,), (3,)]) == (2, 3)
    assert shapes.stack([(3,), (3,)], 1) == (3, 2)
    assert shapes.cat([(2, 3), (4, 3)]) == (6, 3)
    assert shapes.cat([(2, 3), (None, 3)]) == (None, 3)
    assert shapes.cat([(2, 3), (2, 4)]) is None
