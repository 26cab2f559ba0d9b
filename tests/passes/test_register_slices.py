"""tile.slice: windows of register tiles, and the mma K-step split that takes them (flash attention's
q and P held in registers). The lit test ``passes/tile-pipeline/register_slices.mlir`` shows the IR;
here the choice of registers and the meaning at every level."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilec.dialects.abi import gl_params
from tilec.interp import run
from tilec.interp.launch import parse_module
from tilec.layout import MMA_M16N8K16_F16 as ATOM
from tilec.passes.fragments import column_window, default_fragment, mma_fragment, window_values
from tilec.runtime.gl_views import GlView, expand

KERNEL = Path(__file__).resolve().parents[1] / "lit" / "passes" / "tile-pipeline" / "register_slices.mlir"


def test_window_values():
    """A window's registers are among the tile's: an A operand's K atoms of a wider A tile, and (flash
    attention's P) two accumulator atoms of an mma's C tile read as the next mma's A."""
    a16 = mma_fragment(ATOM, "A", (16, 16))
    assert window_values(mma_fragment(ATOM, "A", (16, 64)), a16, (0, 16)) == list(range(8, 16))
    assert window_values(mma_fragment(ATOM, "C", (16, 32)), a16, (0, 16)) == list(range(8, 16))
    assert window_values(default_fragment((16, 64)), a16, (0, 32)) == list(range(16, 24))
    # B given K x N (transposed): its lanes hold columns where A's hold rows
    assert window_values(mma_fragment(ATOM, "A", (16, 64)), mma_fragment(ATOM, "B", (16, 16), transposed=True),
                         (0, 16)) is None


@pytest.mark.parametrize("dims", [(16, 256), (32, 256), (16, 128), (64, 128), (32, 64)])
@pytest.mark.parametrize("cols", [8, 32, 64])
def test_column_windows_of_accumulators(dims, cols):
    """``column_window`` (tile-bulk-store's chunks): for an mma C tile, the window of ``cols`` columns at
    every multiple of ``cols`` holds each of its elements once, in some lane among that lane's tile values
    (``window_values``), at the window's own coordinates; 12 columns split the atoms' 8 and have none."""
    tile = mma_fragment(ATOM, "C", dims, name="acc")
    rows, width = dims
    for c0 in range(0, width, cols):
        window = column_window(tile, c0, cols)
        assert window is not None and window.dims == (rows, cols)
        picked = window_values(tile, window, (0, c0))
        assert picked is not None
        seen = {window.coord(lane, v) for lane in range(32) for v in range(window.num_values)}
        assert seen == {(r, c) for r in range(rows) for c in range(cols)}
        for lane in range(32):
            for v, u in enumerate(picked):
                r, c = window.coord(lane, v)
                assert tile.coord(lane, u) == (r, c + c0)
    assert column_window(tile, 0, 12) is None and column_window(tile, width - 8, 16) is None


def _tile_opt(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tilec.tools.tile_opt", str(KERNEL), *args],
                          capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.parametrize("pipeline", ["", "tile-pipeline{stages=1}", "tile-pipeline{stages=1},tile-layout,tile-distribute"])
def test_sliced_mmas_mean_the_same(pipeline):
    """The kernel of the lit test at tile level, with its mmas split into slices and loads, and lane by
    lane after tile-distribute: O = softmax-free P @ V with P = q @ K^T, against float64."""
    module = parse_module(_tile_opt(*(["-p", pipeline] if pipeline else [])))
    fn = next(op for op in module.walk() if op.name == "func.func")
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) * 0.5 for shape in ((16, 64), (32, 64), (32, 64)))
    o = np.full((16, 64), np.nan, np.float32)
    if "tile-distribute" in pipeline:
        views = [GlView(x, x.shape, (x.shape[1], 1)) for x in (q, k, v, o)]
        run(module, "attention", *expand(gl_params(fn), *views, signature_length=len(fn.args)), grid=(1, 1, 1))
    else:
        run(module, "attention", q, k, v, o)
    s = q.astype(np.float64) @ k.astype(np.float64).T
    p = s.astype(np.float16).astype(np.float64)
    want = p @ v.astype(np.float64)  # %again's S is stored first, then O over it
    assert np.abs(o - want).max() <= 2e-2 * np.abs(want).max()


def test_a_window_the_lanes_do_not_hold_is_converted_first():
    """A tile whose fragment (in its type) does not hold the window's values: tile-layout converts it
    to the mma operand's fragment before the slice."""
    text = """
func.func @k(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %r = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x32xf16, ((32,1),(16,1)):((1,0),(32,0))>
  %w = tile.slice %r[0, 16] : !tile.rt<16x32xf16, ((32,1),(16,1)):((1,0),(32,0))> -> !tile.rt<16x16xf16>
  %rb = tile.load %b[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x8xf16>
  %z = tile.zeros : !tile.rt<16x8xf32>
  %d = tile.mma %w, %rb, %z : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %d, %c[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
"""
    done = subprocess.run([sys.executable, "-m", "tilec.tools.tile_opt", "-p", "tile-layout"], input=text,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    convert = next(i for i, line in enumerate(lines) if "tile.convert_layout %r" in line)
    assert "tile.slice" in lines[convert + 1]
    module = parse_module(done.stdout)  # and it means the same
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((16, 32)).astype(np.float16), rng.standard_normal((16, 8)).astype(np.float16)
    c = np.full((16, 8), np.nan, np.float32)
    run(module, "k", a, b, c)
    assert np.allclose(c, a[:, 16:].astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
