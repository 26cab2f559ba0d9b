"""The tensor-core and copy atoms against the PTX ISA fragment tables, and TVLayout.

The PTX ISA (9.7.14.5 "Matrix Fragments for mma.m16n8k16 / mma.m16n8k8" and
9.7.9.x "ldmatrix") gives each fragment as a formula of the lane id ``l`` with
``g = l >> 2`` (groupID) and ``q = l % 4`` (threadID_in_group). The tables are
written out here as Python, independently of the layouts, and every atom is
checked against them element by element.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from layout_strategies import SOME, layouts

from tilec.layout import (
    COPY_ATOMS,
    FMA_F32,
    MMA_ATOMS,
    MMA_M16N8K8_TF32,
    MMA_M16N8K32_F8,
    MMA_M16N8K32_S8,
    MMA_M16N8K16_BF16,
    MMA_M16N8K16_F16,
    Layout,
    TVLayout,
    copy_atom,
    cp_async,
    ldmatrix,
    mma_atom,
    parse,
)
from tilec.layout.int_tuple import idx2crd


# -- the PTX ISA tables as formulas ------------------------------------------------
def ptx_m16n8k16_a(lane: int, i: int) -> tuple[int, int]:
    """(row m, col k) of a_i, i < 8: f16/bf16 A fragment."""
    g, q = lane >> 2, lane % 4
    row = g if (0 <= i < 2 or 4 <= i < 6) else g + 8
    col = q * 2 + (i & 1) + (8 if i >= 4 else 0)
    return row, col


def ptx_m16n8k16_b(lane: int, i: int) -> tuple[int, int]:
    """(row k, col n) of b_i, i < 4."""
    g, q = lane >> 2, lane % 4
    row = q * 2 + (i & 1) + (8 if i >= 2 else 0)
    return row, g


def ptx_m16n8_c(lane: int, i: int) -> tuple[int, int]:
    """(row m, col n) of c_i, i < 4: the f32 accumulator of m16n8k16 and m16n8k8."""
    g, q = lane >> 2, lane % 4
    row = g if i < 2 else g + 8
    return row, q * 2 + (i & 1)


def ptx_m16n8k8_tf32_a(lane: int, i: int) -> tuple[int, int]:
    g, q = lane >> 2, lane % 4
    row = g if i in (0, 2) else g + 8
    col = q if i in (0, 1) else q + 4
    return row, col


def ptx_m16n8k8_tf32_b(lane: int, i: int) -> tuple[int, int]:
    g, q = lane >> 2, lane % 4
    return (q if i == 0 else q + 4), g


def ptx_m16n8k32_s8_a(lane: int, i: int) -> tuple[int, int]:
    """(row m, col k) of a_i, i < 16: the .s8 A fragment of m16n8k32 (four bytes a register along K)."""
    g, q = lane >> 2, lane % 4
    row = g if (i < 4 or 8 <= i < 12) else g + 8
    col = q * 4 + (i & 3) + (16 if i >= 8 else 0)
    return row, col


def ptx_m16n8k32_s8_b(lane: int, i: int) -> tuple[int, int]:
    """(row k, col n) of b_i, i < 8."""
    g, q = lane >> 2, lane % 4
    return q * 4 + (i & 3) + (16 if i >= 4 else 0), g


def ptx_ldmatrix_dst(lane: int, reg: int, half: int, trans: bool) -> tuple[int, int]:
    """(row, col) in the 8 x 8*num tile of element ``half`` of register ``reg`` of ``lane``.

    Register i holds matrix i; without .trans lane l gets row l/4, columns 2(l%4)+{0,1};
    with .trans it gets column l/4, rows 2(l%4)+{0,1}. Matrix i is columns 8i..8i+7.
    """
    if trans:
        return 2 * (lane % 4) + half, 8 * reg + lane // 4
    return lane // 4, 8 * reg + 2 * (lane % 4) + half


# -- MMA atoms ---------------------------------------------------------------------
@pytest.mark.parametrize("atom", [MMA_M16N8K16_F16, MMA_M16N8K16_BF16], ids=lambda a: a.name)
def test_mma_m16n8k16_fragments_match_the_ptx_tables(atom):
    assert atom.shape_mnk == (16, 8, 16) and atom.threads == 32
    assert atom.a.tile == (16, 16) and atom.b.tile == (8, 16) and atom.c.tile == (16, 8)
    assert (atom.a.num_values, atom.b.num_values, atom.c.num_values) == (8, 4, 4)
    for lane in range(32):
        assert atom.a.thread_coords(lane) == [ptx_m16n8k16_a(lane, i) for i in range(8)]
        k_n = [ptx_m16n8k16_b(lane, i) for i in range(4)]  # PTX's B is K x N, CuTe's is N x K
        assert atom.b.thread_coords(lane) == [(n, k) for k, n in k_n]
        assert atom.c.thread_coords(lane) == [ptx_m16n8_c(lane, i) for i in range(4)]
    for frag in (atom.a, atom.b, atom.c):
        assert frag.covers_once()
    assert str(atom.a.layout) == "((4,8),(2,2,2)):((32,1),(16,8,128))"
    assert str(atom.b.layout) == "((4,8),(2,2)):((16,1),(8,64))"
    assert str(atom.c.layout) == "((4,8),(2,2)):((32,1),(16,8))"


def test_mma_m16n8k8_tf32_fragments_match_the_ptx_tables():
    atom = MMA_M16N8K8_TF32
    assert atom.shape_mnk == (16, 8, 8) and atom.a.tile == (16, 8) and atom.b.tile == (8, 8)
    for lane in range(32):
        assert atom.a.thread_coords(lane) == [ptx_m16n8k8_tf32_a(lane, i) for i in range(4)]
        assert atom.b.thread_coords(lane) == [(n, k) for k, n in (ptx_m16n8k8_tf32_b(lane, i) for i in range(2))]
        assert atom.c.thread_coords(lane) == [ptx_m16n8_c(lane, i) for i in range(4)]
    assert all(f.covers_once() for f in (atom.a, atom.b, atom.c))


def test_mma_m16n8k32_s8_fragments_match_the_ptx_tables():
    atom = MMA_M16N8K32_S8
    assert atom.shape_mnk == (16, 8, 32) and atom.a.tile == (16, 32) and atom.b.tile == (8, 32)
    assert (atom.a.num_values, atom.b.num_values, atom.c.num_values) == (16, 8, 4)
    for lane in range(32):
        assert atom.a.thread_coords(lane) == [ptx_m16n8k32_s8_a(lane, i) for i in range(16)]
        assert atom.b.thread_coords(lane) == [(n, k) for k, n in (ptx_m16n8k32_s8_b(lane, i) for i in range(8))]
        assert atom.c.thread_coords(lane) == [ptx_m16n8_c(lane, i) for i in range(4)]
    assert all(f.covers_once() for f in (atom.a, atom.b, atom.c))
    assert atom.instruction == "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"


@pytest.mark.parametrize("atom", MMA_M16N8K32_F8, ids=lambda a: a.name)
def test_mma_m16n8k32_fp8_fragments_are_the_8_bit_tables(atom):
    """The PTX ISA gives .e4m3/.e5m2 of m16n8k32 the fragments of .s8/.u8 (one table for the four types),
    with f32 sums; A and B may be different FP8 types."""
    for lane in range(32):
        assert atom.a.thread_coords(lane) == [ptx_m16n8k32_s8_a(lane, i) for i in range(16)]
        assert atom.b.thread_coords(lane) == [(n, k) for k, n in (ptx_m16n8k32_s8_b(lane, i) for i in range(8))]
        assert atom.c.thread_coords(lane) == [ptx_m16n8_c(lane, i) for i in range(4)]
    assert atom.c_type == "f32" and atom.a_type in ("e4m3", "e5m2") and atom.b_type in ("e4m3", "e5m2")
    assert atom.instruction == f"mma.sync.aligned.m16n8k32.row.col.f32.{atom.a_type}.{atom.b_type}.f32"


def test_fma_atom_is_one_thread_one_value():
    assert FMA_F32.threads == 1 and FMA_F32.shape_mnk == (1, 1, 1)
    for frag in (FMA_F32.a, FMA_F32.b, FMA_F32.c):
        assert frag.num_threads == 1 and frag.num_values == 1 and frag.tile == (1, 1)
        assert frag.thread_coords(0) == [(0, 0)] and frag.owner((0, 0)) == (0, 0)
    assert FMA_F32.instruction == "fma.rn.f32"


def test_mma_atom_registry():
    assert set(MMA_ATOMS) == {"mma_m16n8k16_f16", "mma_m16n8k16_bf16", "mma_m16n8k8_tf32", "mma_m16n8k32_s8",
                              "mma_m16n8k32_e4m3", "mma_m16n8k32_e5m2", "mma_m16n8k32_e4m3_e5m2",
                              "mma_m16n8k32_e5m2_e4m3", "fma_f32"}
    for name, atom in MMA_ATOMS.items():
        assert mma_atom(name) is atom and atom.name == name
        m, n, k = atom.shape_mnk
        assert (atom.a.tile, atom.b.tile, atom.c.tile) == ((m, k), (n, k), (m, n))
        # every lane's values together cover each operand exactly once
        assert all(f.covers_once() for f in (atom.a, atom.b, atom.c))
    assert "m16n8k16" in MMA_M16N8K16_F16.instruction and ".bf16.bf16" in MMA_M16N8K16_BF16.instruction
    assert MMA_M16N8K8_TF32.instruction == "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    with pytest.raises(ValueError, match=r"unknown MMA atom 'mma_m16n8k32_f16'.*mma_m16n8k16_f16"):
        mma_atom("mma_m16n8k32_f16")


# -- ldmatrix ----------------------------------------------------------------------
@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_matches_the_ptx_description(num, trans):
    atom = ldmatrix(num, trans)
    assert atom.name == f"ldmatrix_x{num}{'_trans' if trans else ''}"
    assert atom.instruction == f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"
    assert atom.elem_bits == 16 and atom.threads == 32
    assert atom.src.tile == atom.dst.tile == (8, 8 * num)
    # destination: register i, halves 0 and 1
    assert atom.dst.num_values == 2 * num
    for lane in range(32):
        expect = [ptx_ldmatrix_dst(lane, reg, half, trans) for reg in range(num) for half in range(2)]
        assert atom.dst.thread_coords(lane) == expect
    assert atom.dst.covers_once()
    # source: lane 8i + r gives the address of row r of matrix i: its 8 contiguous b16 elements
    assert atom.src.num_values == 8
    for lane in range(32):
        i, r = divmod(lane, 8)
        if i < num:
            assert atom.src.thread_coords(lane) == [(r, 8 * i + c) for c in range(8)]
        else:  # addresses of the lanes past 8*num are not used; they repeat the used ones
            assert atom.src.thread_coords(lane) == atom.src.thread_coords(lane % (8 * num))
    for row in range(8):
        for i in range(num):
            owners = atom.src.owners((row, 8 * i))
            assert (8 * i + row, 0) in owners and len(owners) == 4 // num
    assert atom.src.covers_once() == (num == 4)


def test_ldmatrix_x4_with_the_a_addressing_gives_the_mma_a_fragment():
    """Lane l points at row l%16, column 8*(l/16) of a 16x16 A tile: ldmatrix.x4 then yields
    exactly mma.m16n8k16's A fragment, register by register (a0a1, a2a3, a4a5, a6a7)."""
    ld = ldmatrix(4)
    a = MMA_M16N8K16_F16.a

    def matrix_origin(i: int) -> tuple[int, int]:
        lane = 8 * i  # the lane giving row 0 of matrix i
        return lane % 16, 8 * (lane // 16)

    for lane in range(32):
        got = []
        for v in range(8):
            r, c = ld.dst.coord(lane, v)
            i, c8 = divmod(c, 8)
            r0, c0 = matrix_origin(i)
            got.append((r0 + r, c0 + c8))
        assert got == a.thread_coords(lane)


def test_ldmatrix_rejects_other_counts():
    with pytest.raises(ValueError, match=r"\.x3"):
        ldmatrix(3)


# -- cp.async ----------------------------------------------------------------------
@pytest.mark.parametrize("nbytes", [4, 8, 16])
@pytest.mark.parametrize("elem_bits", [16, 32])
def test_cp_async_is_one_thread_copying_contiguous_bytes(nbytes, elem_bits):
    atom = cp_async(nbytes, elem_bits)
    n = 8 * nbytes // elem_bits
    assert atom.threads == 1 and atom.elem_bits == elem_bits
    assert atom.src.tile == atom.dst.tile == (n,)
    assert atom.src.thread_coords(0) == atom.dst.thread_coords(0) == [(c,) for c in range(n)]
    assert n * elem_bits == 8 * nbytes
    assert atom.instruction == ("cp.async.cg.shared.global" if nbytes == 16 else "cp.async.ca.shared.global")
    assert copy_atom(atom.name) is not None and copy_atom(atom.name).src == atom.src


def test_cp_async_rejects_bad_sizes():
    with pytest.raises(ValueError, match="not 12"):
        cp_async(12)
    with pytest.raises(ValueError, match="64-bit"):
        cp_async(4, 64)


def test_copy_atom_registry():
    assert set(COPY_ATOMS) == {
        *(f"ldmatrix_x{n}{t}" for n in (1, 2, 4) for t in ("", "_trans")),
        *(f"cp_async_{b}_b{e}" for b in (4, 8, 16) for e in (16, 32)),
    }
    assert copy_atom("ldmatrix_x4_trans") == ldmatrix(4, True)
    with pytest.raises(ValueError, match=r"unknown copy atom 'ldmatrix_x8'.*ldmatrix_x4"):
        copy_atom("ldmatrix_x8")


# -- TVLayout ----------------------------------------------------------------------
def test_tv_layout_helpers():
    # 4 threads x 2 values over a 4x2 tile: thread t holds row t
    tv = TVLayout(parse("(4,2):(1,4)"), (4, 2))
    assert (tv.num_threads, tv.num_values) == (4, 2)
    assert tv.offset(3, 1) == 7 and tv.coord(3, 1) == (3, 1)
    assert tv.thread_coords(2) == [(2, 0), (2, 1)]
    assert tv.owners((1, 1)) == [(1, 1)] and tv.owner((1, 1)) == (1, 1)
    assert tv.covers_once()
    assert str(tv) == "(4,2):(1,4) over 4x2"
    assert TVLayout(parse("(4,2):(1,4)"), [4, 2]) == tv
    # broadcast: two threads hold every element
    bc = TVLayout(parse("((2,2),4):((0,1),2)"), (8,))
    assert bc.owners(3) == [(2, 1), (3, 1)] and not bc.covers_once()
    with pytest.raises(ValueError, match="held 2 times"):
        bc.owner(3)
    # partial cover
    half = TVLayout(parse("(2,2):(1,2)"), (8,))
    assert not half.covers_once() and half.owners(5) == []
    with pytest.raises(ValueError, match="held 0 times"):
        half.owner(5)


def test_tv_layout_rejects_bad_input():
    with pytest.raises(ValueError, match=r"\(4,2\):\(1,4\).*offset 4.*\(4, 1\)"):
        TVLayout(parse("(4,2):(1,4)"), (4, 1))
    with pytest.raises(ValueError, match=r"\(4,2\):\(1,-4\).*offset -4"):
        TVLayout(parse("(4,2):(1,-4)"), (4, 2))
    with pytest.raises(ValueError, match=r"8:1.*rank-2"):
        TVLayout(parse("8:1"), (8,))
    with pytest.raises(ValueError, match=r"\(2,2,2\):\(1,2,4\).*rank-2"):
        TVLayout(parse("(2,2,2):(1,2,4)"), (8,))
    tv = TVLayout(parse("(4,2):(1,4)"), (4, 2))
    with pytest.raises(ValueError, match="thread 4 is outside"):
        tv.thread_coords(4)
    with pytest.raises(ValueError, match="outside the tile"):
        tv.owners((4, 0))
    with pytest.raises(ValueError, match="outside the tile"):
        tv.owners((1,))


@SOME
@given(layouts("bijective", max_size=64).filter(lambda x: len(x) == 2))
def test_tv_layout_of_a_bijection_covers_its_tile_once(layout):
    n = layout.size()
    tv = TVLayout(layout, (n,))
    assert tv.covers_once()
    for t in range(tv.num_threads):
        for v, crd in enumerate(tv.thread_coords(t)):
            assert tv.owner(crd) == (t, v) and crd == idx2crd(layout((t, v)), (n,))


def test_mma_fragments_are_layouts_over_column_major_tiles():
    # the coordinate is idx2crd of the offset in the (M, K) tile: column-major
    a = MMA_M16N8K16_F16.a
    for t in range(32):
        for v in range(8):
            m, k = a.coord(t, v)
            assert a.offset(t, v) == m + 16 * k
    assert a.layout == Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
