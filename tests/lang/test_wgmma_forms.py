"""tl.wgmma's forms beyond the examples, each checked in the lane interpreter (after tile-distribute)
against float64: a transposed B's later bands, a register A loaded from global memory (a layout
conversion to the A fragment) over two K steps, K loops of async wgmmas (and the one tile-pipeline
refuses: a wgmma left running while the next K tile overwrites its stage), and K loops sharing tiles."""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl


def rand(*shape, dtype=np.float16, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


def rel(got, want):
    return float(np.abs(got - want).max() / np.abs(want).max())


@tl.kernel(num_warps=4)
def second_band(a, b, c, COL: tl.constexpr):
    """c = a @ b[COL:COL+32].T: B stored N x K (128 x 32), its band of 32 rows at COL."""
    sa, sb = tl.alloc((64, 32), a.dtype), tl.alloc((128, 32), b.dtype)
    tl.copy(a, (0, 0), sa)
    tl.copy(b, (0, 0), sb)
    tl.barrier()
    acc = tl.wgmma(sa, 0, sb, COL, tl.zeros((16, 32)), trans_b=True)
    tl.store(c, (tl.warp_id() * 16, 0), acc)


@pytest.mark.parametrize("col", [0, 32, 96])
def test_a_transposed_b_band_past_the_first(col):
    a, b = rand(64, 32), rand(128, 32)
    c = np.full((64, 32), np.nan, np.float32)
    second_band.interpret(a, b, c, COL=col, grid=(1,), after="tile-distribute")
    assert rel(c, a.astype(np.float64) @ b[col:col + 32].astype(np.float64).T) < 1e-5


@tl.kernel(num_warps=8)
def register_a_from_global(a, b, c, K: tl.constexpr):
    """c = a @ b, A loaded by each warp straight from global memory (two warpgroups, two K steps)."""
    sb = tl.alloc((K, 64), b.dtype)
    tl.copy(b, (0, 0), sb)
    tl.barrier()
    rows = tl.warp_id() * 16
    acc = tl.wgmma(tl.load(a, (rows, 0), shape=(16, K)), None, sb, 0, tl.zeros((16, 64)))
    tl.store(c, (rows, 0), acc)


def test_a_register_a_loaded_from_global_memory():
    a, b = rand(128, 32), rand(32, 64, seed=1)
    c = np.full((128, 64), np.nan, np.float32)
    register_a_from_global.interpret(a, b, c, K=32, grid=(1,), after="tile-distribute")
    assert rel(c, a.astype(np.float64) @ b.astype(np.float64)) < 1e-5


@tl.kernel(num_warps=4)
def k_loop_async(a, b, c, BK: tl.constexpr, PENDING: tl.constexpr):
    """c = a @ b over K tiles, each K tile's wgmma async and waited for with PENDING groups left."""
    K = a.shape[1]
    sa, sb = tl.alloc((64, BK), a.dtype), tl.alloc((BK, 64), b.dtype)
    acc = tl.zeros((16, 64))
    for k in tl.range(0, K, BK):
        tl.copy(a, (0, k), sa)
        tl.copy(b, (k, 0), sb)
        tl.barrier()
        acc = tl.wgmma_wait(tl.wgmma(sa, 0, sb, 0, acc, wait=False), PENDING)
        tl.barrier()
    tl.store(c, (tl.warp_id() * 16, 0), tl.wgmma_wait(acc, 0))


def test_a_k_loop_of_async_wgmmas():
    """Waited for in the iteration (pending 0): right, in the lane interpreter. Left running into the
    next iteration (pending 1): the next K tile's copies would overwrite the stage it reads, so
    tile-pipeline refuses it at the wgmma, naming the fix."""
    a, b = rand(64, 160), rand(160, 64, seed=2)
    c = np.full((64, 64), np.nan, np.float32)
    for stages, bulk in ((2, False), (3, False), (3, True)):
        k_loop_async.interpret(a, b, c, BK=32, PENDING=0, grid=(1,), num_stages=stages, bulk=bulk,
                               after="tile-distribute")
        assert rel(c, a.astype(np.float64) @ b.astype(np.float64)) < 1e-5
    ptx = k_loop_async.compile(a, b, c, BK=32, PENDING=0, num_stages=3, arch="sm_90a").asm["ptx"]
    assert "wgmma.wait_group.sync.aligned 0;" in ptx
    with pytest.raises(Exception, match="an async tile.wgmma reads a shared tile that the next K tile's copies overwrite"):
        k_loop_async.compile(a, b, c, BK=32, PENDING=1, num_stages=3, arch="sm_90a")


@tl.kernel(num_warps=4)
def two_loops_two_sources(a, a2, b, b2, c, BK: tl.constexpr):
    """c = a @ b + a2 @ b2 in two K loops over the same shared tiles; a2 and b2 have rows of an odd
    length, so the second loop copies element by element (two stages at most on its own)."""
    sa, sb = tl.alloc((64, BK), a.dtype), tl.alloc((BK, 64), b.dtype)
    acc = tl.zeros((16, 64))
    for k in tl.range(0, a.shape[1], BK):
        tl.copy(a, (0, k), sa)
        tl.copy(b, (k, 0), sb)
        tl.barrier()
        acc = tl.wgmma(sa, 0, sb, 0, acc)
        tl.barrier()
    for k in tl.range(0, a2.shape[1], BK):
        tl.copy(a2, (0, k), sa)
        tl.copy(b2, (k, 0), sb)
        tl.barrier()
        acc = tl.wgmma(sa, 0, sb, 0, acc)
        tl.barrier()
    tl.store(c, (tl.warp_id() * 16, 0), acc)


@pytest.mark.parametrize("stages", [2, 3])
def test_k_loops_sharing_tiles_take_one_stage_count(stages):
    """The loops share the tiles' staged buffers, so the element-copy loop takes the other's stage count."""
    a, b = rand(64, 64), rand(64, 64, seed=1)
    a2, b2 = rand(64, 31, seed=2), rand(31, 65, seed=3)  # rows of 62 and 130 bytes: element copies
    c = np.full((64, 64), np.nan, np.float32)
    two_loops_two_sources.interpret(a, a2, b, b2, c, BK=32, grid=(1,), num_stages=stages, after="tile-distribute")
    want = a.astype(np.float64) @ b.astype(np.float64) + a2.astype(np.float64) @ b2[:, :64].astype(np.float64)
    assert rel(c, want) < 1e-5


@tl.kernel(num_warps=4)
def overwritten_while_running(a, b, c, d):
    """An async wgmma reads sb; b's tile is then copied over by d's before the wait: a race."""
    sa, sb = tl.alloc((64, 64), a.dtype), tl.alloc((64, 64), b.dtype)
    tl.copy(a, (0, 0), sa)
    tl.copy(b, (0, 0), sb)
    tl.barrier()
    acc = tl.wgmma(sa, 0, sb, 0, tl.zeros((16, 64)), wait=False)
    tl.copy(d, (0, 0), sb)
    tl.barrier()
    tl.store(c, (tl.warp_id() * 16, 0), tl.wgmma_wait(acc, 0))


def test_the_lane_interpreter_finds_a_wgmma_operand_written_while_it_runs():
    """The hardware may read a wgmma's shared operands any time until the wait that completes its
    group: the lane interpreter keeps the bytes each wgmma read and checks them at that wait."""
    from tilec.interp import TileInterpreterError

    a, b, d = rand(64, 64), rand(64, 64, seed=1), rand(64, 64, seed=2)
    c = np.zeros((64, 64), np.float32)
    with pytest.raises(TileInterpreterError, match=r"operand B \(.*\) was written while the wgmma ran"):
        overwritten_while_running.interpret(a, b, c, d, grid=(1,), after="tile-distribute")
