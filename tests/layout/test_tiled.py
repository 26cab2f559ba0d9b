"""Tiled copies and tiled MMAs (``tilec.layout.tiled``): the examples of seed 004 (MoYe.jl's
"Tiled Matmul" page), CuTe's sm80 MMA partitions, and properties checked by enumeration:
a tiled copy moves every element of a tile exactly once, a tiled MMA's partitions cover A, B
and C, and partitions of an identity tensor agree with the TV layouts.

MoYe numbers threads from 1; here (as in CuTe) they start at 0, so MoYe's ``thr_idx = 2`` is
thread 1.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from layout_strategies import FEW

from tilec.layout import (
    FMA_F32,
    MMA_M16N8K8_TF32,
    MMA_M16N8K16_F16,
    Layout,
    composition,
    ldmatrix,
    logical_divide,
)
from tilec.layout.int_tuple import product
from tilec.layout.tensor import Tensor, copy, local_tile, make_fragment_like, make_identity_tensor, make_tensor
from tilec.layout.tiled import (
    TiledCopy,
    copy_atom_universal,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_tv,
    make_tiled_mma,
    render_tiled,
)

# -- seed 004: six threads copy a 4x9 array ------------------------------------------------------------

SEED_004_THREADS = """\
1 1 1 2 2 2 3 3 3
1 1 1 2 2 2 3 3 3
4 4 4 5 5 5 6 6 6
4 4 4 5 5 5 6 6 6"""
"""Seed 004's table: the (1-based) thread that copies each element of the 4x9 tile."""

THR_4x9 = Layout((2, 3), (3, 1))
VAL_4x9 = Layout((2, 3), (1, 2))


@pytest.fixture
def copy_4x9() -> TiledCopy:
    return make_tiled_copy(copy_atom_universal(64), THR_4x9, VAL_4x9)  # CopyAtom{UniversalCopy{Float64}, Float64}


def _owner_table(tv) -> str:
    rows, cols = tv.tile
    return "\n".join(" ".join(str(tv.owner((i, j))[0] + 1) for j in range(cols)) for i in range(rows))


def _src_dst_4x9():
    """MoYe's ``src = MoYeArray(collect(1:36) .* 0.1, (4,9))`` (column-major) and a zero ``dst``."""
    src = make_tensor([round(0.1 * (i + 1), 1) for i in range(36)], (4, 9))
    dst = make_tensor([0.0] * 36, (4, 9))
    return src, dst


def _rows(t: Tensor) -> list[list]:
    return [[t[i, j] for j in range(t.shape[1])] for i in range(t.shape[0])]


def test_seed_004_thread_table(copy_4x9):
    assert copy_4x9.tiler == (4, 9) and copy_4x9.num_threads == 6 and copy_4x9.num_values == 6
    assert _owner_table(copy_4x9.dst) == SEED_004_THREADS
    assert _owner_table(copy_4x9.src) == SEED_004_THREADS  # a plain copy reads what it writes
    assert copy_4x9.dst.covers_once() and copy_4x9.src.covers_once()


def test_seed_004_thread_2_copies_its_block(copy_4x9):
    src, dst = _src_dst_4x9()
    thr_copy = copy_4x9.get_slice(1)  # MoYe's thr_idx = 2
    dst_t = thr_copy.partition_D(dst)
    src_t = thr_copy.partition_S(src)
    # (CPY, CPY_M, CPY_K): one value per instruction, six instructions, the whole 4x9 is one tile
    assert str(dst_t.layout) == "((1,(2,3)),1,1):((0,(1,4)),0,0)" and dst_t.offset == 12
    assert src_t.layout == dst_t.layout and src_t.offset == 12
    copy(src_t, dst_t)
    assert _rows(dst) == [
        [0.0, 0.0, 0.0, 1.3, 1.7, 2.1, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.4, 1.8, 2.2, 0.0, 0.0, 0.0],
        [0.0] * 9,
        [0.0] * 9,
    ]


def test_seed_004_thread_3_copies_through_registers(copy_4x9):
    src, dst = _src_dst_4x9()
    for thread in (1, 2):  # MoYe's thr_idx = 2 directly, then thr_idx = 3 through a register fragment
        thr_copy = copy_4x9.get_slice(thread)
        dst_t = thr_copy.partition_D(dst)
        src_t = thr_copy.partition_S(src)
        if thread == 1:
            copy(src_t, dst_t)
            continue
        dst_r = make_fragment_like(dst_t)
        assert dst_r.shape == dst_t.shape and dst_r.engine == [0] * 6
        copy(src_t, dst_r)
        copy(dst_r, dst_t)
    assert _rows(dst)[:2] == [
        [0.0, 0.0, 0.0, 1.3, 1.7, 2.1, 2.5, 2.9, 3.3],
        [0.0, 0.0, 0.0, 1.4, 1.8, 2.2, 2.6, 3.0, 3.4],
    ]
    assert _rows(dst)[2:] == [[0.0] * 9] * 2


def test_seed_004_vectorised_copy_moves_two_values_per_instruction():
    """``UniversalCopy{UInt128}`` on Float64: CPY becomes 2 (and val_layout must hold whole pairs)."""
    vec = make_tiled_copy(copy_atom_universal(128, 64), THR_4x9, VAL_4x9)
    dst_t = vec.get_slice(1).partition_D(make_tensor(None, (4, 9)))
    assert str(dst_t.layout) == "((2,3),1,1):((1,4),0,0)" and dst_t.offset == 12
    with pytest.raises(ValueError, match="not a whole number of .* 4 per instruction"):
        make_tiled_copy(copy_atom_universal(256, 64), THR_4x9, VAL_4x9)


def _first_instruction(tiled: TiledCopy, thread: int, tensor: Tensor) -> list[int]:
    """The offsets thread ``thread`` reads with its first instruction (an index tensor's elements)."""
    part = tiled.get_slice(thread).partition_S(tensor)
    return [part[v, 0, 0] for v in range(tiled.atom_values)]


@pytest.mark.parametrize(
    ("copy_bits", "val", "thread_0", "thread_1"),
    [
        (64, (4, 1), [0, 1], [4, 5]),  # not coalesced: thread 1 starts 4 elements on (seed: [1],[2] then [5],[6])
        (64, (2, 1), [0, 1], [2, 3]),  # coalesced
        (128, (4, 1), [0, 1, 2, 3], [4, 5, 6, 7]),  # coalesced, 128-bit
    ],
)
def test_seed_004_coalescing(copy_bits, val, thread_0, thread_1):
    """f32 elements, ``UniversalCopy{Float64 / UInt128}``, threads ``(32, 8)``: which offsets the first
    instruction of threads 0 and 1 reads in a column-major tile."""
    tiled = make_tiled_copy(copy_atom_universal(copy_bits, 32), (32, 8), val)
    tile = make_tensor(None, tiled.tiler)
    assert _first_instruction(tiled, 0, tile) == thread_0
    assert _first_instruction(tiled, 1, tile) == thread_1


# -- seed 004: the matmul kernel's partitions ---------------------------------------------------------


def test_seed_004_matmul_copy_partitions():
    """``copy_A = make_tiled_copy(CopyAtom{UniversalCopy{TA}, TA}(), (32, 8), (1, 1))`` on a 128x8 tile."""
    copy_a = make_tiled_copy(copy_atom_universal(32), (32, 8), (1, 1))
    m_a = make_tensor(None, Layout((2048, 256)))
    g_a = local_tile(m_a, (128, 8), (0, None))  # (bM, bK, k)
    s_a = make_tensor(None, Layout((128, 8), (1, 129)))  # sA_layout: padded by one column
    for thread in (0, 37, 255):
        thr = copy_a.get_slice(thread)
        t_a_g_a = thr.partition_S(g_a)  # (CPY, CPY_M, CPY_K, k)
        t_a_s_a = thr.partition_D(s_a)  # (CPY, CPY_M, CPY_K)
        assert [product(s) for s in t_a_g_a.shape] == [1, 4, 1, 32]
        assert [product(s) for s in t_a_s_a.shape] == [1, 4, 1]
        m, k = thread % 32, thread // 32
        assert [t_a_s_a[0, i, 0] for i in range(4)] == [(m + 32 * i) + 129 * k for i in range(4)]
        assert [t_a_g_a[0, 1, 0, kt] for kt in (0, 31)] == [(m + 32) + 2048 * (k + 8 * kt) for kt in (0, 31)]
        assert make_fragment_like(t_a_s_a).shape == t_a_s_a.shape


def test_seed_004_matmul_mma_partitions():
    """``mma_C = make_tiled_mma(UniversalFMA, (32, 8))``: thread t owns rows t%32 + 32i, columns t/32 + 8j."""
    mma = make_tiled_mma(FMA_F32, (32, 8))
    assert mma.num_threads == 256 and mma.tile_mnk == (32, 8, 1)
    s_a = make_tensor(None, Layout((128, 8), (1, 129)))
    s_b = make_tensor(None, Layout((128, 8), (1, 129)))
    g_c = make_identity_tensor((128, 128))
    for thread in (0, 37, 255):
        thr = mma.get_slice(thread)
        m, n = thread % 32, thread // 32
        t_c_s_a = thr.partition_A(s_a)  # (MMA, MMA_M, MMA_K)
        t_c_s_b = thr.partition_B(s_b)  # (MMA, MMA_N, MMA_K)
        t_c_g_c = thr.partition_C(g_c)  # (MMA, MMA_M, MMA_N)
        assert t_c_s_a.shape == (1, 4, 8) and t_c_s_b.shape == (1, 16, 8) and t_c_g_c.shape == (1, 4, 16)
        assert t_c_s_a[0, 2, 5] == (m + 64) + 129 * 5
        assert t_c_s_b[0, 3, 7] == (n + 24) + 129 * 7
        assert t_c_g_c[0, 3, 15] == (m + 96, n + 120)
        t_c_r_c = make_fragment_like(t_c_g_c)
        assert t_c_r_c.shape == (1, 4, 16) and t_c_r_c.engine == [0] * 64
    # the k tiles of gA stay as a last mode: (MMA, MMA_M, MMA_K, k)
    g_a = local_tile(make_tensor(None, Layout((2048, 256))), (128, 8), (1, None))
    t_c_g_a = mma.get_slice(3).partition_A(g_a)
    assert t_c_g_a.shape == (1, 4, 8, 32)
    assert t_c_g_a[0, 1, 2, 5] == (128 + 3 + 32) + 2048 * (2 + 8 * 5)


def test_a_rank_1_tiled_copy():
    tiled = make_tiled_copy(copy_atom_universal(64, 32), 4, 2)  # 4 threads x 2 values: an 8-element tile
    assert tiled.tiler == (8,) and tiled.dst.thread_coords(1) == [(2,), (3,)]
    part = tiled.get_slice(1).partition_S(make_tensor(None, 16))
    assert part.values() == [2, 3, 10, 11] and [product(s) for s in part.shape] == [2, 2]


def test_seed_004_fma_over_16x16_threads():
    mma = make_tiled_mma(FMA_F32, Layout((16, 16)))
    assert mma.num_threads == 256 and mma.tile_mnk == (16, 16, 1)
    assert mma.c.covers_once() and mma.c.layout == Layout((256, 1), (1, 0))  # thread t holds C(t % 16, t / 16)


# -- tensor-core MMAs (CuTe's sm80 partitions) -------------------------------------------------------------


@pytest.fixture
def mma_2x2():
    """Four warps of mma.m16n8k16 as 2 x 2 along M and N: a 32x16x16 tile."""
    return make_tiled_mma(MMA_M16N8K16_F16, (2, 2))


@pytest.mark.parametrize(
    ("thread", "coords"),
    [
        (0, [(0, 0), (0, 1), (8, 0), (8, 1)]),  # lane 0: (g, 2q), (g, 2q+1), (g+8, 2q), (g+8, 2q+1)
        (1, [(0, 2), (0, 3), (8, 2), (8, 3)]),
        (4, [(1, 0), (1, 1), (9, 0), (9, 1)]),
        (32, [(16, 0), (16, 1), (24, 0), (24, 1)]),  # warp 1 is the second along M
        (64, [(0, 8), (0, 9), (8, 8), (8, 9)]),  # warp 2 the second along N
    ],
)
def test_sm80_partition_c(mma_2x2, thread, coords):
    part = mma_2x2.get_slice(thread).partition_C(make_identity_tensor((32, 16)))
    assert part.values() == coords
    assert [product(s) for s in part.shape] == [4, 1, 1]
    assert [mma_2x2.c.coord(thread, v) for v in range(4)] == coords
    bigger = mma_2x2.get_slice(thread).partition_C(make_identity_tensor((64, 48)))
    assert [product(s) for s in bigger.shape] == [4, 2, 3]
    assert bigger[0, 1, 2] == (coords[0][0] + 32, coords[0][1] + 32)


def test_sm80_partition_a_is_shared_by_the_warps_along_n(mma_2x2):
    ident = make_identity_tensor((32, 16))
    lane0 = [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
    assert mma_2x2.get_slice(0).partition_A(ident).values() == lane0
    assert mma_2x2.get_slice(64).partition_A(ident).values() == lane0
    assert mma_2x2.get_slice(32).partition_A(ident).values() == [(m + 16, k) for m, k in lane0]
    assert mma_2x2.get_slice(96).partition_B(make_identity_tensor((16, 16))).values() == [
        (8, 0), (8, 1), (8, 8), (8, 9)
    ]
    assert [len(mma_2x2.a.owners((m, k))) for m in (0, 31) for k in (0, 15)] == [2] * 4


def test_sm80_permutation_interleaves_n_atoms():
    """CuTe's ``Tile<_32, Layout<(8,2,2):(1,16,8)>, _16>``: each warp along N takes two adjacent n8 atoms."""
    mma = make_tiled_mma(MMA_M16N8K16_F16, (2, 2), (32, Layout((8, 2, 2), (1, 16, 8)), 16))
    assert mma.tile_mnk == (32, 32, 16)
    c = mma.get_slice(0).partition_C(make_identity_tensor((32, 32)))
    assert c.values() == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
    plain = make_tiled_mma(MMA_M16N8K16_F16, (2, 2), (32, 32, 16))
    assert plain.get_slice(0).partition_C(make_identity_tensor((32, 32))).values()[4:] == [
        (0, 16), (0, 17), (8, 16), (8, 17)
    ]
    assert mma.c.covers_once() and plain.c.covers_once()


def test_partition_fragments_have_the_partition_shapes(mma_2x2):
    thr = mma_2x2.get_slice(5)
    assert thr.partition_fragment_A(Layout((64, 32))).shape == ((2, 2, 2), 2, 2)
    assert thr.partition_fragment_B((16, 32)).shape == ((2, 2), 1, 2)
    frag_c = thr.partition_fragment_C(make_tensor(None, Layout((64, 32))))
    assert frag_c.shape == ((2, 2), 2, 2) and frag_c.layout == Layout(((2, 2), 2, 2))


# -- ldmatrix through make_tiled_copy_A / B -------------------------------------------------------------


def test_ldmatrix_x4_feeds_the_a_fragment(mma_2x2):
    """Lane 8i + r gives the address of row r of matrix i; matrix 1 is A's rows 8-15, matrix 2 its k 8-15."""
    copy_a = make_tiled_copy_A(ldmatrix(4), mma_2x2)
    assert copy_a.tiler == (32, 16) and copy_a.dst.same_function(mma_2x2.a)
    expected_rows = {0: (0, 0), 7: (7, 0), 8: (8, 0), 16: (0, 8), 31: (15, 8), 32: (16, 0)}
    for thread, (row, col) in expected_rows.items():
        assert copy_a.src.thread_coords(thread) == [(row, col + j) for j in range(8)]
    frag = mma_2x2.get_slice(0).partition_fragment_A(Layout((32, 16)))
    assert frag.shape == ((2, 2, 2), 1, 1)
    assert copy_a.get_slice(0).retile_D(frag).shape == ((8, 1), 1, 1)


def test_ldmatrix_x4_for_b_needs_two_n_atoms_per_warp(mma_2x2):
    with pytest.raises(ValueError, match="4 values per thread are not a whole number of ldmatrix_x4's 8"):
        make_tiled_copy_B(ldmatrix(4), mma_2x2)
    mma = make_tiled_mma(MMA_M16N8K16_F16, (2, 2), (32, Layout((8, 2, 2), (1, 16, 8)), 16))
    copy_b = make_tiled_copy_B(ldmatrix(4), mma)
    assert copy_b.src.thread_coords(8) == [(0, 8 + j) for j in range(8)]  # matrix 1: n 0-7, k 8-15
    frag = mma.get_slice(0).partition_fragment_B(Layout((32, 16)))
    assert frag.shape == ((2, 2), 2, 1)
    assert copy_b.retile(frag).shape == (((2, 2), 2), 1, 1)  # one x4 load fills both n atoms


@pytest.mark.parametrize("atom", [ldmatrix(4), ldmatrix(2), ldmatrix(1), ldmatrix(4, True), ldmatrix(2, True)])
def test_ldmatrix_tiled_copies_move_each_element_from_its_source(atom):
    """Simulate every instruction: the element a lane reads at atom offset o lands where the lane that
    receives offset o writes it, in tile coordinates, so src and dst agree element by element."""
    mma = make_tiled_mma(MMA_M16N8K16_F16, (2, 1))
    tiled = make_tiled_copy_A(atom, mma)
    at, av = tiled.atom_threads, tiled.atom_values
    src_of = {}
    for t in range(atom.src.num_threads):
        for v in range(atom.src.num_values):
            src_of.setdefault(atom.src.offset(t, v), []).append((t, v))
    moved = Counter()
    for group in range(tiled.num_threads // at):
        for run in range(tiled.num_values // av):
            for t in range(at):
                for v in range(av):
                    written = tiled.dst.coord(t + at * group, v + av * run)
                    for st_, sv in src_of[atom.dst.offset(t, v)]:
                        sv_tiled = sv + atom.src.num_values * run
                        assert tiled.src.coord(st_ + at * group, sv_tiled) == written
                    moved[written] += 1
    assert len(moved) == 32 * 16 and set(moved.values()) == {1}


# -- properties -------------------------------------------------------------------------------------------


@st.composite
def _tiled_copies(draw):
    """A universal-atom tiled copy over small thread and value layouts (column- or row-major)."""

    def small_layout(max_extent: int) -> Layout:
        p, q = draw(st.integers(1, max_extent)), draw(st.integers(1, max_extent))
        return Layout((p, q), (q, 1)) if draw(st.booleans()) else Layout((p, q))

    thr, val = small_layout(4), small_layout(3)
    scalar = make_tiled_copy(copy_atom_universal(32), thr, val)
    values = scalar.layout_tv[1]
    row_major_tile = Layout(scalar.tiler, (scalar.tiler[1], 1))

    def fits(n: int) -> bool:
        """Whether runs of n values stay whole in a row-major tile too (a vector may not wrap a column)."""
        if values.size() % n:
            return False
        try:
            composition(row_major_tile, logical_divide(values, n))
        except ValueError:
            return False
        return True

    n = draw(st.sampled_from([n for n in range(1, values.size() + 1) if fits(n)]))
    reps = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    return make_tiled_copy(copy_atom_universal(32 * n, 32), thr, val), reps


@FEW
@given(_tiled_copies())
def test_a_tiled_copy_moves_every_element_exactly_once(drawn):
    tiled, (r0, r1) = drawn
    shape = (tiled.tiler[0] * r0, tiled.tiler[1] * r1)
    for row_major in (False, True):
        tensor = make_tensor(None, Layout(shape, (shape[1], 1)) if row_major else Layout(shape))
        for side in ("S", "D"):
            seen = Counter()
            for thread in range(tiled.num_threads):
                part = getattr(tiled.get_slice(thread), f"partition_{side}")(tensor)
                assert product(part.shape[0]) == tiled.num_values
                seen.update(part.offset + o for o in part.layout.values())
            assert sorted(seen) == list(range(product(shape))) and set(seen.values()) == {1}


@FEW
@given(_tiled_copies())
def test_partitions_of_an_identity_tensor_follow_the_tv_layouts(drawn):
    tiled, _ = drawn
    ident = make_identity_tensor(tiled.tiler)
    for thread in range(tiled.num_threads):
        thr = tiled.get_slice(thread)
        src, dst = thr.partition_S(ident), thr.partition_D(ident)
        assert src.values() == tiled.src.thread_coords(thread)
        assert dst.values() == tiled.dst.thread_coords(thread)
        runs = thr.retile(make_fragment_like(dst))
        assert product(runs.shape[0][0]) == tiled.atom_values
    assert tiled.dst.same_function(make_tiled_copy_tv(tiled.atom, tiled.layout_tv, tiled.tiler).dst)


@st.composite
def _tiled_mmas(draw):
    atom = draw(st.sampled_from([FMA_F32, MMA_M16N8K16_F16, MMA_M16N8K8_TF32]))
    limit = 8 if atom is FMA_F32 else 4
    m = draw(st.integers(1, 2 if atom is not FMA_F32 else 4))
    n = draw(st.integers(1, max(1, limit // (2 * m))))
    k = draw(st.integers(1, max(1, limit // (m * n))))
    shape = (m, n, k)
    if draw(st.booleans()):
        layout = Layout(shape)
    else:  # row-major numbering of the atoms
        layout = Layout(shape, (n * k, k, 1))
    return make_tiled_mma(atom, layout)


@FEW
@given(_tiled_mmas())
def test_a_tiled_mma_partitions_cover_a_b_and_c(mma):
    """Every element of each operand's tile is held, A by the threads along N, B along M, C along K."""
    tm, tn, tk = mma.tile_mnk
    thr_m, thr_n, thr_k = (mma.atom_layout[i].size() for i in range(3))
    cases = (("A", (tm, tk), thr_n), ("B", (tn, tk), thr_m), ("C", (tm, tn), thr_k))
    for operand, tile, sharing in cases:
        seen = Counter()
        tv = getattr(mma, operand.lower())
        ident = make_identity_tensor(tile)
        for thread in range(mma.num_threads):
            part = getattr(mma.get_slice(thread), f"partition_{operand}")(make_tensor(None, Layout(tile)))
            seen.update(part.offset + o for o in part.layout.values())
            coords = getattr(mma.get_slice(thread), f"partition_{operand}")(ident).values()
            assert coords == tv.thread_coords(thread)
        assert sorted(seen) == list(range(product(tile))), operand
        assert set(seen.values()) == {sharing}, operand


# -- pictures and errors ------------------------------------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"


def _cell_groups(svg: str) -> dict[str, int]:
    root = ET.fromstring(svg)
    return {g.get("id"): len(list(g.iter(f"{SVG}path"))) for g in root.iter(f"{SVG}g")
            if (g.get("id") or "").startswith("cells-")}


def test_render_a_tiled_copy_and_a_tiled_mma(copy_4x9):
    svg = render_tiled(copy_4x9)
    assert _cell_groups(svg) == {"cells-0": 36, "cells-1": 36}
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert any(t and t.startswith("src =") for t in texts) and any(t and t.startswith("dst =") for t in texts)
    assert texts.count("T5") == 12 and texts.count("V5") == 12  # each label is "T#" over "V#"; 6 cells a side
    svg = render_tiled(make_tiled_mma(FMA_F32, (4, 2)))
    assert _cell_groups(svg) == {"cells-0": 4, "cells-1": 2, "cells-2": 8}  # A 4x1, B drawn 1x2, C 4x2


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: render_tiled(Layout(4)), TypeError, "TiledCopy or TiledMMA"),
        (lambda: make_tiled_copy(copy_atom_universal(32), Layout(4, 0), 1), ValueError, "one-to-one"),
        (lambda: make_tiled_copy(FMA_F32, 4), TypeError, "CopyAtom"),
        (lambda: make_tiled_copy(copy_atom_universal(32), "4"), TypeError, "thr_layout must be"),
        (lambda: copy_atom_universal(48, 32), ValueError, "whole number"),
        (lambda: make_tiled_copy(copy_atom_universal(32), 4).get_slice(4), ValueError, "thread 4"),
        (lambda: make_tiled_copy(copy_atom_universal(32), (2, 2)).get_slice(0).partition_S(Layout(4)),
         TypeError, "expected a Tensor"),
        (lambda: make_tiled_copy(copy_atom_universal(32), (2, 2)).get_slice(0).partition_D(
            make_tensor(None, (3, 2))), ValueError, "multiple of the tile"),
        (lambda: make_tiled_copy(copy_atom_universal(64, 32), 1, (3, 2)).get_slice(0).partition_S(
            make_tensor(None, Layout((3, 2), (2, 1)))), ValueError, "cannot be cut into this copy's"),
        (lambda: make_tiled_mma(FMA_F32, (2, 2, 2, 2)), ValueError, "at most 3"),
        (lambda: make_tiled_mma(MMA_M16N8K16_F16, (2, 2), (24,)), ValueError, "permutation M covers 24"),
        (lambda: make_tiled_mma(FMA_F32, Layout((2, 2), (0, 1))), ValueError, "one-to-one"),
        (lambda: make_tiled_mma("no_such_atom"), ValueError, "unknown MMA atom"),
        (lambda: make_tiled_mma(FMA_F32, (2, 2)).get_slice(0).partition_C(make_tensor(None, (3, 2))), ValueError,
         "multiple of the tile"),
    ],
)
def test_bad_arguments_name_what_was_expected(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_render_writes_a_tiled_copy_and_a_tiled_mma(tmp_path):
    import tilec.layout as L

    copy = L.make_tiled_copy(L.copy_atom_universal(16, 16), L.Layout((2, 3), (3, 1)), L.Layout((2, 3)))
    path = L.render(copy, tmp_path / "copy.svg")
    text = open(path).read()
    assert text.startswith("<?xml") or "<svg" in text
    assert "T5" in text and "src" in text and "dst" in text  # six threads, both sides
    mma = L.make_tiled_mma("mma_m16n8k16_f16", (2, 2, 1))
    text = open(L.render(mma, tmp_path / "mma.svg")).read()
    assert "A = " in text and "C = " in text
    import pytest

    with pytest.raises(ValueError, match="drawn as SVG"):
        L.render(copy, tmp_path / "copy.png")
