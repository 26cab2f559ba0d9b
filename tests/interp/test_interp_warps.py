"""Per-warp execution: barriers that really synchronise, and async copies that land at their wait."""

from __future__ import annotations

import numpy as np
import pytest
from interp_util import randn

from tilec.interp import TileInterpreterError, copy_owner_mask, parse_module, run, uses_per_warp_execution
from tilec.layout import parse

ST = "!tile.st<64x64xf32>"
GL = "!tile.gl<f32, [?, ?]>"
# Warp w copies rows 16w..16w+15 (thread (tm, tn) = 32 tm + tn owns a 16 x 2 block) ...
BY_ROWS = "thr <(4,32):(32,1)> val <(16,2):(2,1)>"
# ... and columns 16w..16w+15 (thread (tm, tn) = tm + 4 tn: warp w holds tn in 8w..8w+7).
BY_COLS = "thr <(4,32):(1,4)> val <(16,2):(2,1)>"


def exchange(barrier: bool) -> str:
    return f"""
func.func @exchange(%src: {GL}, %dst: {GL}, %wid: {GL})
    attributes {{tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 16384>}} {{
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %bx = tile.block_id x
  %row = arith.muli %bx, %c64 : index
  %w = tile.warp_id
  %t = tile.thread_id x
  %s = tile.alloc : {ST}
  tile.copy %src[%row, %c0] -> %s {BY_ROWS} : {GL} -> {ST}
  {"tile.barrier" if barrier else ""}
  tile.copy %s -> %dst[%row, %c0] {BY_COLS} : {ST} -> {GL}
  %wf = arith.index_cast %w : index to i64
  %wv = arith.sitofp %wf : i64 to f32
  %tf = arith.index_cast %t : index to i64
  %tv = arith.sitofp %tf : i64 to f32
  %one = tile.fill %wv : f32 -> !tile.rt<1x1xf32>
  %two = tile.fill %tv : f32 -> !tile.rt<1x1xf32>
  %c1 = arith.constant 1 : index
  tile.store %one, %wid[%bx, %w] : !tile.rt<1x1xf32> -> {GL}
  %col = arith.addi %w, %c64 : index
  tile.store %two, %wid[%bx, %col] : !tile.rt<1x1xf32> -> {GL}
  tile.barrier
  func.return
}}
"""


def test_copy_ownership_masks():
    rows = [copy_owner_mask(parse("(4,32):(32,1)"), parse("(16,2):(2,1)"), (64, 64), w, 128) for w in range(4)]
    cols = [copy_owner_mask(parse("(4,32):(1,4)"), parse("(16,2):(2,1)"), (64, 64), w, 128) for w in range(4)]
    for w in range(4):
        want = np.zeros((64, 64), bool)
        want[16 * w : 16 * w + 16] = True
        assert np.array_equal(rows[w], want)
        assert np.array_equal(cols[w], want.T)


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_four_warps_exchange_through_shared_memory(rng, order):
    module = parse_module(exchange(barrier=True))
    assert uses_per_warp_execution(module, "exchange")
    src = randn(rng, (128, 64), np.float32)
    dst = np.full_like(src, np.nan)
    wid = np.full((2, 128), -1, np.float32)
    run(module, "exchange", src, dst, wid, grid=(2, 1, 1), warp_order=order)
    assert np.array_equal(dst, src), f"seed {rng.seed}"
    assert np.array_equal(wid[:, :4], [[0, 1, 2, 3]] * 2), "each warp sees its own warp id"
    assert np.array_equal(wid[:, 64:68], [[0, 32, 64, 96]] * 2), "thread_id is the warp's first lane"


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_missing_barrier_reads_unwritten_shared_memory(rng, order):
    src = randn(rng, (64, 64), np.float32)
    dst = np.zeros_like(src)
    run(parse_module(exchange(barrier=False)), "exchange", src, dst, np.zeros((1, 128), np.float32), grid=1, warp_order=order)
    first = 0 if order == "ascending" else 3
    # The first warp runs to its end before the others write their rows: its columns hold NaN.
    mine = dst[:, 16 * first : 16 * first + 16]
    assert np.isnan(mine).sum() == 48 * 16, "the first warp must read the rows nobody wrote yet"
    assert np.array_equal(mine[16 * first : 16 * first + 16], src[16 * first : 16 * first + 16, 16 * first : 16 * first + 16])


def test_warps_diverging_on_a_barrier_are_reported():
    text = """
    func.func @k() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1]>} {
      %w = tile.warp_id
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %w, %c0 : index
      scf.if %first {
        tile.barrier
      }
      func.return
    }
    """
    with pytest.raises(TileInterpreterError, match=r"'tile.barrier'.*diverge") as info:
        run(parse_module(text), "k")
    assert "warp(s) 1 finished" in str(info.value) and "block (0, 0, 0), warp 0" in str(info.value)


def test_warps_at_different_barriers_are_reported():
    text = """
    func.func @k() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1]>} {
      %w = tile.warp_id
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %w, %c0 : index
      scf.if %first {
        tile.barrier
      } else {
        tile.barrier
      }
      func.return
    }
    """
    with pytest.raises(TileInterpreterError, match="different barriers"):
        run(parse_module(text), "k")


def test_a_failing_warp_is_the_error_reported():
    text = """
    func.func @k(%x: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 16>} {
      %w = tile.warp_id
      %c2 = arith.constant 2 : index
      %bad = arith.cmpi eq, %w, %c2 : index
      tile.barrier
      scf.if %bad {
        %s = tile.alloc : !tile.st<8x8xf32>
      }
      tile.barrier
      func.return
    }
    """
    with pytest.raises(TileInterpreterError, match=r"'tile.alloc'.*\[block \(0, 0, 0\), warp 2\].*smem = 16"):
        run(parse_module(text), "k", np.zeros((1, 1), np.float32))


# -- async copies ------------------------------------------------------------------------


def pipeline(wait: str) -> str:
    st = "!tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>"
    gl = "!tile.gl<f16, [?, ?]>"
    return f"""
func.func @k(%src: {gl}, %dst: {gl}) attributes {{tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 8192>}} {{
  %bx = tile.block_id x
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %row = arith.muli %bx, %c32 : index
  %s0 = tile.alloc : {st}
  %s1 = tile.alloc : {st}
  %row1 = arith.addi %row, %c32 : index
  tile.async_copy %src[%row, %c0] -> %s0 : {gl} -> {st}
  tile.async_commit
  tile.async_copy %src[%row1, %c0] -> %s1 : {gl} -> {st}
  tile.async_commit
  {wait}
  tile.barrier
  %r0 = tile.load %s0 : {st} -> !tile.rt<32x64xf16>
  tile.store %r0, %dst[%row, %c0] : !tile.rt<32x64xf16> -> {gl}
  tile.async_wait 0
  tile.barrier
  %r1 = tile.load %s1 : {st} -> !tile.rt<32x64xf16>
  tile.store %r1, %dst[%row1, %c0] : !tile.rt<32x64xf16> -> {gl}
  func.return
}}
"""


def test_async_wait_one_lands_the_older_group(rng):
    src = randn(rng, (64, 64), np.float16)
    dst = np.zeros_like(src)
    run(parse_module(pipeline("tile.async_wait 1")), "k", src, dst, grid=1)
    assert np.array_equal(dst, src), f"seed {rng.seed}"


def test_missing_async_wait_is_detected_in_deferred_mode(rng):
    module = parse_module(pipeline(""))
    src = randn(rng, (64, 64), np.float16)
    dst = np.zeros_like(src)
    run(module, "k", src, dst, grid=1)  # deferred is the default
    assert np.isnan(dst[:32]).all(), "reading before the wait must see unwritten (NaN) shared memory"
    assert np.array_equal(dst[32:], src[32:])
    # Eager completion is a valid schedule too, and hides the bug.
    dst2 = np.zeros_like(src)
    run(module, "k", src, dst2, grid=1, async_mode="eager")
    assert np.array_equal(dst2, src)


def test_wait_leaves_uncommitted_copies_in_flight(rng):
    text = """
    func.func @k(%src: !tile.gl<f32, [?, ?]>) -> !tile.rt<8x8xf32> {
      %c0 = arith.constant 0 : index
      %s = tile.alloc : !tile.st<8x8xf32>
      tile.async_copy %src[%c0, %c0] -> %s : !tile.gl<f32, [?, ?]> -> !tile.st<8x8xf32>
      tile.async_wait 0
      %r = tile.load %s : !tile.st<8x8xf32> -> !tile.rt<8x8xf32>
      func.return %r : !tile.rt<8x8xf32>
    }
    """
    (r,) = run(parse_module(text), "k", randn(rng, (8, 8), np.float32))
    assert np.isnan(r).all(), "cp.async.wait_group only waits for committed groups"


def test_per_warp_async_copies_are_per_warp(rng):
    """Each warp waits only for its own copies: the barrier after the waits publishes all rows."""
    st, gl = "!tile.st<64x64xf32>", "!tile.gl<f32, [?, ?]>"
    text = f"""
    func.func @k(%src: {gl}, %dst: {gl}) attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 16384>}} {{
      %c0 = arith.constant 0 : index
      %w = tile.warp_id
      %s = tile.alloc : {st}
      tile.async_copy %src[%c0, %c0] -> %s {BY_ROWS} : {gl} -> {st}
      tile.async_commit
      tile.async_wait 0
      tile.barrier
      tile.copy %s -> %dst[%c0, %c0] {BY_COLS} : {st} -> {gl}
      func.return
    }}
    """
    src = randn(rng, (64, 64), np.float32)
    dst = np.full_like(src, np.nan)
    run(parse_module(text), "k", src, dst)
    assert np.array_equal(dst, src), f"seed {rng.seed}"


def test_a_warp_that_never_reaches_a_barrier_times_out():
    text = """
    func.func @k() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1]>} {
      %w = tile.warp_id
      scf.while () : () -> () {
        %t = arith.constant true
        scf.condition(%t)
      } do {
        scf.yield
      }
      tile.barrier
      func.return
    }
    """
    with pytest.raises(TileInterpreterError, match=r"deadlock: warp 1 waited 0.2 s to start; warp 0 has been running"):
        run(parse_module(text), "k", barrier_timeout=0.2)
