"""Divides, products, local_tile / local_partition and up/down-casting, against brute force."""

from __future__ import annotations

from collections import Counter
from itertools import product as cartesian

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from layout_strategies import SOME, compatible, is_injective, layouts, prefix_tile, shapes, values

from tilec.layout import (
    Layout,
    blocked_product,
    coalesce,
    complement,
    composition,
    downcast,
    flat_divide,
    local_partition,
    local_tile,
    logical_divide,
    logical_product,
    make_layout,
    raked_product,
    tiled_divide,
    tiled_product,
    upcast,
    zipped_divide,
    zipped_product,
)
from tilec.layout.int_tuple import congruent, flatten, idx2crd, is_tuple, unflatten


def _same_function(x: Layout, y: Layout) -> None:
    assert x.size() == y.size()
    assert values(x) == values(y), f"{x} and {y} differ as functions"


# -- logical_divide ---------------------------------------------------------------
@SOME
@given(layouts(max_size=96), layouts("injective", max_size=24))
def test_logical_divide_is_composition_with_tile_and_complement(a, b):
    try:
        d = logical_divide(a, b)
    except ValueError as err:
        assert str(a) in str(err) or str(b) in str(err)
        return
    rest = complement(b, a.size())
    spec = make_layout(b, rest)
    assert d == composition(a, spec)
    assert len(d) == 2 and compatible(b.shape, d[0].shape) and compatible(rest.shape, d[1].shape)
    assert d[0] == composition(a, b)
    flat_a = coalesce(a)
    for i in range(d.size()):
        j = spec(i)
        assert d(i) == (a(j) if j < a.size() else flat_a(j))


@SOME
@given(layouts(max_size=128), st.data())
def test_logical_divide_by_a_dividing_tile_partitions_the_layout(a, data):
    t = prefix_tile(data.draw, a)
    d = logical_divide(a, t)
    assert d.size() == a.size() and d[0].size() == t and d[1].size() == a.size() // t
    # tile-major order is the original order: d(i) == a(i)
    _same_function(d, a)
    assert d[0] == composition(a, t)
    _same_function(d[1], composition(a, Layout(a.size() // t, t)))


@SOME
@given(layouts(max_size=128), st.data())
def test_by_mode_divides_and_their_regroupings(a, data):
    k = data.draw(st.integers(1, len(a)))
    tiler = tuple(data.draw(st.one_of(st.none(), st.just(prefix_tile(data.draw, a[i])))) for i in range(k))
    ld = logical_divide(a, tiler)
    zd = zipped_divide(a, tiler)
    td = tiled_divide(a, tiler)
    fd = flat_divide(a, tiler)

    # logical: mode by mode, the untouched modes stay
    assert len(ld) == len(a)
    for i in range(len(a)):
        t = tiler[i] if i < k else None
        assert ld[i] == (a[i] if t is None else logical_divide(a[i], Layout(t)))
        _same_function(ld[i], a[i])

    # zipped: ((tiles...), (rests..., untouched...)); a None tiler contributes 1:0 as its tile
    tiles = [Layout(1, 0) if t is None else ld[i][0] for i, t in enumerate(tiler)]
    rests = [a[i] if t is None else ld[i][1] for i, t in enumerate(tiler)] + [a[i] for i in range(k, len(a))]
    assert zd == make_layout(make_layout(*tiles), make_layout(*rests))
    # tiled: ((tiles...), rest0, rest1, ...); flat: (tile0, tile1, ..., rest0, rest1, ...)
    assert td == make_layout(make_layout(*tiles), *rests)
    assert fd == make_layout(*tiles, *rests)
    _same_function(td, zd)

    # the same elements: zd((t, r)) == ld(((t0, r0), (t1, r1), ..., u...)) for every t, r
    t_shapes = [m.size() for m in tiles]
    r_shapes = [m.size() for m in rests]
    for tc in cartesian(*(range(n) for n in t_shapes)):
        for rc in cartesian(*(range(n) for n in r_shapes)):
            lcrd = tuple((tc[i], rc[i]) if tiler[i] is not None else rc[i] for i in range(k)) + rc[k:]
            assert zd((tc, rc)) == ld(lcrd)
            assert fd(tc + rc) == zd((tc, rc))


def test_divide_examples_from_the_cute_docs():
    P = Layout.parse
    assert logical_divide(P("(4,2,3):(2,1,8)"), P("4:2")) == P("((2,2),(2,3)):((4,1),(2,8))")
    assert logical_divide(P("16:3"), P("4:1")) == P("(4,4):(3,12)")
    assert logical_divide(P("16:3"), P("4:4")) == P("(4,4):(12,3)")
    assert logical_divide(P("16:3"), P("4:2")) == P("(4,(2,2)):(6,(3,24))")
    assert logical_divide(P("16:3"), P("(2,2):(4,1)")) == P("((2,2),(2,2)):((12,3),(6,24))")
    a = P("(9,(4,8)):(59,(13,1))")
    tiler = (P("3:3"), P("(2,4):(1,8)"))
    assert logical_divide(a, tiler)[0][0] == P("3:177")
    assert zipped_divide(a, tiler)[0] == P("(3,(2,4)):(177,(13,2))")
    assert zipped_divide(a, tiler)[0] == composition(a, tiler)
    assert zipped_divide(a, tiler) == P("((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))")
    # shapes as tilers: ((TileM,RestM),(TileN,RestN),L) and ((TileM,TileN),(RestM,RestN,L))
    a = P("(12,32,6):(1,128,0)")
    assert logical_divide(a, (4, 8)) == P("((4,3),(8,4),6):((1,4),(128,1024),0)")
    assert zipped_divide(a, (4, 8)) == P("((4,8),(3,4,6)):((1,128),(4,1024,0))")
    assert tiled_divide(a, (4, 8)) == P("((4,8),3,4,6):((1,128),4,1024,0)")
    assert flat_divide(a, (4, 8)) == P("(4,8,3,4,6):(1,128,4,1024,0)")
    a = P("(12,(4,8),6):(1,(32,512),0)")
    assert logical_divide(a, (4, 8)) == P("((4,3),((4,2),4),6):((1,4),((32,512),1024),0)")
    assert zipped_divide(a, (4, 8)) == P("((4,(4,2)),(3,4,6)):((1,(32,512)),(4,1024,0))")
    # gathering the tile out of the raked product gives the blocked product back
    raked = P("((3,2),(4,2)):((16,1),(4,2))")
    assert logical_divide(raked, (P("2:3"), P("2:4"))) == P("((2,3),(2,4)):((1,16),(2,4))")
    assert zipped_divide(raked, (P("2:3"), P("2:4"))) == P("((2,2),(3,4)):((1,2),(16,4))")


# -- logical_product ------------------------------------------------------------
@SOME
@given(layouts("injective", max_size=32), layouts(max_size=24))
def test_logical_product_is_the_layout_and_its_repeats(a, b):
    try:
        p = logical_product(a, b)
    except ValueError as err:
        # B does not fit the holes of A's complement (CuTe rejects these statically too)
        assert "not admissible" in str(err)
        return
    rep = complement(a, a.size() * b.cosize())
    assert p == make_layout(a, composition(rep, b))
    assert p[0] == a and compatible(b.shape, p[1].shape)
    for i in range(a.size()):
        for j in range(b.size()):
            assert p((i, j)) == a(i) + rep(b(j))
    if is_injective(b):
        assert is_injective(p)


@SOME
@given(layouts("bijective", max_size=24), layouts("injective", max_size=24))
def test_product_of_a_compact_block_repeats_it_at_multiples_of_its_size(a, b):
    p = logical_product(a, b)
    n = a.size()
    for i in range(n):
        for j in range(b.size()):
            assert p((i, j)) == a(i) + n * b(j)


@SOME
@given(st.lists(layouts("bijective", max_depth=1, max_size=4), min_size=1, max_size=3), st.data())
def test_zipped_and_tiled_products_regroup_the_logical_product(modes, data):
    a = make_layout(*modes)  # every mode compact on its own: any tiler fits its complement
    k = data.draw(st.integers(1, len(a)))
    tiler = tuple(data.draw(st.one_of(st.none(), layouts("injective", max_depth=1, max_size=4))) for _ in range(k))
    lp = logical_product(a, tiler)
    zp = zipped_product(a, tiler)
    tp = tiled_product(a, tiler)
    assert len(lp) == len(a)
    for i in range(len(a)):
        t = tiler[i] if i < k else None
        assert lp[i] == (a[i] if t is None else logical_product(a[i], t))
    firsts = [Layout(1, 0) if t is None else lp[i][0] for i, t in enumerate(tiler)]
    seconds = [a[i] if t is None else lp[i][1] for i, t in enumerate(tiler)] + [a[i] for i in range(k, len(a))]
    assert zp == make_layout(make_layout(*firsts), make_layout(*seconds))
    assert tp == make_layout(make_layout(*firsts), *seconds)
    _same_function(tp, zp)


def test_product_examples_from_the_cute_docs():
    P = Layout.parse
    assert logical_product(P("(2,2):(4,1)"), P("6:1")) == P("((2,2),(2,3)):((4,1),(2,8))")
    assert logical_product(P("(2,2):(4,1)"), 6) == P("((2,2),(2,3)):((4,1),(2,8))")
    tile, matrix_of_tiles = P("(2,2):(1,2)"), P("(3,4):(4,1)")
    assert logical_product(tile, matrix_of_tiles) == P("((2,2),(3,4)):((1,2),(16,4))")
    assert blocked_product(tile, matrix_of_tiles) == P("((2,3),8):((1,16),2)")
    assert raked_product(tile, matrix_of_tiles) == P("((3,2),(4,2)):((16,1),(4,2))")
    assert tiled_product(tile, matrix_of_tiles) == P("((2,2),3,4):((1,2),16,4)")
    assert zipped_product(tile, matrix_of_tiles) == P("((2,2),(3,4)):((1,2),(16,4))")
    # the 2x5 row-major block over a 3x4 column-major arrangement (CuTe's 02_layout_algebra figures)
    assert blocked_product(P("(2,5):(5,1)"), P("(3,4):(1,3)")) == P("(6,(5,4)):(5,(1,30))")
    assert raked_product(P("(2,5):(5,1)"), P("(3,4):(1,3)")) == P("((3,2),(4,5)):((10,5),(30,1))")
    # rank-1 operands keep a rank-1 (tupled) result, as CuTe's coalesce by profile
    assert blocked_product(P("4:1"), P("3:1")) == P("(12):(1)")


# -- blocked / raked products ---------------------------------------------------
def _at(layout: Layout, crd: tuple) -> int:
    """``layout`` at the per-mode coordinate ``crd`` (padded modes beyond its rank are 0)."""
    return layout(tuple(crd[: len(layout)])) if is_tuple(layout.shape) else layout(crd[0])


def _mode_sizes(layout: Layout, r: int) -> list[int]:
    sizes = [m.size() for m in layout] if is_tuple(layout.shape) else [layout.size()]
    return sizes + [1] * (r - len(sizes))


@SOME
@given(layouts("bijective", max_depth=2, max_size=12), layouts("bijective", max_depth=2, max_size=12))
def test_blocked_and_raked_products_by_brute_force(a, b):
    """Mode i of the result walks block mode i then tile mode i (blocked), or the reverse (raked).

    With a compact block the offset is ``A(a) + size(A) * B(b)``.
    """
    r = max(len(a), len(b))
    sa, sb = _mode_sizes(a, r), _mode_sizes(b, r)
    n = a.size()
    bp, rp = blocked_product(a, b), raked_product(a, b)
    assert len(bp) == r and len(rp) == r and bp.size() == rp.size() == n * b.size()
    for crd in cartesian(*(range(x * y) for x, y in zip(sa, sb))):
        blocked_a = tuple(c % x for c, x in zip(crd, sa))
        blocked_b = tuple(c // x for c, x in zip(crd, sa))
        assert bp(crd) == _at(a, blocked_a) + n * _at(b, blocked_b)
        raked_b = tuple(c % y for c, y in zip(crd, sb))
        raked_a = tuple(c // y for c, y in zip(crd, sb))
        assert rp(crd) == _at(a, raked_a) + n * _at(b, raked_b)


@SOME
@given(layouts("injective", max_depth=2, max_size=12), layouts("injective", max_depth=2, max_size=12))
def test_blocked_and_raked_products_regroup_the_logical_product(a, b):
    r = max(len(a), len(b))
    sa, sb = _mode_sizes(a, r), _mode_sizes(b, r)

    def pad(x: Layout) -> Layout:  # CuTe's append<R>: trailing 1:0 modes
        return make_layout(*(list(x) if is_tuple(x.shape) else [x]), *[Layout(1, 0)] * (r - len(x)))

    try:
        lp = logical_product(pad(a), pad(b))
    except ValueError as err:
        assert "not admissible" in str(err)
        with pytest.raises(ValueError):
            blocked_product(a, b)
        return
    bp, rp = blocked_product(a, b), raked_product(a, b)
    for crd in cartesian(*(range(x * y) for x, y in zip(sa, sb))):
        ac = tuple(c % x for c, x in zip(crd, sa))
        bc = tuple(c // x for c, x in zip(crd, sa))
        assert bp(crd) == lp((ac, bc))
        bc = tuple(c % y for c, y in zip(crd, sb))
        ac = tuple(c // y for c, y in zip(crd, sb))
        assert rp(crd) == lp((ac, bc))


def test_blocked_and_raked_meaning_on_a_matrix():
    # a 2x2 column-major block over a 3x4 row-major arrangement of blocks: a 6x8 matrix
    block, tiles = Layout((2, 2), (1, 2)), Layout((3, 4), (4, 1))
    bp, rp = blocked_product(block, tiles), raked_product(block, tiles)
    for m in range(6):
        for n in range(8):
            assert bp((m, n)) == block((m % 2, n % 2)) + 4 * tiles((m // 2, n // 2))
            assert rp((m, n)) == block((m // 3, n // 4)) + 4 * tiles((m % 3, n % 4))


# -- local_tile / local_partition -------------------------------------------------
@st.composite
def tensor_and_tile(draw):
    """A rank-2 tensor layout whose modes are split admissibly by a shape tiler."""
    a = draw(layouts(max_depth=2, max_size=144).filter(lambda x: is_tuple(x.shape) and len(x) == 2))
    t = tuple(prefix_tile(draw, a[i]) for i in range(2))
    return a, t


@SOME
@given(tensor_and_tile(), st.data())
def test_local_tile_is_the_block_at_the_tile_coordinate(at, data):
    a, (t0, t1) = at
    n0, n1 = a[0].size() // t0, a[1].size() // t1
    seen = Counter()
    for c0 in range(n0):
        for c1 in range(n1):
            tile, off = local_tile(a, (t0, t1), (c0, c1))
            assert tile.size() == t0 * t1
            for i0 in range(t0):
                for i1 in range(t1):
                    assert tile((i0, i1)) + off == a((c0 * t0 + i0, c1 * t1 + i1))
            seen.update(off + v for v in values(tile))
    # the tiles cover the tensor: every element exactly as often as the tensor holds it
    assert seen == Counter(values(a))
    # a partial tile coordinate keeps the other rest modes
    tile, off = local_tile(a, (t0, t1), (0,))
    assert tile.size() == t0 * t1 * n1 and off == 0


@SOME
@given(layouts(max_size=96), layouts("injective", max_size=16))
def test_local_tile_with_a_layout_tiler_covers_the_tensor(a, tiler):
    try:
        z = zipped_divide(a, tiler)
    except ValueError:
        return
    assume(z.size() == a.size())
    seen = Counter()
    for c in range(z[1].size()):
        tile, off = local_tile(a, tiler, c)
        assert tile.size() == tiler.size()
        seen.update(off + v for v in values(tile))
    assert seen == Counter(values(a))


@st.composite
def tensor_and_threads(draw):
    """A tensor and a bijective, possibly hierarchical thread layout of shape ((f, t0/f), (g, t1/g))."""
    a, (t0, t1) = draw(tensor_and_tile())
    f = draw(st.sampled_from([d for d in range(1, t0 + 1) if t0 % d == 0]))
    g = draw(st.sampled_from([d for d in range(1, t1 + 1) if t1 % d == 0]))
    leaves = (f, t0 // f, g, t1 // g)
    order = draw(st.permutations(range(4)))
    strides, covered = [0] * 4, 1
    for i in order:
        strides[i], covered = covered, covered * leaves[i]
    if draw(st.booleans()):  # plain (t0, t1) column- or row-major
        return a, Layout((t0, t1), (1, t0) if strides[0] == 1 else (t1, 1))
    return a, Layout(((f, t0 // f), (g, t1 // g)), ((strides[0], strides[1]), (strides[2], strides[3])))


@SOME
@given(tensor_and_threads())
def test_local_partition_gives_every_element_to_exactly_one_thread(at):
    a, thr = at
    t0, t1 = thr[0].size(), thr[1].size()
    owned = Counter()
    for idx in range(thr.size()):
        part, off = local_partition(a, thr, idx)
        # the thread's coordinate in the thread tile
        (m, n) = next((m, n) for m in range(t0) for n in range(t1) if thr((m, n)) == idx)
        k0, k1 = a[0].size() // t0, a[1].size() // t1
        assert part.size() == k0 * k1
        for j0 in range(k0):
            for j1 in range(k1):
                assert part((j0, j1)) + off == a((m + t0 * j0, n + t1 * j1))
        owned.update(off + v for v in values(part))
    assert owned == Counter(values(a))


def test_local_partition_examples():
    # 4x8 tensor, 2x4 threads column-major: thread 5 is at (1, 2)
    a = Layout((4, 8), (1, 4))
    part, off = local_partition(a, Layout((2, 4), (1, 2)), 5)
    assert off == a((1, 2)) and part == Layout((2, 2), (2, 16))
    # row-major threads: thread 5 is at (1, 1)
    part, off = local_partition(a, Layout((2, 4), (4, 1)), 5)
    assert off == a((1, 1))
    with pytest.raises(ValueError, match=r"thread 8 .*\(2,4\):\(1,2\)"):
        local_partition(a, Layout((2, 4), (1, 2)), 8)
    # a 1-D thread layout and a layout tiler for local_tile
    part, off = local_partition(Layout(16, 2), Layout(4, 1), 3)
    assert off == 6 and values(part) == [0, 8, 16, 24]
    tile, off = local_tile(Layout((8, 8), (1, 8)), Layout(4, 1), 3)
    assert off == 12 and values(tile) == [0, 1, 2, 3]


# -- upcast / downcast -------------------------------------------------------------
def _leaf_factor(d: int, n: int) -> int:
    """How many old coordinates one new coordinate of a leaf with stride ``d`` covers."""
    return n // abs(d) if d != 0 and abs(d) < n else 1


@st.composite
def f16_offset_layouts(draw):
    """Offsets in f16 elements made of contiguous runs of 8k elements (whole 128-bit words).

    One leaf is the stride-1 run; every other stride is a multiple of 8.
    """
    shape = draw(shapes(max_size=32))
    flat = flatten(shape)
    k = draw(st.integers(0, len(flat) - 1))
    sizes = tuple(s * 8 if i == k else s for i, s in enumerate(flat))
    strides = tuple(1 if i == k else 8 * draw(st.integers(0, 6)) for i in range(len(flat)))
    return Layout(unflatten(sizes, shape), unflatten(strides, shape))


def _round_trips(layout: Layout, n: int) -> bool:
    """Where downcast(upcast(L, n), n) == L: no leaf is turned into a unit stride by upcast."""
    return all(
        d == 0 or (abs(d) == 1 and s % n == 0) or (d % n == 0 and abs(d) != n)
        for s, d in zip(flatten(layout.shape), flatten(layout.stride))
    )


@SOME
@given(f16_offset_layouts())
def test_upcast_to_128_bit_words_by_brute_force(layout):
    n = 8
    w = upcast(layout, n)
    assert congruent(w.shape, layout.shape)
    assert w.size() * n == layout.size()
    fd = flatten(layout.stride)
    for i in range(w.size()):
        crd = flatten(idx2crd(i, w.shape))
        # the run leaf's word coordinate c covers elements 8c .. 8c+7
        scaled = tuple(c * _leaf_factor(d, n) for c, d in zip(crd, fd))
        offset = layout(unflatten(scaled, layout.shape))
        assert offset % n == 0
        assert w(i) == offset // n
        for e in range(n):  # the whole word belongs to the layout, in order
            run = tuple(c + e if d == 1 else c for c, d in zip(scaled, fd))
            assert layout(unflatten(run, layout.shape)) == offset + e
    assert {v // n for v in values(layout)} == set(values(w))
    if _round_trips(layout, n):
        assert downcast(w, n) == layout


@SOME
@given(layouts(max_size=64), st.sampled_from((2, 4, 8)))
def test_downcast_then_upcast_is_the_identity(layout, n):
    d = downcast(layout, n)
    assert upcast(d, n) == layout
    # meaning: downcast(L)(c) == n * L(c') + (c % n along unit-stride leaves)
    fd = flatten(layout.stride)
    for i in range(d.size()):
        crd = flatten(idx2crd(i, d.shape))
        coarse = tuple(c // n if abs(s) == 1 else c for c, s in zip(crd, fd))
        fine = sum((c % n) * s for c, s in zip(crd, fd) if abs(s) == 1)
        assert d(i) == n * layout(unflatten(coarse, layout.shape)) + fine


def test_upcast_downcast_examples():
    P = Layout.parse
    assert upcast(P("(8,64):(64,1)"), 8) == P("(8,8):(8,1)")
    assert upcast(P("((8,2),(8,4)):((1,64),(8,128))"), 8) == P("((1,2),(8,4)):((1,8),(1,16))")
    assert downcast(P("(8,8):(8,1)"), 8) == P("(8,64):(64,1)")
    assert upcast(P("(4,8):(0,2)"), 2) == P("(4,8):(0,1)")
    assert downcast(P("(4,8):(0,1)"), 2) == P("(4,16):(0,1)")
    assert upcast(P("16:-1"), 4) == P("4:-1")
    with pytest.raises(ValueError, match=r"\(8,4\):\(1,12\)"):
        upcast(P("(8,4):(1,12)"), 8)  # 12 is not a multiple of 8
    with pytest.raises(ValueError, match=r"\(4,8\):\(1,4\)"):
        upcast(P("(4,8):(1,4)"), 8)  # a 4-element run does not fill a word
    with pytest.raises(ValueError, match="positive"):
        upcast(P("8:1"), 0)
    with pytest.raises(ValueError, match="positive"):
        downcast(P("8:1"), -2)
