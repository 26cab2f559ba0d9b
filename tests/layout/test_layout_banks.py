"""The bank-conflict model: hand-made address patterns, GEMM tiles before and after their swizzle."""

from __future__ import annotations

import pytest

from tilec.layout import ComposedLayout, Layout, Swizzle
from tilec.layout.banks import (
    ConflictReport,
    analyze,
    choose_swizzle,
    choose_swizzle_for,
    compact_layout,
    compact_order,
    conflicts,
    contiguous_axis,
    copy_stores,
    fragment_reads_32,
    lanes_per_phase,
    ldmatrix_reads,
    swizzle_candidates,
    triton_swizzle,
    warp_reads,
)

# -- the model on hand-made addresses -----------------------------------------------------


def test_phases_per_access_width():
    assert [lanes_per_phase(b) for b in (1, 2, 4, 8, 16)] == [32, 32, 32, 16, 8]
    with pytest.raises(ValueError, match="1, 2, 4, 8 or 16 bytes"):
        lanes_per_phase(12)


def test_consecutive_words_are_conflict_free():
    rep = conflicts([4 * lane for lane in range(32)], 4)
    assert (rep.phases, rep.wavefronts, rep.ideal, rep.ways, rep.conflicts) == (1, 1, 1, 1, 0)
    assert rep.conflict_free


def test_broadcast_is_free():
    assert conflicts([0] * 32, 4).ways == 1
    # lanes sharing words two by two (f16 neighbours) or reading one 16-byte vector
    assert conflicts([2 * lane for lane in range(32)], 2).ways == 1
    assert conflicts([64] * 8, 16).wavefronts == 1


def test_two_way():
    rep = conflicts([8 * lane for lane in range(32)], 4)  # stride 2 words: banks 0, 2, ..., 62 % 32
    assert (rep.ways, rep.wavefronts, rep.conflicts) == (2, 2, 1)


def test_eight_way_and_thirty_two_way():
    assert conflicts([128 * lane for lane in range(8)] + [0] * 24, 4).ways == 8
    rep = conflicts([128 * lane for lane in range(32)], 4)  # a column of a 32-float row-major tile
    assert (rep.ways, rep.wavefronts, rep.conflicts, rep.worst_bank) == (32, 32, 31, 0)


def test_sixteen_byte_accesses_split_into_phases_of_eight_lanes():
    contiguous = conflicts([16 * lane for lane in range(32)], 16)
    assert (contiguous.phases, contiguous.wavefronts, contiguous.ideal) == (4, 4, 4)
    # 8 lanes of each phase at a 128-byte stride: every lane's 4 words in banks 0..3
    strided = conflicts([128 * (lane % 8) + 16 * (lane // 8) for lane in range(32)], 16)
    assert (strided.phases, strided.ways, strided.wavefronts, strided.conflicts) == (4, 8, 32, 28)
    # the same 32 vectors taken by the lanes in another order: what matters is which
    # lanes share a phase (lanes 0..7 take vectors 0, 8, 16, 24, 1, 9, 17, 25: 4-way)
    shuffled = conflicts([16 * (8 * (lane % 4) + lane // 4) for lane in range(32)], 16)
    assert (shuffled.ways, shuffled.wavefronts) == (4, 16)


def test_eight_byte_accesses_take_sixteen_lanes_per_phase():
    rep = conflicts([8 * lane for lane in range(32)], 8)
    assert (rep.phases, rep.wavefronts) == (2, 2)
    assert conflicts([256 * lane for lane in range(16)], 8).ways == 16


def test_idle_lanes_alignment_and_sums():
    rep = conflicts([None] * 8 + [16 * lane for lane in range(8)] + [None] * 16, 16)
    assert rep.phases == 1 and rep.wavefronts == 1
    assert conflicts([None] * 32, 4) == ConflictReport()
    with pytest.raises(ValueError, match="not aligned"):
        conflicts([8], 16)
    with pytest.raises(ValueError, match="32 lanes"):
        conflicts([0] * 33, 4)
    a, b = conflicts([0, 128], 4), conflicts([0, 128, 256], 4)
    total = a + b
    assert (total.phases, total.wavefronts, total.ideal, total.ways, total.worst_phase) == (2, 5, 2, 3, 1)
    assert str(total) == "3-way (5 wavefronts, ideal 2)"


# -- pattern builders -------------------------------------------------------------------------------


def test_copy_stores_default_thread_order():
    layout = compact_layout(32, 64)  # f16: 8 vectors per row, 256 vectors, 8 warps
    accesses = copy_stores(layout, 2)
    assert len(accesses) == 8 and all(a.nbytes == 16 for a in accesses)
    assert accesses[0].addresses[:9] == tuple(16 * i for i in range(9))
    assert accesses[1].addresses[0] == 32 * 16  # warp 1 starts at vector 32 = row 4
    assert analyze(accesses).conflict_free


def test_copy_stores_with_explicit_thread_layouts_like_tile_copy():
    layout = compact_layout(64, 64)
    # row-major threads, 8 f16 each: the default order again
    row = copy_stores(layout, 2, thr=Layout((16, 8), (8, 1)), val=Layout((1, 8), (0, 1)))
    assert [a.addresses for a in row] == [a.addresses for a in copy_stores(layout, 2)]
    assert analyze(row).conflict_free
    # threads down the columns: the 8 lanes of a phase hit 8 rows of one 16-byte column
    col = analyze(copy_stores(layout, 2, thr=Layout((16, 8), (1, 16)), val=Layout((1, 8), (0, 1))))
    assert col.ways == 8
    sw = ComposedLayout(Swizzle(3, 3, 3), 0, layout)
    assert analyze(copy_stores(sw, 2, thr=Layout((16, 8), (1, 16)), val=Layout((1, 8), (0, 1)))).conflict_free
    # 4 f16 per thread: 8-byte stores, 16 lanes per phase
    narrow = copy_stores(layout, 2, thr=Layout((8, 16), (16, 1)), val=Layout((1, 4), (0, 1)))
    assert all(a.nbytes == 8 for a in narrow) and analyze(narrow).conflict_free
    with pytest.raises(ValueError, match="does not tile"):
        copy_stores(layout, 2, thr=Layout((16, 8), (8, 1)), val=Layout((1, 3), (0, 1)))


def test_vectors_must_be_contiguous():
    with pytest.raises(ValueError, match="not one aligned 16-byte vector"):
        copy_stores(ComposedLayout(Swizzle(3, 2, 3), 0, compact_layout(64, 64)), 2)


def test_ldmatrix_lanes_point_at_rows_of_16x16_subtiles():
    accesses = ldmatrix_reads(compact_layout(32, 32), 2)
    assert len(accesses) == 4  # 2 x 2 sub-tiles of 16 x 16
    first = accesses[0].addresses
    assert [first[lane] for lane in (0, 1, 15, 16, 31)] == [0, 64, 15 * 64, 16, 15 * 64 + 16]
    assert accesses[1].addresses[0] == 32  # next sub-tile along the row: column 16
    x1 = ldmatrix_reads(compact_layout(8, 8), 2)
    assert len(x1) == 1 and x1[0].addresses[8:] == (None,) * 24
    with pytest.raises(ValueError, match="multiple of 8 lines"):
        ldmatrix_reads(compact_layout(4, 64), 2)


def test_fragment_reads_32_and_warp_reads():
    f32 = compact_layout(16, 32)
    frag = fragment_reads_32(f32, 4)
    assert len(frag) == 2 * 8 and frag[0].addresses[:5] == (0, 4, 8, 12, 128)
    assert analyze(frag).ways == 8  # 8 rows of 128 bytes: words q of every row in banks 0..3
    assert analyze(warp_reads(f32, 4, direction="row")).conflict_free
    cols = analyze(warp_reads(compact_layout(32, 32), 4, direction="col"))
    assert cols.ways == 32 and cols.wavefronts == 32 * 32
    # with 16-byte vectors kept whole a swizzle can spread a column over 8 bank quads only
    sw = ComposedLayout(Swizzle(3, 2, 3), 0, compact_layout(32, 32))
    assert analyze(warp_reads(sw, 4, direction="col")).ways == 4


def test_axes_and_compact_orders():
    assert contiguous_axis(compact_layout(16, 64)) == 1
    assert contiguous_axis(compact_layout(16, 64, "col")) == 0
    assert compact_order(Layout((16, 64), (64, 1))) == "row"
    assert compact_order(Layout((16, 64), (1, 16))) == "col"
    assert compact_order(Layout((16, 64), (128, 1))) is None
    with pytest.raises(ValueError, match="no contiguous axis"):
        contiguous_axis(Layout((4, 4), (8, 2)))


# -- GEMM tiles: the unswizzled layout conflicts, the chosen swizzle does not -------------------

# (rows, cols, element bytes) -> (chosen swizzle, ldmatrix ways before)
F16_CASES = {
    (64, 32, 2): (Swizzle(2, 3, 3), 4),
    (64, 64, 2): (Swizzle(3, 3, 3), 8),
    (32, 128, 2): (Swizzle(3, 3, 4), 8),
    (16, 16, 2): (Swizzle(1, 3, 3), 2),
}
F32_CASES = {
    (32, 16, 4): (Swizzle(2, 2, 3), 4),
    (32, 32, 4): (Swizzle(3, 2, 3), 8),
    (16, 64, 4): (Swizzle(3, 2, 4), 8),
}


@pytest.mark.parametrize("order", ["row", "col"])
@pytest.mark.parametrize("shape, expected", list(F16_CASES.items()), ids=lambda x: str(x))
def test_f16_bf16_tiles(shape, expected, order):
    rows, cols, e = shape
    if order == "col":
        rows, cols = cols, rows  # the same lines, down the columns
    swizzle, ways_before = expected
    choice = choose_swizzle(rows, cols, e, order)
    before, after = dict(choice.before), dict(choice.after)
    assert before["ldmatrix"].ways == ways_before
    assert before["stores"].conflict_free  # CuTe's row-by-row copy order is always conflict-free
    assert choice.swizzle == swizzle and choice.conflict_free
    assert choice.layout == ComposedLayout(swizzle, 0, compact_layout(rows, cols, order))
    assert all(rep.conflict_free for rep in after.values())
    assert after["ldmatrix"].wavefronts == before["ldmatrix"].ideal
    assert choice.swizzle == triton_swizzle(rows, cols, e, order)
    assert choice.summary() == f"stores 1-way -> 1-way, ldmatrix {ways_before}-way -> 1-way"


@pytest.mark.parametrize("shape, expected", list(F32_CASES.items()), ids=lambda x: str(x))
def test_f32_tiles(shape, expected):
    swizzle, ways_before = expected
    choice = choose_swizzle(*shape)
    before, after = dict(choice.before), dict(choice.after)
    assert set(before) == {"stores", "ldmatrix", "lds32"}
    assert before["ldmatrix"].ways == before["lds32"].ways == ways_before
    assert before["stores"].conflict_free
    assert choice.swizzle == swizzle == triton_swizzle(*shape)
    assert all(rep.conflict_free for rep in after.values())


def test_triton_reference_point_swizzle_333_for_64_wide_f16():
    choice = choose_swizzle(128, 64, 2)
    assert choice.swizzle == Swizzle(3, 3, 3)
    assert str(choice.layout) == "Sw<3,3,3> o 0 o (128,64):(64,1)"


def test_128_wide_f16_needs_shift_4_on_a_flat_layout():
    """CuTe's Sw<3,3,3> belongs to 64-wide atoms; on a flat 128-wide row it leaves 2-way conflicts."""
    base = compact_layout(16, 128)
    flat_333 = analyze(ldmatrix_reads(ComposedLayout(Swizzle(3, 3, 3), 0, base), 2))
    assert flat_333.ways == 2
    assert choose_swizzle(16, 128, 2).swizzle == Swizzle(3, 3, 4)
    # CuTe's way: Sw<3,3,3> on 64-wide atoms tiled along the row (a hierarchical layout)
    atoms = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((16, (64, 2)), (64, (1, 1024))))
    assert analyze(ldmatrix_reads(atoms, 2)).conflict_free
    assert analyze(copy_stores(atoms, 2)).conflict_free


def test_narrow_tiles_need_no_swizzle():
    choice = choose_swizzle(16, 8, 2)  # 16-byte rows: 8 rows fill the 32 banks
    assert choice.swizzle is None and choice.layout == compact_layout(16, 8) and choice.conflict_free


def test_candidates_keep_vectors_and_storage():
    cands = swizzle_candidates(64, 64, 2)
    assert cands[0].bits == 0 and all(s.base == 3 for s in cands)
    assert Swizzle(3, 3, 3) in cands and max(s.bits for s in cands) == 3
    # a period past the tile would grow its storage: 8 rows of 128 f16 cannot take Sw<3,3,4>
    assert Swizzle(3, 3, 4) not in swizzle_candidates(4, 128, 2)
    for s in cands:
        sw = ComposedLayout(s, 0, compact_layout(64, 64)) if s.bits else compact_layout(64, 64)
        assert sorted(sw((i, j)) for i in range(64) for j in range(64)) == list(range(64 * 64))


def test_no_conflict_free_candidate_gives_fewest_wavefronts():
    base = compact_layout(32, 32)
    patterns = {"col": lambda L: warp_reads(L, 4, direction="col")}
    choice = choose_swizzle_for(base, 4, patterns)
    assert not choice.conflict_free
    assert dict(choice.before)["col"].ways == 32 and dict(choice.after)["col"].ways == 4
    assert choice.summary().endswith("no conflict-free swizzle, fewest wavefronts")
    with pytest.raises(ValueError, match="not a compact"):
        choose_swizzle_for(Layout((8, 8), (16, 1)), 2)
