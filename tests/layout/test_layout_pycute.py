"""Differential tests against NVIDIA's pycute (the ``pycute`` package of the nvidia-cutlass wheel).

For every operation pycute has, hundreds of random layouts: where CuTe's
representation is canonical the shapes and strides must agree exactly;
where ours raises ValueError for an input pycute silently mis-computes, the
test checks that pycute's answer is indeed wrong (the input is inadmissible).

Known, deliberate differences (each checked below rather than skipped):
- ``right_inverse`` skips broadcast (stride-0) modes as CuTe's C++ does;
  pycute stops at them and returns a smaller inverse (and so ``left_inverse``
  of a layout with broadcast modes differs too).
- pycute's Swizzle recurses forever for shift 0 (``Sw<0,M,0>``): not generated.
- ``idx2crd`` leaves indices past the end in the last mode (CuTe's C++);
  pycute reduces them modulo the last extent. Both agree below ``size``.
- pycute's ``logical_product(A, int)`` calls ``logical_divide`` and its
  ``complement(int, M)`` ignores ``M``: the tests pass layouts, never ints.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from layout_strategies import MANY, SOME, all_coords, is_injective, layouts, values

from tilec.layout import (
    ComposedLayout,
    Layout,
    Swizzle,
    coalesce,
    complement,
    composition,
    crd2idx,
    filter,
    idx2crd,
    left_inverse,
    logical_divide,
    logical_product,
    make_layout,
    right_inverse,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)
from tilec.layout.int_tuple import flatten, has_none, idx2crd_strided, is_tuple, prefix_product, product, shape_div

pycute = pytest.importorskip(
    "pycute", reason="pycute (NVIDIA's reference CuTe in Python, from the nvidia-cutlass wheel) is not installed"
)


# -- helpers --------------------------------------------------------------------
def to_pc(x):
    """Our layout (or tiler of layouts) as pycute's."""
    if isinstance(x, Layout):
        return pycute.Layout(x.shape, x.stride)
    if isinstance(x, tuple):
        return tuple(to_pc(t) for t in x)
    return x


def same(ours: Layout, theirs) -> None:
    assert (ours.shape, ours.stride) == (theirs.shape, theirs.stride), f"ours {ours}, pycute {theirs}"


def pycute_result(fn, *args):
    """pycute's answer, or None where it refuses (pycute asserts, or fails arithmetically)."""
    try:
        return fn(*args)
    except (AssertionError, ZeroDivisionError, IndexError, TypeError, ValueError):
        return None


def function_of(layout, n: int):
    """``[layout(i) for i < n]``, or None if the layout cannot even be evaluated (e.g. a 0 extent)."""
    try:
        if any(s <= 0 for s in flatten(layout.shape)):
            return None
        return [layout(i) for i in range(n)]
    except (ZeroDivisionError, AssertionError, IndexError):
        return None


def composed_values(a: Layout, b: Layout) -> list[int]:
    """Brute force ``A(B(i))``; past A's domain, A's last (coalesced) mode extends."""
    flat = coalesce(a)
    return [a(j) if 0 <= j < a.size() else flat(j) for j in values(b)]


def bijective_with(layout: Layout, rest) -> bool:
    """Whether ``(filter(layout), rest)`` maps its domain one-to-one onto ``[0, size)``."""
    r = function_of(rest, pycute.size(rest))
    if r is None:
        return False
    joined = sorted(x + y for y in r for x in values(filter(layout)))
    return joined == list(range(len(joined)))


def wrong(theirs, expected: list[int]) -> bool:
    """pycute refused, or returned something that is not the expected function."""
    if theirs is None:
        return True
    if any(s <= 0 for s in flatten(theirs.shape)) or pycute.size(theirs) != len(expected):
        return True
    return function_of(theirs, len(expected)) != expected


# -- IntTuple helpers ----------------------------------------------------------------
@MANY
@given(layouts(max_depth=3, max_size=256), st.integers(1, 64))
def test_int_tuple_helpers(layout, n):
    shape = layout.shape
    assert flatten(shape) == pycute.flatten(shape)
    assert product(shape) == pycute.product(shape) == layout.size() == pycute.size(to_pc(layout))
    assert prefix_product(shape) == pycute.prefix_product(shape)
    assert prefix_product(shape, n) == pycute.prefix_product(shape, n)
    assert layout.cosize() == to_pc(layout).cosize()
    assert len(layout) == len(to_pc(layout))
    for m in range(len(layout)):
        same(layout[m], to_pc(layout)[m])
    # the same result, or both refuse (neither of two leaves divides the other)
    assert pycute_result(shape_div, shape, n) == pycute_result(pycute.shape_div, shape, n)
    mk = make_layout(*layout) if is_tuple(layout.shape) else make_layout(layout)
    same(mk, pycute.make_layout(*(to_pc(m) for m in (layout if is_tuple(layout.shape) else [layout]))))


# -- coalesce and filter -------------------------------------------------------------
@MANY
@given(layouts(max_depth=3, max_size=512), st.data())
def test_coalesce(layout, data):
    same(coalesce(layout), pycute.coalesce(to_pc(layout)))
    k = data.draw(st.integers(1, len(layout)))
    profile = tuple(data.draw(st.sampled_from((1, 2))) for _ in range(k))
    same(coalesce(layout, profile), pycute.coalesce(to_pc(layout), profile))


@MANY
@given(layouts(max_depth=3, max_size=512), st.data())
def test_filter(layout, data):
    same(filter(layout), pycute.filter(to_pc(layout)))
    k = data.draw(st.integers(1, len(layout)))
    same(filter(layout, (1,) * k), pycute.filter(to_pc(layout), (1,) * k))


# -- composition ----------------------------------------------------------------
@MANY
@given(layouts(max_size=128), layouts(max_size=48))
def test_composition(a, b):
    theirs = pycute_result(pycute.composition, to_pc(a), to_pc(b))
    try:
        ours = composition(a, b)
    except ValueError:
        # inadmissible: pycute refuses too, or its answer is not A o B
        assert wrong(theirs, composed_values(a, b))
        return
    assert theirs is not None
    same(ours, theirs)


@SOME
@given(layouts(max_size=128), st.data())
def test_composition_with_a_tiler(a, data):
    k = data.draw(st.integers(1, len(a)))
    tiler = tuple(data.draw(st.one_of(st.none(), layouts(max_depth=1, max_size=8))) for _ in range(k))
    theirs = pycute_result(pycute.composition, to_pc(a), to_pc(tiler))
    try:
        ours = composition(a, tiler)
    except ValueError:
        return
    same(ours, theirs)


# -- complement -----------------------------------------------------------------
@MANY
@given(layouts(max_size=128), st.integers(1, 300))
def test_complement(layout, m):
    theirs = pycute_result(pycute.complement, to_pc(layout), m)
    try:
        ours = complement(layout, m)
    except ValueError:
        # no complement: pycute's answer does not complete the layout to a bijection
        assert theirs is None or not bijective_with(layout, theirs)
        return
    same(ours, theirs)


@SOME
@given(layouts("injective", max_size=128), st.integers(1, 300))
def test_complement_of_injective_layouts(layout, m):
    same(complement(layout, m), pycute.complement(to_pc(layout), m))


# -- inverses ---------------------------------------------------------------------
@MANY
@given(layouts(max_size=128))
def test_right_inverse(layout):
    ours = right_inverse(layout)
    theirs = pycute.right_inverse(to_pc(layout))
    broadcast = any(s > 1 and d == 0 for s, d in zip(flatten(layout.shape), flatten(layout.stride)))
    if not broadcast:
        same(ours, theirs)
    else:
        # CuTe skips the broadcast modes; pycute stops at them: ours is a right inverse at least as large
        assert ours.size() >= theirs.size()
        assert all(layout(ours(i)) == i for i in range(ours.size()))


@MANY
@given(layouts(max_size=128))
def test_left_inverse(layout):
    theirs = pycute_result(pycute.left_inverse, to_pc(layout))
    try:
        ours = left_inverse(layout)
    except ValueError:
        if is_injective(layout) and theirs is not None:
            # injective but without a complement: pycute's answer is not a left inverse
            assert any(_eval(theirs, layout(i)) != i for i in range(layout.size()))
        return
    broadcast = any(s > 1 and d == 0 for s, d in zip(flatten(layout.shape), flatten(layout.stride)))
    if not broadcast:
        same(ours, theirs)
    else:
        # right_inverse skips broadcast modes (CuTe), so ours differs from pycute's here;
        # it still sends each offset to a coordinate that holds it
        assert all(layout(ours(layout(i))) == layout(i) for i in range(layout.size()))
    if is_injective(layout):
        assert all(ours(layout(i)) == i for i in range(layout.size()))


def _eval(layout, i):
    try:
        return layout(i)
    except (ZeroDivisionError, AssertionError):
        return None


# -- divides and products ---------------------------------------------------------------
@MANY
@given(layouts(max_size=128), layouts("injective", max_size=24))
def test_logical_divide(a, b):
    theirs = pycute_result(pycute.logical_divide, to_pc(a), to_pc(b))
    try:
        ours = logical_divide(a, b)
    except ValueError:
        spec = make_layout(b, complement(b, a.size()))
        assert wrong(theirs, composed_values(a, spec))
        return
    same(ours, theirs)


@MANY
@given(layouts("injective", max_size=48), layouts(max_size=24))
def test_logical_product(a, b):
    theirs = pycute_result(pycute.logical_product, to_pc(a), to_pc(b))
    try:
        ours = logical_product(a, b)
    except ValueError:
        rep = complement(a, a.size() * b.cosize())
        assert theirs is None or wrong(theirs[1], composed_values(rep, b))
        return
    same(ours, theirs)


@st.composite
def tilers(draw, a: Layout, kind: str):
    """A layout tiler or a by-mode tuple of layouts / None for ``a``."""
    if draw(st.booleans()):
        return draw(layouts(kind, max_size=16))
    k = draw(st.integers(1, len(a)))
    return tuple(draw(st.one_of(st.none(), layouts(kind, max_depth=1, max_size=6))) for _ in range(k))


@MANY
@given(layouts(max_size=128), st.data())
def test_zipped_and_tiled_divide(a, data):
    tiler = data.draw(tilers(a, "injective"))
    for ours_fn, theirs_fn in ((zipped_divide, pycute.zipped_divide), (tiled_divide, pycute.tiled_divide)):
        theirs = pycute_result(theirs_fn, to_pc(a), to_pc(tiler))
        try:
            ours = ours_fn(a, tiler)
        except ValueError:
            continue
        same(ours, theirs)


@MANY
@given(layouts("injective", max_size=48), st.data())
def test_zipped_and_tiled_product(a, data):
    tiler = data.draw(tilers(a, "any"))
    for ours_fn, theirs_fn in ((zipped_product, pycute.zipped_product), (tiled_product, pycute.tiled_product)):
        theirs = pycute_result(theirs_fn, to_pc(a), to_pc(tiler))
        try:
            ours = ours_fn(a, tiler)
        except ValueError:
            continue
        same(ours, theirs)


def test_logical_divide_and_product_by_mode():
    a = Layout((12, (4, 8), 6), (1, (32, 512), 0))
    tiler = (Layout(4, 1), Layout(8, 1))
    same(logical_divide(a, tiler), pycute.logical_divide(to_pc(a), to_pc(tiler)))
    same(logical_divide(a, (None, Layout(4, 2))), pycute.logical_divide(to_pc(a), (None, pycute.Layout(4, 2))))
    b = Layout((2, 2), (1, 2))
    same(logical_product(b, (Layout(3, 1), Layout(4, 1))), pycute.logical_product(to_pc(b), to_pc((Layout(3, 1), Layout(4, 1)))))


# -- coordinates and slicing ----------------------------------------------------------
@SOME
@given(layouts(max_depth=3, max_size=256))
def test_crd2idx_and_idx2crd(layout):
    shape, stride = layout.shape, layout.stride
    no_zero = 0 not in flatten(stride)
    for i in range(layout.size()):
        assert crd2idx(i, shape, stride) == pycute.crd2idx(i, shape, stride)
        crd = idx2crd(i, shape)
        assert crd == pycute.idx2crd(i, shape)
        assert crd2idx(crd, shape, stride) == pycute.crd2idx(crd, shape, stride)
        assert layout(i) == to_pc(layout)(i)
        if no_zero:
            off = layout(i)
            assert idx2crd_strided(off, shape, stride) == pycute.idx2crd(off, shape, stride)


@MANY
@given(layouts(max_depth=3, max_size=256), st.data())
def test_slice_and_offset(layout, data):
    coords = all_coords(layout.shape)
    crd = coords[data.draw(st.integers(0, len(coords) - 1))]

    def holes(c):
        if is_tuple(c):
            if data.draw(st.integers(0, 3)) == 0:
                return None
            return tuple(holes(x) for x in c)
        return None if data.draw(st.booleans()) else c

    partial = holes(crd) if is_tuple(layout.shape) else None
    if not has_none(partial):
        partial = (None,) + partial[1:]
    sub, off = layout.slice_and_offset(partial)
    theirs_sub, theirs_off = pycute.slice_and_offset(partial, to_pc(layout))
    same(sub, theirs_sub)
    assert off == theirs_off
    same(layout(partial), to_pc(layout)(partial))


# -- swizzles ---------------------------------------------------------------------
@st.composite
def swizzles(draw):
    # shift 0 (only legal with 0 bits) sends pycute's shiftr/shiftl into endless recursion
    bits = draw(st.integers(0, 4))
    shift = draw(st.integers(max(bits, 1), bits + 3)) * draw(st.sampled_from((1, -1)))
    return Swizzle(bits, draw(st.integers(0, 4)), shift)


@MANY
@given(swizzles())
def test_swizzle(sw):
    theirs = pycute.Swizzle(sw.bits, sw.base, sw.shift)
    assert (sw.yyy_mask, sw.zzz_mask, sw.size(), sw.cosize()) == (theirs.yyy_msk, theirs.zzz_msk, theirs.size(), theirs.cosize())
    for o in range(0, 4 * sw.size(), max(1, sw.size() // 128)):
        assert sw(o) == theirs(o)


@MANY
@given(swizzles(), st.integers(0, 256), layouts(max_size=128))
def test_composed_layout(sw, offset, layout):
    ours = ComposedLayout(sw, offset, layout)
    theirs = pycute.ComposedLayout(pycute.Swizzle(sw.bits, sw.base, sw.shift), offset, to_pc(layout))
    assert ours.size() == theirs.size() and len(ours) == len(theirs)
    for i in range(layout.size()):
        assert ours(i) == theirs(i)
    for crd in all_coords(layout.shape)[:64]:
        assert ours(crd) == theirs(crd)
    for m in range(len(layout)):
        sub, their_sub = ours[m], theirs[m]
        assert [sub(i) for i in range(sub.size())] == [their_sub(i) for i in range(their_sub.size())]
    # a layout as the inner function
    inner = Layout((4, 64), (64, 1))
    ours = ComposedLayout(inner, offset, layout)
    theirs = pycute.ComposedLayout(to_pc(inner), offset, to_pc(layout))
    for i in range(layout.size()):
        assert ours(i) == theirs(i)


def test_pycute_agrees_on_the_cute_doc_examples():
    P = Layout.parse
    pc = to_pc
    same(composition(P("(6,2):(8,2)"), P("(4,3):(3,1)")), pycute.composition(pc(P("(6,2):(8,2)")), pc(P("(4,3):(3,1)"))))
    same(complement(P("4:2"), 24), pycute.complement(pc(P("4:2")), 24))
    same(logical_divide(P("(4,2,3):(2,1,8)"), P("4:2")), pycute.logical_divide(pc(P("(4,2,3):(2,1,8)")), pc(P("4:2"))))
    same(
        logical_product(P("(2,2):(1,2)"), P("(3,4):(4,1)")),
        pycute.logical_product(pc(P("(2,2):(1,2)")), pc(P("(3,4):(4,1)"))),
    )
    assert str(pycute.Swizzle(3, 3, 3)) == "SW_3_3_3" and str(Swizzle(3, 3, 3)) == "Sw<3,3,3>"
