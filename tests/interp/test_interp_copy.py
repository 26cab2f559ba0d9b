"""Tile copies over a grid: global → shared (swizzled) → registers → global, ragged edges included."""

from __future__ import annotations

import numpy as np
import pytest
from interp_util import SWIZZLED_64, randn

from tilec.interp import ExecContext, make_interpreter, parse_module, run, shared_offsets
from tilec.interp.memory import GlobalView
from tilec.layout import ComposedLayout, Layout, Swizzle, parse

ST = f"!tile.st<64x64xf16, {SWIZZLED_64}>"
GL = "!tile.gl<f16, [?, ?]>"

COPY = f"""
func.func @copy(%src: {GL}, %dst: {GL}) attributes {{tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 8192>}} {{
  %bx = tile.block_id x
  %by = tile.block_id y
  %c64 = arith.constant 64 : index
  %row = arith.muli %by, %c64 : index
  %col = arith.muli %bx, %c64 : index
  %s = tile.alloc : {ST}
  tile.copy %src[%row, %col] -> %s thr <(16,8):(8,1)> val <(1,8):(0,1)> : {GL} -> {ST}
  tile.barrier
  %r = tile.load %s : {ST} -> !tile.rt<64x64xf16>
  tile.store %r, %dst[%row, %col] : !tile.rt<64x64xf16> -> {GL}
  func.return
}}
"""


@pytest.fixture(scope="module")
def copy_module():
    return parse_module(COPY)


def test_copy_exact_multiple(copy_module, rng):
    src = randn(rng, (128, 192), np.float16)
    dst = np.full_like(src, np.nan)
    run(copy_module, "copy", src, dst, grid=(3, 2, 1))
    assert np.array_equal(dst, src), f"seed {rng.seed}"


def test_copy_ragged_reads_zero_and_drops_writes(copy_module, rng):
    # 100 x 70 with 64 x 64 tiles: the last row and column of blocks hang over the edge.
    src = randn(rng, (100, 70), np.float16)
    dst = np.full((100, 70), np.nan, np.float16)
    run(copy_module, "copy", src, dst, grid=(2, 2, 1))
    assert np.array_equal(dst, src), f"seed {rng.seed}"

    # Into a larger destination: what the source does not have reads as zero.
    big = np.full((128, 128), np.nan, np.float16)
    run(copy_module, "copy", src, big, grid=(2, 2, 1))
    assert np.array_equal(big[:100, :70], src), f"seed {rng.seed}"
    assert not big[100:].any() and not big[:, 70:].any(), "out-of-range reads must give zero"

    # Into a smaller destination: writes outside it are dropped, memory around it untouched.
    backing = np.full((64, 128), 7, np.float16)
    small = backing[:50, :60]
    run(copy_module, "copy", src, small, grid=(2, 2, 1))
    assert np.array_equal(small, src[:50, :60]), f"seed {rng.seed}"
    assert (backing[50:] == 7).all() and (backing[:, 60:] == 7).all(), "a dropped write leaked"


def test_copy_non_contiguous_views(copy_module, rng):
    base = randn(rng, (300, 210), np.float16)
    src = base[::3, 1::3]  # 100 x 70, strided
    out_base = np.zeros((70, 100), np.float16)
    dst = out_base.T  # 100 x 70, column-major
    run(copy_module, "copy", src, dst, grid=(2, 2, 1))
    assert np.array_equal(dst, src), f"seed {rng.seed}"
    assert np.array_equal(out_base, src.T), "the transposed view must be written in place"


def test_shared_memory_is_physically_swizzled(copy_module, rng):
    """After the copy, element (i, j) lives at Sw<3,3,3>(64 i + j) of the block's shared buffer."""
    src = randn(rng, (64, 64), np.float16)
    dst = np.zeros_like(src)
    ctx = ExecContext()
    interp = make_interpreter(copy_module, ctx)
    fn = next(op for op in copy_module.walk() if getattr(op, "sym_name", None) and op.sym_name.data == "copy")
    gl = fn.function_type.inputs.data[0]
    interp.call_op(fn, (GlobalView.bind(src, gl, "src"), GlobalView.bind(dst, gl, "dst")))
    (tile,) = ctx.shared.tiles.values()
    sw = Swizzle(3, 3, 3)
    expected = np.empty(64 * 64, np.float16)
    for i in range(64):
        for j in range(64):
            expected[sw(64 * i + j)] = src[i, j]
    assert np.array_equal(tile.buffer, expected), f"seed {rng.seed}"
    assert not np.array_equal(tile.buffer, src.reshape(-1)), "the swizzle must move elements"
    assert np.array_equal(dst, src)


@pytest.mark.parametrize(
    "text, dims",
    [
        (SWIZZLED_64, (64, 64)),
        ("(64,64):(64,1)", (64, 64)),
        ("(64,64):(1,64)", (64, 64)),
        ("Sw<2,3,3> o 0 o (32,32):(32,1)", (32, 32)),
        ("Sw<3,3,3> o 0 o ((8,8),(8,8)):((8,512),(1,64))", (64, 64)),
        ("(16,(4,8)):(4,(1,64))", (16, 32)),
        ("(128):(1)", (128,)),
    ],
)
def test_shared_offsets_match_the_layout(text, dims):
    layout = parse(text)
    offsets = shared_offsets(layout, dims)
    for idx in np.ndindex(*dims):
        crd = idx[0] if len(dims) == 1 else idx
        assert offsets[idx] == layout(crd), f"{text} at {idx}"
    assert offsets.max() + 1 == layout.cosize()
    assert shared_offsets(layout, dims) is offsets, "offset tables are cached"
    assert isinstance(layout, Layout | ComposedLayout)


def test_copy_a_1d_view_through_shared(rng):
    text = """
    func.func @v(%x: !tile.gl<f32, [?]>, %y: !tile.gl<f32, [?]>) {
      %c0 = arith.constant 0 : index
      %c100 = arith.constant 100 : index
      %s = tile.alloc : !tile.st<128xf32, Sw<2,0,3> o 0 o (128):(1)>
      tile.copy %x[%c0] -> %s : !tile.gl<f32, [?]> -> !tile.st<128xf32, Sw<2,0,3> o 0 o (128):(1)>
      tile.copy %s -> %y[%c100] : !tile.st<128xf32, Sw<2,0,3> o 0 o (128):(1)> -> !tile.gl<f32, [?]>
      func.return
    }
    """
    x = randn(rng, 90, np.float32)
    y = np.full(200, -1, np.float32)
    run(parse_module(text), "v", x, y)
    assert np.array_equal(y[100:190], x) and (y[190:] == 0).all() and (y[:100] == -1).all()
