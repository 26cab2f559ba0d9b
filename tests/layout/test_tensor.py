"""Tensors (``tilec.layout.tensor``): engine + layout + offset, indexing, slicing, local_tile and
local_partition, against the worked example of seed 002 and against brute force."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from layout_strategies import FEW, shapes

from tilec.layout import Layout, tiling
from tilec.layout.int_tuple import flatten, idx2crd, product
from tilec.layout.tensor import (
    Coordinates,
    Tensor,
    copy,
    local_partition,
    local_tile,
    make_fragment_like,
    make_identity_tensor,
    make_tensor,
)


def _grid(t: Tensor) -> list[list]:
    """A rank-2 tensor as rows of elements."""
    rows, cols = product(t.shape[0]), product(t.shape[1])
    return [[t[i, j] for j in range(cols)] for i in range(rows)]


# -- seed 002: copying a slice of a row-major (2, 4) buffer, then a warp's and a thread's share ----------


@pytest.fixture
def g_a():
    """Seed 002's ``gA``: the buffer 0..7 seen as the row-major (2, 4) matrix ``(2,4):(4,1)``."""
    return make_tensor(list(range(8)), Layout((2, 4), (4, 1)))


def test_seed_002_the_whole_matrix(g_a):
    assert _grid(g_a) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert g_a.values() == [0, 4, 1, 5, 2, 6, 3, 7]  # colexicographic: rows vary fastest


def test_seed_002_the_slice_at_offset_2_keeps_stride_4(g_a):
    g_a_g_a = local_tile(g_a, (2, 2), (0, 1))
    assert g_a_g_a.layout == Layout((2, 2), (4, 1)) and g_a_g_a.offset == 2
    assert _grid(g_a_g_a) == [[2, 3], [6, 7]]


def test_seed_002_global_to_shared_to_warp_to_thread(g_a):
    g_a_g_a = local_tile(g_a, (2, 2), (0, 1))
    s_a = make_tensor([None] * 4, Layout((2, 2), (2, 1)))  # sAsA: (2,2):(2,1), base offset 0
    copy(g_a_g_a, s_a)
    assert s_a.engine == [2, 3, 6, 7]
    w_a = local_tile(s_a, (1, 2), (0, 0))  # wAsA: the warp's row
    assert w_a.layout == Layout((1, 2), (2, 1)) and _grid(w_a) == [[2, 3]]
    t_a = local_tile(w_a, (1, 1), (0, 1))  # tArA: one thread's element
    assert t_a.size() == 1 and t_a.values() == [3]
    r_a = make_fragment_like(t_a)
    copy(t_a, r_a)
    assert r_a.engine == [3]


def test_seed_002_partition_of_the_slice_over_two_threads(g_a):
    g_a_g_a = local_tile(g_a, (2, 2), (0, 1))
    assert local_partition(g_a_g_a, Layout((1, 2)), 0).values() == [2, 6]
    assert local_partition(g_a_g_a, Layout((1, 2)), 1).values() == [3, 7]


# -- indexing and slicing ---------------------------------------------------------------------------


def test_indexing_by_coordinate_linear_index_and_nested_coordinate():
    t = make_tensor(list(range(100, 124)), Layout(((2, 3), 4)))
    assert t[(1, 2), 3] == 100 + 1 + 2 * 2 + 6 * 3
    assert t[5, 3] == t[(1, 2), 3]  # an int indexes a whole tuple mode colexicographically
    assert t[23] == 123 and t[np.int64(23)] == 123
    assert len(t) == t.size() == 24 and t.rank() == 2


def test_slices_are_views_sharing_the_engine():
    t = make_tensor(list(range(12)), Layout((3, 4)))
    column = t[:, 2]
    row = t[1, None]
    assert column.values() == [6, 7, 8] and column.offset == 6
    assert row.values() == [1, 4, 7, 10]
    column[1] = -1
    assert t[1, 2] == -1 and row[2] == -1
    assert t[:, :].layout == t.layout and t[:] is t


def test_index_tensor_without_engine_gives_indices():
    t = make_tensor(None, Layout((4, 2), (2, 1)), offset=5)
    assert t.values() == [5, 7, 9, 11, 6, 8, 10, 12]


def test_numpy_arrays_keep_their_own_indexing():
    a = np.arange(12.0).reshape(3, 4)
    t = make_tensor(a)
    assert t.layout == Layout((3, 4), (4, 1))
    assert all(t[i, j] == a[i, j] for i in range(3) for j in range(4))
    f = np.asfortranarray(a)
    tf = make_tensor(f)
    assert tf.layout == Layout((3, 4), (1, 3)) and all(tf[i, j] == a[i, j] for i in range(3) for j in range(4))
    t[2, 3] = 99.0
    assert a[2, 3] == 99.0  # the tensor writes through to the array
    frag = make_fragment_like(t[:, 1])
    assert frag.engine.dtype == a.dtype and frag.shape == (3,) and list(frag.engine) == [0.0] * 3


def test_identity_tensor_holds_coordinates():
    ident = make_identity_tensor((3, (2, 2)))
    assert ident[2, 3] == (2, (1, 1))
    assert ident[:, 1].values() == [(0, (1, 0)), (1, (1, 0)), (2, (1, 0))]
    assert ident.engine == Coordinates((3, (2, 2)))
    with pytest.raises(TypeError, match="read-only"):
        ident[0, 0] = 1


@pytest.mark.parametrize(
    ("key", "error", "match"),
    [
        ((0, 4), IndexError, "outside the shape"),
        (12, IndexError, "outside the shape"),
        ((slice(1, 2), 0), ValueError, "whole-mode slice"),
        (("a", 0), TypeError, "expected ints"),
        ((None, None, None), ValueError, "3 modes"),
    ],
)
def test_bad_indices_name_what_was_expected(key, error, match):
    t = make_tensor(list(range(12)), Layout((3, 4)))
    with pytest.raises(error, match=match):
        t[key]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: make_tensor(list(range(5)), Layout((2, 3))), ValueError, "reaches index 5"),
        (lambda: make_tensor(np.arange(12).reshape(3, 4)[:, ::2]), ValueError, "non-contiguous"),
        (lambda: make_tensor(None), TypeError, "without a layout"),
        (lambda: make_tensor([1, 2], "2"), TypeError, "layout must be"),
        (lambda: Tensor([1], (1,)), TypeError, "layout must be a Layout"),
        (lambda: copy(make_tensor([1, 2]), make_tensor([0])), ValueError, "the same"),
        (lambda: make_tensor(None, 4).__setitem__(0, 1), TypeError, "no engine"),
        (lambda: local_tile(make_tensor(None, Layout((6, 4))), (4, 2), (0, 0)), ValueError, "multiple of the tile"),
        (lambda: local_tile([1, 2], 2, 0), TypeError, "must be a Tensor"),
        (lambda: local_partition(make_tensor(None, (4, 4)), Layout((2, 2)), 4), ValueError, "thread 4"),
    ],
)
def test_bad_arguments_name_what_was_expected(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- local_tile / local_partition ---------------------------------------------------------------------


def test_local_tile_keeps_a_mode_whose_coordinate_is_none():
    """MoYe's ``@tile mA (bM, bK) (blockIdx().x, :)``: the k tiles stay as a third mode."""
    m_a = make_tensor(None, Layout((2048, 256)))
    g_a = local_tile(m_a, (128, 8), (3, None))
    assert g_a.shape == (128, 8, 32) and g_a.stride == (1, 2048, 8 * 2048) and g_a.offset == 3 * 128
    # one (bM, bN, bK) tiler and (m, n, k) coordinate for A, B and C: A drops N (CuTe's Step<_1, X, _1>)
    g_a2 = local_tile(m_a, (128, 16, 8), (3, 5, None), proj=(True, False, True))
    assert g_a2.layout == g_a.layout and g_a2.offset == g_a.offset


def test_local_partition_is_the_strided_share():
    ident = make_identity_tensor((4, 6))
    assert local_partition(ident, Layout((2, 3)), 4).values() == [(0, 2), (2, 2), (0, 5), (2, 5)]
    assert local_partition(ident, Layout((2, 3), (3, 1)), 4).values() == [(1, 1), (3, 1), (1, 4), (3, 4)]


def test_bare_layouts_get_the_layout_level_answers():
    a = Layout((8, 6))
    assert local_tile(a, (4, 3), (1, 1)) == tiling.local_tile(a, (4, 3), (1, 1))
    assert local_partition(a, Layout((2, 3)), 5) == tiling.local_partition(a, Layout((2, 3)), 5)


@st.composite
def _tiled_shapes(draw):
    """A rank-2 tile shape and how many tiles per mode."""
    tile = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    reps = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    return tile, reps


@FEW
@given(_tiled_shapes(), st.booleans())
def test_local_tile_over_every_tile_coordinate_covers_the_tensor_once(tiled, row_major):
    (t0, t1), (r0, r1) = tiled
    shape = (t0 * r0, t1 * r1)
    layout = Layout(shape, (shape[1], 1)) if row_major else Layout(shape)
    ident = make_identity_tensor(shape)
    seen = Counter()
    for c0 in range(r0):
        for c1 in range(r1):
            tile = local_tile(ident, (t0, t1), (c0, c1))
            assert tile.shape == (t0, t1)
            for i in range(t0):
                for j in range(t1):
                    assert tile[i, j] == (c0 * t0 + i, c1 * t1 + j)
            seen.update(local_tile(make_tensor(None, layout), (t0, t1), (c0, c1)).values())
    assert sorted(seen) == list(range(product(shape))) and set(seen.values()) == {1}


@FEW
@given(st.integers(1, 4), st.integers(1, 4), st.booleans(), st.integers(1, 3), st.integers(1, 3))
def test_local_partition_gives_each_element_to_one_thread(p, q, row_major, r0, r1):
    thr = Layout((p, q), (q, 1)) if row_major else Layout((p, q))
    tile = tuple(m.size() for m in thr)
    shape = (tile[0] * r0, tile[1] * r1)
    ident = make_identity_tensor(shape)
    seen = Counter()
    for t in range(thr.size()):
        part = local_partition(ident, thr, t)
        assert part.shape == (r0, r1)
        coords = part.values()
        first = coords[0]
        assert thr(first) == t  # the thread's first element is at its own coordinate in the first tile
        assert all((c[0] - first[0]) % tile[0] == 0 and (c[1] - first[1]) % tile[1] == 0 for c in coords)
        seen.update(coords)
    assert len(seen) == product(shape) and set(seen.values()) == {1}


@FEW
@given(shapes(max_depth=2, max_rank=3, max_size=64))
def test_identity_tensor_element_i_is_the_natural_coordinate_of_i(shape):
    ident = make_identity_tensor(shape)
    assert ident.values() == [idx2crd(i, shape) for i in range(product(shape))]
    assert len(flatten(shape)) >= 1
