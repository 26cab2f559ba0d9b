"""tile-layout: every register tile and vector gets its fragment in its type.

- the fragments are the mma atoms' layouts (the same ones tile-distribute checks), a loop
  carries one fragment, register vectors live in the lanes of the tiles they are broadcast to;
- the choice is visible and stable: a second run changes nothing, a fragment given in the
  type is kept, another spelling of the same function needs no conversion;
- a use that needs another fragment gets ``tile.convert_layout``; two accumulators that
  disagree are an error naming both;
- meaning: the kernels of ``tests/lit/passes/tile-layout`` give the same results in the tile
  interpreter before and after the pass and, through tile-distribute, in the lane interpreter,
  against a float64 reference.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from tilec.interp import run
from tilec.dialects.context import make_context
from tilec.layout import MMA_M16N8K8_TF32, MMA_M16N8K16_F16, Layout, TVLayout
from tilec.passes.fragments import FragmentError, VectorFragment, default_fragment, mma_fragment, vector_fragment
from tilec.passes.tile_distribute import TileDistributePass
from tilec.passes.tile_layout import LayoutAssignment, TileLayoutPass

LIT = Path(__file__).resolve().parents[1] / "lit" / "passes" / "tile-layout"


def _parse(text: str):
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def _layout(module):
    TileLayoutPass().apply(make_context(), module)
    module.verify()
    return module


def _distribute(module):
    TileDistributePass().apply(make_context(), module)
    module.verify()
    return module


def _kernel(module, name: str) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


def _view(x: np.ndarray) -> list:
    """A numpy array as the lowered kernel's (pointer, extents..., strides...) arguments."""
    return [x, *x.shape, *(s // x.itemsize for s in x.strides)]


def _rel_error(got, ref) -> float:
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert not np.isnan(got).any(), "NaN left in the output"
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


# ---------------------------------------------------------------- fragments


def test_same_function_ignores_spelling():
    c = mma_fragment(MMA_M16N8K16_F16, "C", (16, 16))
    a = mma_fragment(MMA_M16N8K16_F16, "A", (16, 16))
    assert c.layout != a.layout and c.tv.same_function(a.tv)
    tf32_c = mma_fragment(MMA_M16N8K8_TF32, "C", (16, 8))
    tf32_a = mma_fragment(MMA_M16N8K8_TF32, "A", (16, 8))
    assert not tf32_c.tv.same_function(tf32_a.tv)
    flat = TVLayout(Layout((32, 4), (1, 32)), (32, 4))
    nested = TVLayout(Layout(((4, 8), (2, 2)), ((1, 4), (32, 64))), (32, 4))
    assert flat.same_function(nested)


@pytest.mark.parametrize("dims", [(16, 8), (32, 32), (64, 16)])
@pytest.mark.parametrize("orientation", ["row", "col"])
def test_vector_fragment_holds_the_rows_of_its_lanes(dims, orientation):
    tile = mma_fragment(MMA_M16N8K16_F16, "C", dims)
    vf = vector_fragment(tile, orientation)
    axis = 0 if orientation == "row" else 1
    picks = vf.values_of(tile)
    for lane in range(32):
        for v in range(tile.num_values):
            assert vf.tv.offset(lane, picks[v]) == tile.coord(lane, v)[axis]
    assert vf.tv.covers() and list(vf.positions) == sorted(vf.positions)


def test_vector_fragment_of_other_lanes_is_refused():
    other = VectorFragment(TVLayout(Layout((32, 1), (0, 0)), (1,)), "row")
    with pytest.raises(FragmentError, match="does not live in the lanes"):
        other.values_of(mma_fragment(MMA_M16N8K16_F16, "C", (16, 8)))


# ---------------------------------------------------------------- the pass


def test_fragments_are_the_atoms_and_the_loop_agrees():
    module = _layout(_parse((LIT / "fragments.mlir").read_text()))
    types = {op.results[0].name_hint: op.results[0].type for op in module.walk() if op.results}
    c = mma_fragment(MMA_M16N8K16_F16, "C", (32, 16))
    assert types["zero"].fragment.same_function(c.tv) and types["acc"] == types["zero"] == types["sum"]
    assert types["ra"].fragment.same_function(mma_fragment(MMA_M16N8K16_F16, "A", (32, 16)).tv)
    assert types["rb"].fragment.same_function(mma_fragment(MMA_M16N8K16_F16, "B", (16, 16), transposed=True).tv)
    assert types["v"].fragment.same_function(vector_fragment(c, "col").tv)


def test_a_second_run_and_a_given_spelling_change_nothing():
    once = str(_layout(_parse((LIT / "same_function.mlir").read_text())))
    assert str(_layout(_parse(once))) == once
    # S and P given in the A spelling (the same function as the C fragment S needs): kept, no conversion
    a = mma_fragment(MMA_M16N8K16_F16, "A", (16, 16)).layout
    text = (LIT / "same_function.mlir").read_text()
    for old, new in (
        ("%z = tile.zeros : !tile.rt<16x16xf32>", f"%z = tile.zeros : !tile.rt<16x16xf32, {a}>"),
        ("!tile.rt<16x16xf32> -> !tile.rt<16x16xf32>", f"!tile.rt<16x16xf32, {a}> -> !tile.rt<16x16xf32, {a}>"),
        ("%p = tile.convert %s : !tile.rt<16x16xf32> -> !tile.rt<16x16xf16>",
         f"%p = tile.convert %s : !tile.rt<16x16xf32, {a}> -> !tile.rt<16x16xf16, {a}>"),
        ("%p, %rv, %z8 : !tile.rt<16x16xf16>", f"%p, %rv, %z8 : !tile.rt<16x16xf16, {a}>"),
    ):
        assert old in text
        text = text.replace(old, new)
    module = _layout(_parse(text))
    assert not [op for op in module.walk() if op.name == "tile.convert_layout"]
    p = next(op.result for op in module.walk() if op.name == "tile.convert")
    assert p.type.fragment.layout == a


def test_conversions_are_inserted_where_a_use_needs_another_fragment():
    module = _layout(_parse((LIT / "convert.mlir").read_text().split("// -----")[0]))
    (conv,) = [op for op in module.walk() if op.name == "tile.convert_layout"]
    assert conv.input.name_hint == "d"
    assert conv.result.type.fragment.same_function(mma_fragment(MMA_M16N8K8_TF32, "A", (16, 8)).tv)
    (use,) = list(conv.result.uses)
    assert use.operation.name == "tile.mma" and use.operation.a is conv.result


def test_two_accumulator_fragments_are_an_error_naming_both():
    text = """
func.func @k(%c: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.zeros : !tile.rt<16x8xf32>
  %a = tile.zeros : !tile.rt<16x16xf16>
  %b = tile.zeros : !tile.rt<16x8xf16>
  %a2 = tile.zeros : !tile.rt<16x8xf32>
  %b2 = tile.zeros : !tile.rt<8x8xf32>
  %d = tile.mma %a, %b, %x atom <mma_m16n8k16_f16> : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  %e = tile.mma %a2, %b2, %x atom <fma_f32> : !tile.rt<16x8xf32>, !tile.rt<8x8xf32>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %e, %c[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}"""
    with pytest.raises(PassFailedException, match=r"tile-layout: @k: register tile %x needs two fragments: .* and .*"):
        _layout(_parse(text))


def test_a_layout_error_points_at_the_op(monkeypatch):
    """A fragment that cannot be found for a value is reported at the op that makes it (its source
    line; the language turns it into the kernel's Python line)."""
    import tilec.passes.tile_layout as tile_layout

    def refuse(dims, name=""):
        raise FragmentError(f"no fragment for {name}")

    monkeypatch.setattr(tile_layout, "default_fragment", refuse)
    text = """
func.func @k(%c: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.zeros : !tile.rt<16x8xf32>
  tile.store %x, %c[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}"""
    from tilec.ir.parser import LocatingParser

    module = LocatingParser(make_context(), text, "k.mlir").parse_module()
    with pytest.raises(PassFailedException, match=r"tile-layout: 'tile.zeros' at k.mlir:4:\d+: @k: no fragment for %x"):
        _layout(module)


def test_vectors_of_columns_in_runs_of_runs():
    """A lane's columns that are runs repeated a number of times no power of two (2 columns every 64,
    3 times: a 1x192 tile over one warp) make the vector layout (2,3):(1,64)."""
    from tilec.passes.fragments import block_fragment

    tile = block_fragment((1, 192), 32, 8)
    vf = vector_fragment(tile, "col")
    assert vf.positions == (0, 1, 64, 65, 128, 129)
    assert str(vf.layout) == "(32,(2,3)):(2,(1,64))"  # lanes 2 columns apart


@pytest.mark.parametrize("dims, threads, per_thread", [((1, 1000), 128, 125), ((3, 1000), 128, 375),
                                                       ((1, 3000), 256, 375), ((1, 4096), 128, 32),
                                                       ((16, 4096), 256, 256)])
def test_block_tiles_spread_over_as_many_threads_as_they_can(dims, threads, per_thread):
    """Rows with few factors of two (1000 = 8 x 125) take single-element runs when wider runs would
    leave most threads holding copies (runs of 4: 2 threads of 500 values, 126 copies); rows of a
    power of two keep their 16-byte runs."""
    from tilec.passes.fragments import block_fragment

    tile = block_fragment(dims, threads, 8)
    held = [tile.tv.thread_coords(t) for t in range(threads)]
    assert {len(h) for h in held} == {per_thread}
    assert set().union(*map(set, held)) == {(r, c) for r in range(dims[0]) for c in range(dims[1])}
    if dims[1] == 4096:
        assert sorted({c for _, c in held[0]})[:8] == list(range(8))  # 8-element (16-byte) runs


def test_the_assignment_reads_every_register_value():
    module = _parse((LIT / "fragments.mlir").read_text())
    assignment = LayoutAssignment(_kernel(module, "loop"))
    names = {v.name_hint for v in assignment.values}
    assert {"zero", "x", "acc", "ra", "rb", "y", "v", "bv", "sum"} <= names


# ---------------------------------------------------------------- meaning


def test_meaning_of_the_p_tile():
    """O = f16(Q K^T) V (attention's P as the A operand, no conversion) before and after the
    passes, at tile level and, through tile-distribute, at lane level."""
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal(s).astype(np.float16) for s in ((16, 16), (16, 16), (16, 8)))
    s = q.astype(np.float64) @ k.astype(np.float64).T
    ref = s.astype(np.float16).astype(np.float64) @ v.astype(np.float64)
    text = (LIT / "same_function.mlir").read_text()
    for module in (_parse(text), _layout(_parse(text))):
        o = np.full((16, 8), np.nan, np.float32)
        run(module, "pv", q, k, v, o)
        assert _rel_error(o, ref) < 2e-3
    lowered = _distribute(_layout(_parse(text)))
    o = np.full((16, 8), np.nan, np.float32)
    run(lowered, "pv", *_view(q), *_view(k), *_view(v), *_view(o))
    assert _rel_error(o, ref) < 2e-3


def test_meaning_of_the_loop_and_the_bias_vector():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((32, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    bias = rng.standard_normal(16).astype(np.float32)
    ref = 4 * (a.astype(np.float64) @ b.astype(np.float64)) + bias
    text = (LIT / "fragments.mlir").read_text()
    for module in (_parse(text), _layout(_parse(text))):
        c = np.full((32, 16), np.nan, np.float32)
        run(module, "loop", a, b, bias, c)
        assert _rel_error(c, ref) < 1e-3
    lowered = _distribute(_layout(_parse(text)))
    c = np.full((32, 16), np.nan, np.float32)
    run(lowered, "loop", *_view(a), *_view(b), *_view(bias), *_view(c))
    assert _rel_error(c, ref) < 1e-3


def test_meaning_of_an_inserted_conversion_at_tile_level():
    """tile.convert_layout changes no value: the tf32 chain gives the same result before and after."""
    text = (LIT / "convert.mlir").read_text().split("// -----")[0]
    g = np.random.default_rng(3).standard_normal((16, 8)).astype(np.float32)
    outs = []
    for module in (_parse(text), _layout(_parse(text))):
        c = np.full((16, 8), np.nan, np.float32)
        run(module, "chain", g, c)
        outs.append(c)
    assert not np.isnan(outs[0]).any()
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("dims, v", [((1, 256), 8), ((2, 96), 1), ((3, 128), 4), ((1, 32), 1)])
def test_row_major_fragment_for_tiles_no_atom_tiles(dims, v):
    """A tile that is not a multiple of 16x8 and feeds no mma: lanes along each row, ``v`` consecutive
    columns a lane (the widest that tiles the row), every element once."""
    fr = default_fragment(dims)
    assert fr.tv.covers_once()
    rows, cols = dims
    for lane in range(32):
        for r in range(rows):
            held = sorted(c for (rr, c) in fr.tv.thread_coords(lane) if rr == r)
            assert held[:v] == list(range(lane * v, lane * v + v))
    # rows that 32 lanes do not tile (3 x 20): the block-tile fragment over one warp's lanes, every
    # element held (lanes past the tile's 4-column runs hold copies)
    odd = default_fragment((3, 20))
    assert {c for lane in range(32) for c in odd.tv.thread_coords(lane)} == {(r, c) for r in range(3) for c in range(20)}


# ---------------------------------------------------------------- tile.transpose's fragments


def _fragments_to_transpose():
    from tilec.layout import MMA_ATOMS
    from tilec.passes.fragments import block_fragment, default_fragment, fma_fragment, mma_fragment

    for name in ("mma_m16n8k16_f16", "mma_m16n8k8_tf32"):
        for operand in "ABC":
            for dims in ((16, 16), (32, 64), (64, 16)):
                for transposed in (False, True):
                    yield f"{name} {operand} {dims} {transposed}", mma_fragment(MMA_ATOMS[name], operand, dims, transposed)
    yield "fma C", fma_fragment("C", (32, 32), (4, 8), (8, 4))
    for dims in ((8, 8), (16, 64), (7, 65), (128, 2)):
        yield f"default {dims}", default_fragment(dims)
    for dims, threads in (((64, 128), 256), ((2, 1024), 128), ((16, 8), 64)):
        yield f"block {dims} {threads}", block_fragment(dims, threads, 4)
    for operand, dims, transposed in (("A", (64, 32), False), ("A", (32, 64), True), ("B", (32, 64), True),
                                      ("C", (64, 64), False)):  # split over a 2x2 grid of warps
        yield f"split {operand} {dims} {transposed}", mma_fragment(MMA_ATOMS["mma_m16n8k16_f16"], operand, dims,
                                                                  transposed, warps=(2, 2, 1))


@pytest.mark.parametrize("name, frag", list(_fragments_to_transpose()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_fragment_has_a_transpose(name, frag):
    """Each fragment tilec builds has a layout for its transpose (``tile.transpose`` then moves no
    data): the same (thread, value) pairs at swapped coordinates, and transposing twice gives the
    fragment back as a function."""
    t = frag.tv.transposed()
    m, n = frag.dims
    assert t.tile == (n, m) and t.num_threads == frag.tv.num_threads and t.num_values == frag.tv.num_values
    for thread in range(frag.tv.num_threads):
        for value in range(frag.tv.num_values):
            mm, nn = frag.tv.coord(thread, value)
            assert t.coord(thread, value) == (nn, mm)
    assert t.transposed().same_function(frag.tv)


def test_a_transpose_of_a_3d_tile_is_refused():
    with pytest.raises(ValueError, match="only a 2-D tile has a transpose"):
        TVLayout(Layout((32, 4), (4, 1)), (4, 4, 8)).transposed()


# ---------------------------------------------------------------- an mma split over the block's warps


@pytest.mark.parametrize("m, n, k, warps", [(64, 64, 32, 4), (128, 64, 16, 8), (16, 32, 16, 4), (32, 16, 32, 2),
                                            (64, 128, 32, 16)])
def test_an_mma_split_over_the_warps_covers_its_tiles(m, n, k, warps):
    """Each warp's part of C is whole atoms and every element of C has one holder per copy of the grid;
    a thread's A rows and B columns are exactly those of its C elements, at every K step."""
    from tilec.layout import MMA_ATOMS
    from tilec.passes.fragments import mma_fragment
    from tilec.passes.tile_layout import warp_grid

    atom = MMA_ATOMS["mma_m16n8k16_f16"]
    grid = warp_grid(m, n, warps, atom)
    assert grid is not None and grid[0] * grid[1] * grid[2] == warps
    fa = mma_fragment(atom, "A", (m, k), False, warps=grid)
    fb = mma_fragment(atom, "B", (k, n), True, warps=grid)
    fc = mma_fragment(atom, "C", (m, n), False, warps=grid)
    held = np.zeros((m, n), int)
    for t in range(fc.tv.num_threads):
        for v in range(fc.num_values):
            held[fc.coord(t, v)] += 1
    assert (held == grid[2]).all()
    for t in range(fc.tv.num_threads):
        for mi in range(fc.tiles[0]):
            for ni in range(fc.tiles[1]):
                c_rows = {fc.coord(t, v)[0] for v in fc.atom_value_range(mi, ni)}
                c_cols = {fc.coord(t, v)[1] for v in fc.atom_value_range(mi, ni)}
                for ki in range(fa.tiles[1]):
                    # the warp's atom (mi, ni, ki): its lanes' A rows and B columns are C's rows and columns
                    warp = range(t // 32 * 32, t // 32 * 32 + 32)
                    a_rows = {fa.coord(u, v)[0] for u in warp for v in fa.atom_value_range(mi, ki)}
                    b_cols = {fb.coord(u, v)[1] for u in warp for v in fb.atom_value_range(ni, ki)}
                    w_rows = {fc.coord(u, v)[0] for u in warp for v in fc.atom_value_range(mi, ni)}
                    w_cols = {fc.coord(u, v)[1] for u in warp for v in fc.atom_value_range(mi, ni)}
                    assert c_rows <= w_rows and c_cols <= w_cols  # (t's are its warp's: a sanity check)
                    assert a_rows == w_rows and b_cols == w_cols
                    a_ks = {fa.coord(u, v)[1] for u in warp for v in fa.atom_value_range(mi, ki)}
                    b_ks = {fb.coord(u, v)[0] for u in warp for v in fb.atom_value_range(ni, ki)}
                    assert a_ks == b_ks == set(range(16 * ki, 16 * ki + 16))


def test_warp_grids():
    from tilec.layout import MMA_ATOMS
    from tilec.passes.tile_layout import warp_grid

    atom = MMA_ATOMS["mma_m16n8k16_f16"]
    assert warp_grid(64, 64, 4, atom) == (2, 2, 1)
    assert warp_grid(128, 64, 8, atom) == (4, 2, 1)
    assert warp_grid(16, 16, 4, atom) == (1, 2, 2)  # 16 rows: one warp along M, the rest copies
    assert warp_grid(16, 8, 4, atom) is None  # one atom: nothing to split
