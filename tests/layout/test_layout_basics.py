"""The Layout value itself: construction, measures, the coordinate function and slicing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from layout_strategies import SOME, all_coords, layouts

from tilec.layout import Layout, cosize, crd2idx, depth, idx2crd, make_layout, rank, size
from tilec.layout.int_tuple import (
    compact_idx,
    fill_none,
    flatten,
    has_none,
    is_tuple,
    prefix_product,
    shape_div,
    suffix_product,
)


# -- construction and value semantics ------------------------------------------
def test_default_strides_are_compact_column_major():
    assert Layout((4, (2, 3))).stride == (1, (4, 8))
    assert Layout(8).stride == 1
    assert prefix_product((4, (2, 3)), 2) == (2, (8, 16))
    assert suffix_product((4, (2, 3))) == (6, (3, 1))


def test_lists_are_normalised_to_tuples():
    assert Layout([4, [2, 3]], [1, [4, 8]]) == Layout((4, (2, 3)), (1, (4, 8)))


def test_value_semantics():
    a = Layout((8, (4, 2)), (4, (1, 32)))
    b = Layout((8, (4, 2)), (4, (1, 32)))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Layout((8, (4, 2)), (4, (1, 33)))
    assert a != "(8,(4,2)):(4,(1,32))"
    with pytest.raises(AttributeError):
        a.shape = 3
    assert str(a) == "(8,(4,2)):(4,(1,32))"
    assert repr(a) == "Layout.parse('(8,(4,2)):(4,(1,32))')"
    assert Layout.parse(str(a)) == a


def test_measures():
    a = Layout((8, (4, 2)), (4, (1, 32)))
    assert (size(a), cosize(a), rank(a), depth(a)) == (64, 64, 2, 2)
    assert size((2, (3, 4))) == 24 and rank((2, 3)) == 2 and depth(5) == 0
    assert Layout(4, 0).cosize() == 1
    assert [m for m in a] == [Layout(8, 4), Layout((4, 2), (1, 32))]
    assert a.modes() == (a[0], a[1]) and a[-1] == a[1]
    b = Layout(6, 2)
    assert len(b) == 1 and b[0] == b and b[-1] == b
    with pytest.raises(IndexError, match="6:2"):
        b[1]


def test_make_layout_concatenates_modes():
    assert make_layout(Layout(4, 1), Layout((2, 3), (8, 16))) == Layout((4, (2, 3)), (1, (8, 16)))
    assert make_layout([Layout(4, 1), 3]) == Layout((4, 3), (1, 1))
    assert make_layout(Layout(4, 2)) == Layout((4,), (2,))


# -- crd2idx / idx2crd ----------------------------------------------------------
@SOME
@given(layouts())
def test_linear_hierarchical_and_natural_coordinates_agree(layout):
    """L(i) == L(idx2crd(i, shape)) == crd2idx of the per-mode coordinate, for all i < size."""
    for i, crd in enumerate(all_coords(layout.shape)):
        assert idx2crd(i, layout.shape) == crd
        assert compact_idx(crd, layout.shape) == i
        expected = sum(c * d for c, d in zip(flatten(crd), flatten(layout.stride)))
        assert layout(i) == expected
        assert layout(crd) == expected
        assert crd2idx(crd, layout.shape, layout.stride) == expected
        if is_tuple(layout.shape):
            # one level less nested: each top-level mode gets its own linear index
            top = tuple(compact_idx(c, s) for c, s in zip(crd, layout.shape))
            assert layout(top) == expected
            assert layout(*top) == expected


@SOME
@given(layouts(), st.data())
def test_idx2crd_crd2idx_round_trip(layout, data):
    shape = layout.shape
    i = data.draw(st.integers(0, size(layout) - 1))
    assert crd2idx(idx2crd(i, shape), shape, prefix_product(shape)) == i
    crd = idx2crd(i, shape)
    assert idx2crd(crd, shape) == crd  # already a coordinate: unchanged
    assert crd2idx(None, shape, layout.stride) == 0


def test_index_past_the_end_extends_the_last_mode():
    # CuTe: the last mode is not reduced, so L(size + k) continues along it
    a = Layout((4, 3), (1, 10))
    assert idx2crd(13, (4, 3)) == (1, 3)
    assert a(13) == 31
    assert Layout((2, (2, 2)), (1, (4, 16)))(9) == 1 + 4 * 0 + 16 * 2


def test_coordinate_that_does_not_match_the_shape_is_rejected():
    a = Layout((4, 3), (1, 4))
    with pytest.raises(ValueError, match=r"\(1, 2, 3\)"):
        a((1, 2, 3))
    with pytest.raises(ValueError):
        idx2crd((1, 2), 6)


def test_shape_div():
    assert shape_div((4, 6), 8) == (1, 3)
    assert shape_div((6, 2), 3) == (2, 2)
    assert shape_div((3, 6, 2, 8), 72) == (1, 1, 1, 4)
    assert shape_div((3, 6, 2, 8), 9) == (1, 2, 2, 8)
    assert shape_div(4, (2, 2)) == 1
    with pytest.raises(ValueError, match="6 and 4"):
        shape_div(6, 4)
    with pytest.raises(ValueError):
        shape_div((2, 2), (2, 2, 2))


# -- slicing ----------------------------------------------------------------------
def _holes(draw, crd):
    """``crd`` with random sub-coordinates (leaves or whole sub-tuples) replaced by None."""
    if is_tuple(crd):
        if draw(st.integers(0, 3)) == 0:
            return None
        return tuple(_holes(draw, c) for c in crd)
    return None if draw(st.booleans()) else crd


def _fill(partial, rest):
    """Put the entries of ``rest`` into the holes of ``partial``, in order."""
    it = iter(rest)

    def walk(p):
        if is_tuple(p):
            return tuple(walk(x) for x in p)
        return next(it) if p is None else p

    return walk(partial)


@SOME
@given(layouts(), st.data())
def test_slice_and_offset_against_full_coordinates(layout, data):
    """For a coordinate with holes, L(full) == sub(rest) + offset for every way to fill the holes."""
    coords = all_coords(layout.shape)
    crd = coords[data.draw(st.integers(0, len(coords) - 1))]
    partial = _holes(data.draw, crd) if is_tuple(layout.shape) else None
    if not has_none(partial):
        partial = (None,) + partial[1:]
    sub, offset = layout.slice_and_offset(partial)
    assert layout(partial) == sub
    assert layout.slice(partial) == sub
    assert offset == layout(fill_none(partial))
    for rest in all_coords(sub.shape):
        assert layout(_fill(partial, rest)) == sub(rest) + offset


def test_slice_examples():
    a = Layout(((2, 3), (4, 5)), ((1, 2), (6, 24)))
    sub, off = a.slice_and_offset((None, (1, None)))
    assert sub == Layout(((2, 3), 5), ((1, 2), 24)) and off == 6
    sub, off = a.slice_and_offset(((1, None), 2))
    assert sub == Layout((3,), (2,)) and off == 1 + 12
    assert a((None, 3)) == Layout(((2, 3),), ((1, 2),))
    assert Layout(8, 2).slice(None) == Layout((8,), (2,))
    with pytest.raises(ValueError, match=r"\(\(2,3\),\(4,5\)\):\(\(1,2\),\(6,24\)\)"):
        a.slice_and_offset(3)
