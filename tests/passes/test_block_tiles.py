"""Tiles of the whole block: a register tile that is the same in every warp is spread over all of them.

``tile-layout`` gives such a tile a block fragment (its threads are the block's, not a warp's
lanes); ``tile-distribute`` reads thread bits past the lane from the thread index, and reduces
across the warps that share a row through shared memory. Each kernel runs in the tile
interpreter before the passes and in the lane interpreter after them (every warp of every
block, with its barriers), on ragged windows, fresh random inputs and NaN-poisoned outputs,
against float64 references; a few go on to PTX that ptxas assembles.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilec.dialects.context import make_context
from tilec.interp import run
from tilec.passes.fragments import block_fragment
from tilec.passes.tile_layout import TileLayoutPass
from tilec.passes.uniformity import warp_varying

from tests.passes.test_tile_distribute_algebra import (
    REDUCE,
    _assembles,
    _lower,
    _parse,
    _rel,
    _view,
    reduction_reference,
)


def _launch(warps: int, grid: str = "?") -> str:
    return f"attributes {{tile.launch = #tile.launch<grid = [{grid}, 1, 1], block = [{32 * warps}, 1, 1], smem = 0>}}"


def _run_both(text: str, inputs, outputs, grid) -> list[list[np.ndarray]]:
    results = []
    for module, lowered in ((_parse(text), False), (_lower(text), True)):
        outs = [np.full_like(o, np.nan) for o in outputs]
        args = [a for x in (*inputs, *outs) for a in (_view(x) if lowered else [x])]
        run(module, "k", *args, grid=grid)
        results.append(outs)
    return results


def _block_type(rows: int, cols: int, warps: int, elem: str = "f32") -> str:
    """The type tile-layout gives a tile of the block (the narrowest element of its class: ``elem``)."""
    frag = block_fragment((rows, cols), 32 * warps, 16 // (2 if elem in ("f16", "bf16") else 4))
    return f"!tile.rt<{rows}x{cols}x{elem}, {frag.layout}>"


def _fragments(text: str) -> dict[str, str]:
    module = _parse(text)
    TileLayoutPass().apply(make_context(), module)
    return {r.name_hint: str(r.type) for op in module.walk() for r in op.results if r.name_hint}


@pytest.mark.parametrize("warps, rows, cols", [(4, 2, 512), (8, 1, 1024), (4, 16, 256), (2, 64, 64)])
@pytest.mark.parametrize("orientation", ["row", "col"])
@pytest.mark.parametrize("kind", sorted(REDUCE))
@pytest.mark.parametrize("accumulate", [False, True], ids=["plain", "into"])
def test_block_reductions(warps, rows, cols, orientation, kind, accumulate):
    """``v = reduce(x)`` (or ``combine(acc, reduce(x))``) of a tile of the block, stored, and broadcast
    back as ``x - v``: partials combined in registers, over lanes, then over warps in shared memory."""
    rt, n = f"!tile.rt<{rows}x{cols}xf32>", rows if orientation == "row" else cols
    rv = f"!tile.rv<{n}xf32, {orientation}>"
    other = {"sum": "0.0", "max": "0xFFF0000000000000", "min": "0x7FF0000000000000"}[kind]
    origin = "%r0, %c0" if orientation == "row" else "%c0, %r0"
    acc_line = f"  %a = tile.load %acc[%r0] : !tile.gl<f32, [?]> -> {rv}\n" if accumulate else ""
    into = " into %a" if accumulate else ""
    text = f"""
func.func @k(%x: !tile.gl<f32, [?, ?]>, %acc: !tile.gl<f32, [?]>, %v: !tile.gl<f32, [?]>, %d: !tile.gl<f32, [?, ?]>) {_launch(warps)} {{
  %c0 = arith.constant 0 : index
  %blk = tile.block_id x
  %cn = arith.constant {n} : index
  %r0 = arith.muli %blk, %cn : index
  %t = tile.load %x[{origin}] other({other} : f64) : !tile.gl<f32, [?, ?]> -> {rt}
{acc_line}  %r = tile.{orientation}_{kind} %t{into} : {rt} -> {rv}
  tile.store %r, %v[%r0] : {rv} -> !tile.gl<f32, [?]>
  %b = tile.broadcast %r : {rv} -> {rt}
  %y = tile.sub %t, %b : {rt}
  tile.store %y, %d[{origin}] : {rt} -> !tile.gl<f32, [?, ?]>
  func.return
}}"""
    assert _fragments(text)["t"] == str(_block_type(rows, cols, warps))
    rng = np.random.default_rng()
    blocks = 2
    # ragged: the last block's window reaches past the view along the reduced axis and the kept one
    m, k = (blocks * rows - 1, cols - min(3, cols // 2)) if orientation == "row" else \
        (rows - min(3, rows // 2), blocks * cols - 1)
    x = rng.standard_normal((m, k)).astype(np.float32)
    acc, want, want_d = reduction_reference(rng, x, orientation, kind, accumulate)
    length = len(acc)
    # a sum's rounding grows with the magnitudes summed, not with the result (which may cancel to ~0)
    scale = np.abs(x).sum(axis=1 if orientation == "row" else 0).max() + np.abs(acc).max() if kind == "sum" else \
        np.abs(want).max()
    for vout, dout in _run_both(text, [x, acc], [np.zeros(length, np.float32), np.zeros((m, k), np.float32)],
                                (blocks, 1, 1)):
        assert np.abs(vout - want).max() / scale < 1e-6
        assert _rel(dout, want_d) < 1e-5


def test_warp_varying_values():
    """What depends on the warp (data, a carried value, a branch on it) is warp-varying; a tile that
    stays the same in every warp is not, and only it becomes a tile of the block."""
    text = f"""
func.func @k(%x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>) {_launch(4)} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %blk = tile.block_id x
  %warp = tile.warp_id
  %row = arith.addi %blk, %warp : index
  %same = tile.load %x[%blk, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<1x256xf32>
  %mine = tile.load %x[%row, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<1x256xf32>
  %carried = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %c0) -> (index) {{
    %next = arith.addi %acc, %warp : index
    scf.yield %next : index
  }}
  %late = tile.load %x[%carried, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<1x256xf32>
  %is0 = arith.cmpi eq, %warp, %c0 : index
  %chosen = scf.if %is0 -> (!tile.rt<1x256xf32>) {{
    scf.yield %late : !tile.rt<1x256xf32>
  }} else {{
    scf.yield %late : !tile.rt<1x256xf32>
  }}
  %sum = tile.add %same, %same : !tile.rt<1x256xf32>
  tile.store %sum, %y[%blk, %c0] : !tile.rt<1x256xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %mine, %y[%row, %c0] : !tile.rt<1x256xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %late, %y[%row, %c0] : !tile.rt<1x256xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %chosen, %y[%row, %c0] : !tile.rt<1x256xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}}"""
    module = _parse(text)
    fn = next(iter(module.ops))
    names = {v.name_hint for v in warp_varying(fn) if v.name_hint}
    assert {"row", "mine", "carried", "late", "is0", "chosen", "next", "acc"} <= names
    assert not names & {"same", "sum", "blk"}
    frags = _fragments(text)
    assert frags["sum"] == frags["same"] == "!tile.rt<1x256xf32, (128,2):(2,1)>"
    assert all(frags[n].startswith("!tile.rt<1x256xf32, (32,") for n in ("mine", "late", "chosen"))


def test_block_tile_ptx_assembles():
    """The block softmax (cross-warp reductions, block-wide scratch) through ptxas for sm_80 and sm_90."""
    rt, rv = "!tile.rt<1x1024xf32>", "!tile.rv<1xf32, row>"
    _assembles(f"""
func.func @k(%x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>) {_launch(8)} {{
  %c0 = arith.constant 0 : index
  %blk = tile.block_id x
  %t = tile.load %x[%blk, %c0] other(0xFFF0000000000000 : f64) : !tile.gl<f32, [?, ?]> -> {rt}
  %m = tile.row_max %t : {rt} -> {rv}
  %e = tile.exp %t : {rt}
  %s = tile.row_sum %e : {rt} -> {rv}
  %sb = tile.broadcast %s : {rv} -> {rt}
  %p = tile.div %e, %sb : {rt}
  tile.store %p, %y[%blk, %c0] : {rt} -> !tile.gl<f32, [?, ?]>
  func.return
}}""")
