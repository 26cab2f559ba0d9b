"""Swizzle and ComposedLayout: the formula, bijectivity, composition, known values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from layout_strategies import SOME, layouts

from tilec.layout import (
    ComposedLayout,
    Layout,
    Swizzle,
    composition,
    logical_divide,
    parse,
    tiled_divide,
    zipped_divide,
)


@st.composite
def swizzles(draw, max_bits: int = 3, max_base: int = 3):
    bits = draw(st.integers(0, max_bits))
    base = draw(st.integers(0, max_base))
    shift = draw(st.integers(bits, bits + 3)) * draw(st.sampled_from((1, -1)))
    return Swizzle(bits, base, shift)


def reference_swizzle(bits: int, base: int, shift: int, o: int) -> int:
    """CuTe's definition, spelled out bit by bit."""
    out = o
    for k in range(bits):
        if shift >= 0:
            src, dst = base + shift + k, base + k
        else:
            src, dst = base + k, base - shift + k
        out ^= ((o >> src) & 1) << dst
    return out


@SOME
@given(swizzles())
def test_swizzle_is_an_involution_and_a_bijection_on_its_period(sw):
    n = sw.size()
    assert n == 1 << (sw.bits + sw.base + abs(sw.shift)) == sw.cosize()
    image = [sw(o) for o in range(n)]
    assert sorted(image) == list(range(n))
    # period: bits above the masks pass through, so every block of n maps onto itself
    assert sorted(sw(o) for o in range(3 * n, 4 * n)) == list(range(3 * n, 4 * n))
    for o in range(4 * n):
        assert sw(sw(o)) == o
        assert sw(o) == reference_swizzle(sw.bits, sw.base, sw.shift, o)


@SOME
@given(swizzles(), st.integers(0, 1 << 14))
def test_swizzle_matches_the_mask_formula(sw, o):
    yyy = ((1 << sw.bits) - 1) << (sw.base + max(0, sw.shift))
    zzz = ((1 << sw.bits) - 1) << (sw.base - min(0, sw.shift))
    assert sw.yyy_mask == yyy and sw.zzz_mask == zzz
    assert yyy & zzz == 0  # |shift| >= bits keeps the source and target bits apart
    moved = (o & yyy) >> sw.shift if sw.shift >= 0 else (o & yyy) << -sw.shift
    assert sw(o) == o ^ moved
    if sw.shift >= 0:
        assert sw(o) == o ^ ((o & yyy) >> sw.shift)
    # only the zzz bits ever change
    assert (sw(o) ^ o) & ~zzz == 0


def test_swizzle_333_values():
    sw = Swizzle(3, 3, 3)
    assert sw.yyy_mask == 0b111_000_000 and sw.zzz_mask == 0b000_111_000
    assert [sw(o) for o in (0, 7, 8, 64, 72, 127, 455, 511, 512)] == [0, 7, 8, 72, 64, 119, 511, 455, 512]
    assert str(sw) == "Sw<3,3,3>" and repr(sw) == "Swizzle(3, 3, 3)"
    assert Swizzle(3, 3, 3) == sw and hash(Swizzle(3, 3, 3)) == hash(sw) and Swizzle(2, 3, 3) != sw
    with pytest.raises(AttributeError):
        sw.bits = 2


def test_composed_layout_sw333_over_8x64_row_major_f16():
    c = parse("Sw<3,3,3> o 0 o (8,64):(64,1)")
    assert isinstance(c, ComposedLayout) and c.swizzle == Swizzle(3, 3, 3)
    assert c == ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    assert str(c) == "Sw<3,3,3> o 0 o (8,64):(64,1)"
    # row r, column c: the 16-byte chunk c//8 is XORed with the row
    for r in range(8):
        for col in range(64):
            assert c((r, col)) == 64 * r + 8 * ((col // 8) ^ r) + col % 8
    assert [c((0, 0)), c((1, 0)), c((1, 8)), c((3, 17)), c((7, 63))] == [0, 72, 64, 201, 455]
    assert c.size() == 512 and c.cosize() == 512 and c.rank() == 2 and c.depth() == 1 and len(c) == 2
    assert c.shape == (8, 64)


def triton_swizzled_column(row: int, col: int, vec: int, per_phase: int, max_phase: int) -> int:
    """Triton's shared-memory swizzle (SharedEncoding vec/perPhase/maxPhase), on element columns."""
    phase = (row // per_phase) % max_phase
    return ((col // vec) ^ phase) * vec + col % vec


def test_triton_choice_for_f16_64_wide_rows_is_sw333():
    # Triton picks vec=8, perPhase=1, maxPhase=8 for f16 rows of 64 elements (128 bytes)
    c = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((64, 64), (64, 1)))
    for row in range(64):
        for col in range(64):
            assert c((row, col)) == 64 * row + triton_swizzled_column(row, col, 8, 1, 8)


def test_sw333_makes_global_stores_and_ldmatrix_phases_conflict_free():
    c = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((64, 64), (64, 1)))
    plain = Layout((64, 64), (64, 1))

    def bank_group(offset: int) -> int:  # 8 groups of 16 bytes (4 banks each) for 2-byte elements
        return (offset * 2 // 16) % 8

    for col in range(0, 64, 8):
        # 16-byte vectors stay contiguous and aligned
        for row in range(64):
            first = c((row, col))
            assert first % 8 == 0 and [c((row, col + e)) for e in range(8)] == list(range(first, first + 8))
        # an ldmatrix phase reads 8 consecutive rows of one 16-byte column chunk
        for r0 in range(0, 64, 8):
            assert len({bank_group(c((r0 + r, col))) for r in range(8)}) == 8
            assert len({bank_group(plain((r0 + r, col))) for r in range(8)}) == 1


@SOME
@given(swizzles(), st.integers(0, 64), layouts(max_size=64))
def test_composed_layout_is_swizzle_of_offset_plus_layout(sw, offset, layout):
    c = ComposedLayout(sw, offset, layout)
    assert c.size() == layout.size() and c.shape == layout.shape
    for i in range(layout.size()):
        assert c(i) == sw(offset + layout(i))
    assert c.cosize() == max(c(i) for i in range(c.size())) + 1
    assert composition(sw, layout) == ComposedLayout(sw, 0, layout)
    # a layout as the inner function
    inner = Layout(4096, 3)
    d = ComposedLayout(inner, offset, layout)
    assert [d(i) for i in range(layout.size())] == [3 * (offset + layout(i)) for i in range(layout.size())]


@SOME
@given(swizzles(), st.integers(0, 16), layouts(max_size=64), st.data())
def test_composed_layout_slicing_and_modes_keep_the_swizzle(sw, offset, layout, data):
    c = ComposedLayout(sw, offset, layout)
    if len(layout) >= 2:
        j = data.draw(st.integers(0, layout[1].size() - 1))
        crd = (None, j) + (0,) * (len(layout) - 2)
        sub = c(crd)
        assert isinstance(sub, ComposedLayout) and sub.inner == sw
        assert c.slice_and_offset(crd) == (sub, 0)
        for i in range(layout[0].size()):
            assert sub((i,)) == c((i, j) + (0,) * (len(layout) - 2))
        assert c[1].layout == layout[1] and c[1].inner == sw
    # composing on the right acts on the outer layout
    rest = composition(c, layout.size())
    assert [rest(i) for i in range(layout.size())] == [c(i) for i in range(layout.size())]


def test_divides_of_a_composed_layout_act_on_its_outer_layout():
    c = parse("Sw<3,3,3> o 0 o (64,64):(64,1)")
    for fn in (logical_divide, zipped_divide, tiled_divide):
        d = fn(c, (8, 16))
        assert isinstance(d, ComposedLayout) and d.inner == c.inner
        assert d.layout == fn(c.layout, (8, 16))
    tile = zipped_divide(c, (8, 16))
    for t in range(128):
        for rest in range(32):
            assert tile((t, rest)) == c.inner(tile.layout((t, rest)))
    assert composition(c, (8, 16)).layout == composition(c.layout, (8, 16))


def test_swizzle_construction_errors_name_the_swizzle():
    with pytest.raises(ValueError, match=r"Sw<3,3,2>.*shift"):
        Swizzle(3, 3, 2)
    with pytest.raises(ValueError, match=r"Sw<2,0,-1>"):
        Swizzle(2, 0, -1)
    with pytest.raises(ValueError, match=r"Sw<-1,3,3>"):
        Swizzle(-1, 3, 3)
    with pytest.raises(ValueError, match=r"Sw<1,-2,3>"):
        Swizzle(1, -2, 3)
    with pytest.raises(ValueError, match=r"Sw<3,3,3>.*'8:1'"):
        Swizzle(3, 3, 3).compose("8:1")
    with pytest.raises(ValueError, match="swizzle or a layout"):
        ComposedLayout(3, 0, Layout(8, 1))
    with pytest.raises(ValueError, match="outer part"):
        ComposedLayout(Swizzle(1, 1, 1), 0, (8, 1))
    assert Swizzle(0, 0, 0)(12345) == 12345
