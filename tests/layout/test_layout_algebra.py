"""coalesce, filter, composition, complement and the inverses, against brute force."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from layout_strategies import (
    FEW,
    MANY,
    SOME,
    compatible,
    image,
    is_injective,
    layouts,
    pow2_injective,
    prefix_tile,
    values,
)

from tilec.layout import (
    Layout,
    coalesce,
    complement,
    composition,
    filter,
    filter_zeros,
    idx2crd,
    left_inverse,
    make_layout,
    right_inverse,
)
from tilec.layout.int_tuple import depth, flatten, product


def flat_rank(layout: Layout) -> int:
    return len(flatten(layout.shape))


# -- coalesce -------------------------------------------------------------------
@MANY
@given(layouts())
def test_coalesce_preserves_the_function_and_never_grows(layout):
    c = coalesce(layout)
    assert c.size() == layout.size()
    assert values(c) == values(layout)
    assert depth(c.shape) <= 1
    assert flat_rank(c) <= flat_rank(layout)
    # fully coalesced: no extent-1 modes (unless the whole thing is 1:0) and no mergeable neighbours
    s, d = flatten(c.shape), flatten(c.stride)
    assert all(x != 1 for x in s) or c == Layout(1, 0)
    assert all(s[i] * d[i] != d[i + 1] for i in range(len(s) - 1))
    assert coalesce(c) == c


@SOME
@given(layouts(), st.data())
def test_coalesce_with_a_profile_keeps_its_rank(layout, data):
    n = len(layout)
    k = data.draw(st.integers(1, n))
    profile = tuple(data.draw(st.sampled_from((1, 7))) for _ in range(k))
    c = coalesce(layout, profile)
    assert len(c) == n
    for i in range(n):
        assert c[i] == (coalesce(layout[i]) if i < k else layout[i])
        assert values(c[i]) == values(layout[i])
    assert values(c) == values(layout)


def test_coalesce_examples():
    a = Layout((2, (1, 6)), (1, (6, 2)))
    assert coalesce(a) == Layout(12, 1)
    assert coalesce(a, (1, 1)) == Layout((2, 6), (1, 2))
    assert coalesce(Layout((2, 4), (1, 2))) == Layout(8, 1)
    assert coalesce(Layout((1, 1), (3, 5))) == Layout(1, 0)
    assert coalesce(Layout((4, 1, 3), (1, 9, 4))) == Layout(12, 1)
    assert coalesce(Layout((2, 2), (0, 0))) == Layout(4, 0)
    assert coalesce(Layout((4, 3), (3, 1))) == Layout((4, 3), (3, 1))
    # a nested profile coalesces inside the nesting
    b = Layout(((2, 2), (3, 1)), ((1, 2), (4, 12)))
    assert coalesce(b, ((1, 1), 1)) == Layout(((2, 2), 3), ((1, 2), 4))
    assert coalesce(b, (1,)) == Layout((4, (3, 1)), (1, (4, 12)))


# -- filter ---------------------------------------------------------------------
@MANY
@given(layouts())
def test_filter_drops_stride_zero_and_extent_one_modes(layout):
    f = filter(layout)
    kept = [(s, d) for s, d in zip(flatten(layout.shape), flatten(layout.stride)) if s != 1 and d != 0]
    if not kept:
        assert f == Layout(1, 0)
        return
    assert 0 not in flatten(f.stride)
    assert f.size() == product(tuple(s for s, _ in kept))
    assert image(f) == image(layout)
    assert f == coalesce(Layout(tuple(s for s, _ in kept), tuple(d for _, d in kept)))
    # filter_zeros keeps the profile and the image, sets broadcast extents to 1
    z = filter_zeros(layout)
    assert z.stride == layout.stride and image(z) == image(layout)
    assert all(s == 1 for s, d in zip(flatten(z.shape), flatten(z.stride)) if d == 0)
    assert filter(z) == f


def test_filter_examples():
    assert filter(Layout((4, 2, 3), (0, 1, 2))) == Layout(6, 1)
    assert filter(Layout((4, (2, 3)), (0, (0, 0)))) == Layout(1, 0)
    assert filter(Layout((4, (2, 3)), (1, (0, 8))), (1, 1)) == Layout((4, 3), (1, 8))
    assert filter_zeros(Layout((4, (2, 3)), (1, (0, 8)))) == Layout((4, (1, 3)), (1, (0, 8)))


# -- composition ----------------------------------------------------------------
def _check_composition(a: Layout, b: Layout, r: Layout) -> None:
    """R(i) == A(B(i)) for every i in B's domain, R compatible with B.

    Beyond A's domain A is extended along its last (coalesced) mode, as CuTe does.
    """
    assert compatible(b.shape, r.shape), f"{r} is not compatible with {b}"
    flat_a = coalesce(a)
    for i in range(b.size()):
        j = b(i)
        expected = a(j) if 0 <= j < a.size() else flat_a(j)
        assert r(i) == expected, f"({a} o {b})({i}) = {r(i)}, expected {expected}"
        # B's natural coordinates are coordinates of R too
        assert r(idx2crd(i, b.shape)) == expected


@MANY
@given(layouts("pow2", max_size=64), pow2_injective())
def test_admissible_composition_is_the_composed_function(a, b):
    """Power-of-two extents everywhere and an injective B: never rejected, always right."""
    r = composition(a, b)
    _check_composition(a, b, r)


@MANY
@given(layouts(max_size=96), st.data())
def test_composition_with_a_split_at_a_prefix_of_the_shape_is_admissible(a, data):
    """B = (t, n/t):(1, t) with t a prefix product of A's (coalesced) shape times a divisor."""
    t = prefix_tile(data.draw, a)
    n = a.size()
    b = Layout((t, n // t), (1, t))
    _check_composition(a, b, composition(a, b))


@MANY
@given(layouts(max_size=64), layouts(max_size=32))
def test_composition_either_raises_or_is_right(a, b):
    """Any pair: a ValueError naming both layouts, or the composed function."""
    try:
        r = composition(a, b)
    except ValueError as err:
        assert str(a) in str(err)
        return
    _check_composition(a, b, r)


@FEW
@given(layouts(max_size=48), st.data())
def test_by_mode_composition_with_a_tiler(a, data):
    k = data.draw(st.integers(1, len(a)))
    tiler = tuple(data.draw(st.one_of(st.none(), st.just(prefix_tile(data.draw, a[i])))) for i in range(k))
    r = composition(a, tiler)
    assert len(r) == len(a)
    for i in range(len(a)):
        t = tiler[i] if i < k else None
        assert r[i] == (a[i] if t is None else composition(a[i], Layout(t)))


def test_composition_examples_from_the_cute_docs():
    P = Layout.parse
    assert composition(P("(6,2):(8,2)"), P("(4,3):(3,1)")) == P("((2,2),3):((24,2),8)")
    assert composition(P("20:2"), P("(5,4):(4,1)")) == P("(5,4):(8,2)")
    assert composition(P("20:2"), P("(4,5):(1,4)")) == P("(4,5):(2,8)")
    assert composition(P("(10,2):(16,4)"), P("(5,4):(1,5)")) == P("(5,(2,2)):(16,(80,4))")
    a = P("(12,(4,8)):(59,(13,1))")
    assert composition(a, (P("3:4"), P("8:2"))) == P("(3,(2,4)):(236,(26,1))")
    assert composition(a, (3, 8)) == P("(3,(4,2)):(59,(13,1))")
    # (3,6,2,8):(w,x,y,z) o 16:9 = (1,2,2,4):(3w,3x,y,z), coalesced
    assert composition(P("(3,6,2,8):(1000,100,10,1)"), P("16:9")) == P("(2,2,4):(300,10,1)")
    assert composition(P("8:2"), 4) == P("4:2")
    assert composition(P("8:2"), None) == P("8:2")
    assert composition(P("(4,8):(1,4)"), P("5:0")) == P("5:0")


def test_inadmissible_composition_raises():
    P = Layout.parse
    with pytest.raises(ValueError, match=r"\(4,6\):\(1,5\)"):
        composition(P("(4,6):(1,5)"), P("6:1"))  # 6 elements span two modes unevenly
    with pytest.raises(ValueError, match=r"\(4,6\):\(1,5\).*3:3"):
        composition(P("(4,6):(1,5)"), P("3:3"))  # stride 3 does not divide extent 4
    with pytest.raises(ValueError, match="negative"):
        composition(P("8:1"), P("4:-1"))
    with pytest.raises(ValueError, match="8:1"):
        composition(P("8:1"), "4")


# -- complement -----------------------------------------------------------------
def _check_complement(layout: Layout, m: int, c: Layout) -> None:
    s, d = flatten(c.shape), flatten(c.stride)
    # ordered: positive, strictly increasing strides (or the trivial 1:0)
    assert c == Layout(1, 0) or (all(x > 0 for x in d) and all(d[i] < d[i + 1] for i in range(len(d) - 1)))
    # disjoint images apart from offset 0
    assert image(c) & image(layout) == {0}
    # (L, complement) is a bijection onto [0, N) with N >= M (broadcast modes dropped)
    joined = make_layout(filter(layout), c)
    n = joined.size()
    assert n >= m
    assert sorted(values(joined)) == list(range(n))
    assert joined.cosize() == n
    # strictly increasing values along the complement
    v = values(c)
    assert all(v[i] < v[i + 1] for i in range(len(v) - 1))


@SOME
@given(layouts("injective", max_size=64), st.integers(1, 300))
def test_complement_of_an_injective_layout(layout, m):
    _check_complement(layout, m, complement(layout, m))


@SOME
@given(layouts(max_size=64), st.integers(1, 200))
def test_complement_either_raises_or_is_right(layout, m):
    try:
        c = complement(layout, m)
    except ValueError as err:
        assert str(layout) in str(err)
        # only layouts that have no complement are rejected
        f = filter(layout)
        assert not is_injective(f) or _interleaves(f)
        return
    assert is_injective(filter(layout))
    _check_complement(layout, m, c)


def _interleaves(layout: Layout) -> bool:
    """Injective but no complement: a stride that is not a multiple of the span below it."""
    covered = 1
    for d, s in sorted(zip(flatten(layout.stride), flatten(layout.shape))):
        if s == 1:
            continue
        if d < covered or d % covered:
            return True
        covered = s * d
    return False


def test_complement_examples_from_the_cute_docs():
    P = Layout.parse
    assert complement(P("4:1"), 24) == P("6:4")
    assert complement(P("6:4"), 24) == P("4:1")
    assert complement(P("(4,6):(1,4)"), 24) == P("1:0")
    assert complement(P("4:2"), 24) == P("(2,3):(1,8)")
    assert complement(P("(2,4):(1,6)"), 24) == P("3:2")
    assert complement(P("(2,2):(1,6)"), 24) == P("(3,2):(2,12)")
    assert complement(P("4:2")) == P("2:1")
    assert complement(P("1:0"), 5) == P("5:1")
    assert complement(4, 8) == P("2:4")
    assert complement(P("(4,6):(1,4)"), (4, 12)) == P("2:24")


def test_complement_of_a_non_injective_layout_raises():
    with pytest.raises(ValueError, match=r"\(2,2\):\(1,1\).*not injective"):
        complement(Layout((2, 2), (1, 1)), 8)
    with pytest.raises(ValueError, match=r"\(2,2\):\(3,7\)"):
        complement(Layout((2, 2), (3, 7)), 32)  # injective, but 7 is not a multiple of 6
    with pytest.raises(ValueError, match=r"4:-1"):
        complement(Layout(4, -1), 8)


# -- inverses -------------------------------------------------------------------
@MANY
@given(layouts(max_size=128))
def test_right_inverse(layout):
    r = right_inverse(layout)
    for i in range(r.size()):
        assert layout(r(i)) == i
    # largest such prefix built from the layout's own modes: every i < size(R) is reached
    assert set(range(r.size())) <= image(layout)


@MANY
@given(layouts("bijective", max_size=128))
def test_right_and_left_inverse_of_a_bijection_are_its_inverse(layout):
    r = right_inverse(layout)
    l_ = left_inverse(layout)
    assert r.size() == layout.size()
    for i in range(layout.size()):
        assert layout(r(i)) == i
        assert r(layout(i)) == i
        assert l_(layout(i)) == i
    assert values(coalesce(r)) == values(coalesce(l_))


@MANY
@given(layouts("injective", max_size=128))
def test_left_inverse_of_an_injective_layout(layout):
    inv = left_inverse(layout)
    for i in range(layout.size()):
        assert inv(layout(i)) == i


@SOME
@given(layouts(max_size=64))
def test_left_inverse_either_raises_or_is_right(layout):
    try:
        inv = left_inverse(layout)
    except ValueError as err:
        assert str(layout) in str(err)
        assert not is_injective(filter(layout)) or _interleaves(filter(layout))
        return
    if is_injective(layout):
        for i in range(layout.size()):
            assert inv(layout(i)) == i


def test_inverse_examples():
    P = Layout.parse
    assert right_inverse(P("(4,8):(8,1)")) == P("(8,4):(4,1)")
    assert left_inverse(P("(4,8):(8,1)")) == P("(8,4):(4,1)")
    assert right_inverse(P("(2,2):(1,3)")) == P("2:1")
    assert left_inverse(P("4:2")) == P("(2,4):(4,1)")
    assert right_inverse(P("4:2")) == P("1:0")
    assert right_inverse(8) == P("8:1")
    # broadcast modes are skipped (CuTe's right_inverse), not a dead end
    assert right_inverse(P("(2,4):(0,1)")) == P("4:2")
    assert right_inverse(P("((8,1,4),8):((1,64,0),8)")) == P("(8,8):(1,32)")
    # the mma.sync A fragment is a bijection: its inverse maps tile offsets to (thread, value)
    a = P("((4,8),(2,2,2)):((32,1),(16,8,128))")
    inv = right_inverse(a)
    assert inv.size() == 256 and all(a(inv(i)) == i for i in range(256))
