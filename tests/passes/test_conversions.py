"""tile.convert_layout between any two fragments of one tile, in the lane interpreter.

Every ordered pair of a set of fragments of a 16x32 f32 tile (m16n8k16's C atom, a SIMT lane grid,
rows along the lanes, one column a lane, and two tiles of a two-warp block) is converted and
stored: the output must equal the input (fresh random values, NaN-poisoned output). The path the
layout algebra proves for the pair (none, a renumbering, shuffles, shared memory) is checked too:
a pair with a shuffle plan (bit-linear source lanes, at most 4 shuffles a value) never touches
shared memory, and a block tile goes through it when a thread needs a value of another warp.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.passes.test_tile_distribute_algebra import _lower, _view
from tilec.interp import run
from tilec.layout import MMA_M16N8K16_F16, Layout, TVLayout
from tilec.passes.fragments import Fragment, block_fragment, fma_fragment, mma_fragment, row_major_fragment
from tilec.passes.tile_distribute.convert import lane_permutation, shuffle_plan

DIMS = (16, 32)
WARP_FRAGMENTS = {
    "mma_c": mma_fragment(MMA_M16N8K16_F16, "C", DIMS),
    "simt": fma_fragment("C", DIMS, (4, 8), (4, 4)),
    "rows": row_major_fragment(DIMS),
    "columns": None,  # lane t holds column t, all 16 rows
    "row_lanes": None,  # lane t holds row t % 16, columns 16 (t // 16) .. + 15
}
BLOCK_FRAGMENTS = {
    "block": block_fragment(DIMS, 64, 4),
    "block_rows": None,  # warp w holds rows 8w .. 8w + 7, a lane a column of them
}


def _layout(name: str) -> Layout:
    frag = {**WARP_FRAGMENTS, **BLOCK_FRAGMENTS}[name]
    if frag is not None:
        return frag.layout
    if name == "columns":
        return Layout((32, 16), (16, 1))
    if name == "row_lanes":
        return Layout(((16, 2), 16), ((1, 256), 16))
    return Layout(((32, 2), 8), ((16, 8), 1))


def _kernel(src: Layout, dst: Layout, threads: int) -> str:
    a, b = f"!tile.rt<16x32xf32, {src}>", f"!tile.rt<16x32xf32, {dst}>"
    return f"""
func.func @k(%g: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [{threads}, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %x = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> {a}
  %y = tile.convert_layout %x : {a} -> {b}
  tile.store %y, %o[%c0, %c0] : {b} -> !tile.gl<f32, [?, ?]>
  func.return
}}"""


def _path(module) -> str:
    names = [op.name for op in module.walk()]
    if "frag.shared" in names:
        return "shared"
    return "shuffles" if "frag.shfl" in names else "registers"


@pytest.mark.parametrize("src, dst", [p for group in (WARP_FRAGMENTS, BLOCK_FRAGMENTS)
                                      for p in itertools.permutations(group, 2)])
def test_every_pair_converts(src, dst):
    threads = 64 if src in BLOCK_FRAGMENTS else 32
    module = _lower(_kernel(_layout(src), _layout(dst), threads))
    x = np.random.default_rng().standard_normal(DIMS).astype(np.float32)
    out = np.full(DIMS, np.nan, np.float32)
    run(module, "k", *_view(x), *_view(out))
    np.testing.assert_array_equal(out, x)
    path = _path(module)
    if threads == 32:
        a, b = (Fragment(DIMS, TVLayout(_layout(n), DIMS)) for n in (src, dst))
        if lane_permutation(a, b) is not None:
            assert path == "registers"  # e.g. rows of one column a lane, as "columns" spells it
        else:
            assert path == ("shuffles" if shuffle_plan(a, b) is not None else "shared")
    else:
        # the block tile runs along the rows in both warps; block_rows gives each warp 8 rows
        assert path == "shared"


@pytest.mark.parametrize("src, dst, shuffles", [("simt", "rows", 64), ("rows", "simt", 64), ("columns", "simt", 64),
                                                ("row_lanes", "columns", None), ("mma_c", "rows", None)])
def test_shuffle_counts(src, dst, shuffles):
    """The SIMT grid to rows: four shuffles a value (its lanes hold four candidates). A transpose within
    the warp has no cheap plan (every lane reads 16 different values of one lane): shared memory."""
    plan = shuffle_plan(*(Fragment(DIMS, TVLayout(_layout(n), DIMS)) for n in (src, dst)))
    assert (None if plan is None else sum(step.shuffles for step in plan)) == shuffles


@pytest.mark.parametrize("src, dst", [("simt", "rows"), ("columns", "simt")])
def test_shuffle_plans_name_their_lanes(src, dst):
    """Every value of the new fragment comes from a lane (and a value of it) the plan names."""
    src, dst = (Fragment(DIMS, TVLayout(_layout(n), DIMS)) for n in (src, dst))
    assert lane_permutation(src, dst) is None
    plan = shuffle_plan(src, dst)
    assert plan is not None and len(plan) == dst.num_values
    for v, step in enumerate(plan):
        for lane in range(32):
            source = step.base + sum(f(lane) for f in step.fields)
            reader_index = step.index_base + sum(f(lane) for f in step.index_fields)
            if step.sender_selects:  # the source computes the index from its own lane
                reader_index = step.index_base + sum(f(source) for f in step.index_fields)
            assert src.coord(source, reader_index) == dst.coord(lane, v)


def test_coalesced_vector_load_then_shuffles():
    """ThunderKittens' vector load (seed 001): consecutive lanes load consecutive elements (the vector's
    fragment given as the spread one), then shuffles take each value to the lanes of the tile that
    need it (tile-layout converts the vector where it is broadcast; one shfl.sync.idx a value)."""
    spread = "(32,2):(1,32)"
    text = f"""
func.func @k(%w: !tile.gl<f32, [?]>, %x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>)
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %v = tile.load %w[%c0] : !tile.gl<f32, [?]> -> !tile.rv<64xf32, col, {spread}>
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32>
  %b = tile.broadcast %v : !tile.rv<64xf32, col, {spread}> -> !tile.rt<16x64xf32>
  %s = tile.mul %t, %b : !tile.rt<16x64xf32>
  tile.store %s, %y[%c0, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}}"""
    module = _lower(text)
    names = [op.name for op in module.walk()]
    assert names.count("frag.shfl") == 16 and "frag.shared" not in names
    rng = np.random.default_rng()
    w, x = rng.standard_normal(64).astype(np.float32), rng.standard_normal((16, 64)).astype(np.float32)
    out = np.full((16, 64), np.nan, np.float32)
    run(module, "k", *_view(w), *_view(x), *_view(out))
    np.testing.assert_array_equal(out, x * w[None, :])


@pytest.mark.parametrize("src, dst", [("row_lanes", "columns"), ("mma_c", "rows")])
def test_warp_tiles_in_a_block_of_two_warps(src, dst):
    """Each of two warps holds a whole copy of the tile: a conversion through shared memory takes a
    scratch tile per warp, at the warp's (uniform) index; both warps get the whole tile back."""
    module = _lower(_kernel(_layout(src), _layout(dst), 64))
    assert _path(module) == "shared"
    x = np.random.default_rng(2).standard_normal(DIMS).astype(np.float32)
    out = np.full(DIMS, np.nan, np.float32)
    run(module, "k", *_view(x), *_view(out))
    np.testing.assert_array_equal(out, x)
