"""``tl.dot`` on tiles of the whole block (Triton's way: no ``tl.warp_id()``) is split over the warps.

tile-layout gives such an mma a grid of the block's warps (``tile.warps``), each warp multiplying its
part: the PTX of a 64x64x32 step on four warps has 16 ``mma.sync`` (a 32x32 part: 2 x 4 atoms, two
K steps), not the 64 of every warp computing all of it. Checked against float64 on the tile-level
interpreter and lane by lane after ``tile-distribute``, fresh random inputs, outputs poisoned with NaN.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl
from tilec.codegen.ptxas import find_ptxas, kernel_resources

RNG = np.random.default_rng(20261128)
STAGES = (None, "tile-distribute")


@tl.kernel(num_warps=4)
def gemm(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, DT: tl.constexpr):
    """The Triton tutorial's GEMM: a K loop of block tiles, an epilogue, ragged edges masked."""
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN))
    for k in tl.range(0, a.shape[1], BK):
        acc = tl.dot(tl.load(a, (i, k), shape=(BM, BK)).to(DT), tl.load(b, (k, j), shape=(BK, BN)).to(DT), acc)
    tl.store(c, (i, j), tl.maximum(acc * 0.5 + 1.0, 0.0))


def rounded(x, dtype):
    from tilec.interp.dtypes import round_bf16, round_tf32

    return np.asarray({"float16": lambda v: v.astype(np.float16), "bfloat16": round_bf16,
                       "float32": round_tf32}[dtype](x), np.float64)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_a_block_gemm(after, dtype):
    m, n, k = 100, 70, 65
    a, b = RNG.standard_normal((m, k)).astype(np.float32), RNG.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    gemm.interpret(a, b, c, grid=(2, 2), BM=64, BN=64, BK=32, DT=dtype, after=after)
    ref = np.maximum(rounded(a, dtype) @ rounded(b, dtype) * 0.5 + 1.0, 0.0)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 1e-5


@pytest.mark.parametrize("warps, mmas", [(1, 64), (4, 16), (8, 8)])
def test_each_warp_multiplies_its_part(warps, mmas):
    x = RNG.standard_normal((128, 128)).astype(np.float32)
    ptx = gemm.compile(x, x, x, BM=64, BN=64, BK=32, DT="float16", num_warps=warps, arch="sm_80").asm["ptx"]
    assert ptx.count("mma.sync") == mmas


@tl.kernel(num_warps=4)
def gemm16(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The same GEMM on 16-bit inputs loaded as they are: ``tile-stage`` stages both operands through
    shared memory (block copies, pipelined by ``cp.async``; ``ldmatrix`` into each warp's part)."""
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN))
    for k in tl.range(0, a.shape[1], BK):
        acc = tl.dot(tl.load(a, (i, k), shape=(BM, BK)), tl.load(b, (k, j), shape=(BK, BN)), acc)
    tl.store(c, (i, j), acc.to(c.dtype))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("warps", [1, 4, 8])
def test_a_staged_block_gemm(after, warps):
    m, n, k = 100, 136, 200
    a, b = RNG.standard_normal((m, k)).astype(np.float16), RNG.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    gemm16.interpret(a, b, c, grid=(2, 3), BM=64, BN=64, BK=32, num_warps=warps, after=after)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3


def test_staged_operands_are_copied_and_read_by_ldmatrix():
    h = RNG.standard_normal((128, 128)).astype(np.float16)
    ptx = gemm16.compile(h, h, h, BM=64, BN=64, BK=32, arch="sm_80").asm["ptx"]
    assert "cp.async" in ptx and "ldmatrix" in ptx and ptx.count("mma.sync") == 16


@tl.kernel(num_warps=4)
def tutorial_gemm(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The Triton tutorial's loop as written there: ``k`` counts K tiles, the offsets are ``k * BK``,
    and the product is added to the accumulator (``acc += tl.dot(x, y)``)."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK)):
        x = tl.load(a, (pid_m * BM, k * BK), shape=(BM, BK))
        y = tl.load(b, (k * BK, pid_n * BN), shape=(BK, BN))
        acc += tl.dot(x, y)
    tl.store(c, (pid_m * BM, pid_n * BN), acc.to(tl.float16))


@pytest.mark.parametrize("after", [None, "tile-stage", "tile-pipeline", "tile-distribute"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_tutorial_loop_is_staged(after, arch):
    """Its operands are staged like ``gemm16``'s (offsets computed from the induction variable move to
    the body's start with the copies) and the add folds into the mma: on sm_90a the block's wgmma."""
    m, n, k = 100, 90, 75
    a, b = RNG.standard_normal((m, k)).astype(np.float16), RNG.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    tutorial_gemm.interpret(a, b, c, k, grid=(2, 2), BM=64, BN=64, BK=32, arch=arch, after=after)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3


@pytest.mark.parametrize("arch, mma", [("sm_80", "mma.sync"), ("sm_90a", "wgmma.mma_async")])
def test_the_tutorial_loop_compiles_like_the_stepped_one(arch, mma):
    """The same PTX as the loop stepping by BK with ``acc = tl.dot(x, y, acc)``: copies, pipelined
    with cp.async, one accumulator (a second one would not fit at 128x256 on eight warps)."""
    h = RNG.standard_normal((512, 512)).astype(np.float16)
    cfg = dict(BM=128, BN=256, BK=64, num_warps=8, arch=arch)
    ptx = tutorial_gemm.compile(h, h, h, 512, **cfg).asm["ptx"]
    stepped = gemm16.compile(h, h, h, **cfg).asm["ptx"]
    assert "cp.async" in ptx and ptx.count(mma) == stepped.count(mma) > 0
    assert ptx.count("cp.async") == stepped.count("cp.async")


@tl.kernel(num_warps=4)
def one_dot(a, b, c, BM: tl.constexpr, BN: tl.constexpr, K: tl.constexpr):
    """A dot without a K loop: the whole K at once."""
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    tl.store(c, (i, j), tl.dot(tl.load(a, (i, 0), shape=(BM, K)), tl.load(b, (0, j), shape=(K, BN))).to(c.dtype))


@tl.kernel(num_warps=4)
def dot_per_tile(a, b, c, tiles, BM: tl.constexpr, BN: tl.constexpr, K: tl.constexpr):
    """A loop over output tiles, each one dot stored in the loop (a persistent kernel's shape): its
    copies cannot run ahead of the stores, so they are staged where they are."""
    j = tl.program_id(0) * BN
    for t in tl.range(0, tiles):
        i = t * BM
        if t % 2 == 0:
            tl.store(c, (i, j), tl.dot(tl.load(a, (i, 0), shape=(BM, K)), tl.load(b, (0, j), shape=(K, BN))).to(c.dtype))
        else:
            tl.store(c, (i, j), (-tl.dot(tl.load(a, (i, 0), shape=(BM, K)), tl.load(b, (0, j), shape=(K, BN)))).to(c.dtype))


@pytest.mark.parametrize("after", [None, "tile-stage", "tile-distribute"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_dots_outside_k_loops_are_staged(after, arch):
    m, n, k = 200, 72, 64
    a, b = RNG.standard_normal((m, k)).astype(np.float16), RNG.standard_normal((k, n)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = np.full((m, n), np.nan, np.float16)
    one_dot.interpret(a, b, c, grid=(2, 2), BM=128, BN=64, K=k, arch=arch, after=after)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3
    c = np.full((m, n), np.nan, np.float16)
    dot_per_tile.interpret(a, b, c, 4, grid=(2,), BM=64, BN=64, K=k, arch=arch, after=after)
    sign = np.where(np.arange(m) // 64 % 2 == 0, 1.0, -1.0)[:, None]
    assert np.abs(c - sign * ref).max() / np.abs(ref).max() < 2e-3


@pytest.mark.parametrize("arch, mma", [("sm_80", "ldmatrix"), ("sm_90a", "wgmma.mma_async")])
def test_a_dot_outside_a_loop_fits_in_registers(arch, mma):
    """128x128 with K 128 on four warps: A and B held whole would need 424 registers a thread; staged,
    each K step's fragments are read from shared memory as the mma goes (or wgmma reads them there)."""
    h = RNG.standard_normal((512, 512)).astype(np.float16)
    ptx = one_dot.compile(h, h, h, BM=128, BN=128, K=128, arch=arch).asm["ptx"]
    assert mma in ptx and "bar.sync" in ptx
    if find_ptxas() is not None:
        assert kernel_resources(ptx, arch)[one_dot.name].spill_stores == 0


WARPGROUP_CASES = [  # warps, BM, BN, bulk, producer
    (4, 128, 64, False, False),   # one warpgroup, two 64-row bands
    (8, 128, 128, True, False),   # two warpgroups along M, bulk tensor copies
    (8, 64, 128, True, True),     # two along N (64 columns each), a producer warpgroup
]


@pytest.mark.parametrize("after", ["tile-stage", "tile-distribute"])
@pytest.mark.parametrize("warps, bm, bn, bulk, producer", WARPGROUP_CASES)
def test_a_block_gemm_on_warpgroup_mmas(after, warps, bm, bn, bulk, producer):
    """For sm_90a, tile-stage makes the staged dot the block's ``tile.wgmma``: ragged edges, K not a
    multiple of BK, every warpgroup split, on the tile interpreter and lane by lane."""
    kernel = tl.Kernel(gemm16.fn, num_warps=warps, num_stages=2, bulk=bulk, producer=producer)
    m, n, k = 200, 136, 72
    a, b = RNG.standard_normal((m, k)).astype(np.float16), RNG.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    kernel.interpret(a, b, c, grid=(-(-m // bm), -(-n // bn)), BM=bm, BN=bn, BK=32, arch="sm_90a", after=after)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3


@pytest.mark.parametrize("warps, bm, bn, bulk, producer", WARPGROUP_CASES)
def test_the_warpgroup_mmas_in_the_ptx(warps, bm, bn, bulk, producer):
    """sm_90a: wgmmas on shared memory, no ldmatrix and no mma.sync; sm_80 keeps mma.sync."""
    kernel = tl.Kernel(gemm16.fn, num_warps=warps, num_stages=3, bulk=bulk, producer=producer)
    h = RNG.standard_normal((256, 256)).astype(np.float16)
    ptx = kernel.compile(h, h, h, BM=bm, BN=bn, BK=64, arch="sm_90a").asm["ptx"]
    bands = bm // 64 // (2 if warps == 8 and bm >= 128 else 1)
    assert ptx.count("wgmma.mma_async") == bands * 4 and "mma.sync" not in ptx and "ldmatrix" not in ptx
    assert "mma.sync" in gemm16.compile(h, h, h, BM=bm, BN=bn, BK=64, num_warps=warps, arch="sm_80").asm["ptx"]


@pytest.mark.parametrize("bm, bn, bk, warps, wgmmas", [(64, 96, 48, 4, 3), (128, 160, 32, 8, 2), (64, 24, 32, 4, 0)])
def test_warpgroup_mmas_only_where_a_descriptor_reads_the_tiles(bm, bn, bk, warps, wgmmas):
    """A staged tile whose rows are no whole number of 32-byte swizzle atoms (24 f16 columns) has no
    layout a wgmma descriptor reads: its dot stays mma.sync instead of failing in tile-distribute."""
    kernel = tl.Kernel(gemm16.fn, num_warps=warps, num_stages=2)
    m, n, k = bm + 17, bn + 9, 2 * bk + 5
    a, b = RNG.standard_normal((m, k)).astype(np.float16), RNG.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    kernel.interpret(a, b, c, grid=(-(-m // bm), -(-n // bn)), BM=bm, BN=bn, BK=bk, arch="sm_90a",
                     after="tile-distribute")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3
    ptx = kernel.compile(a, b, c, BM=bm, BN=bn, BK=bk, arch="sm_90a").asm["ptx"]
    assert ptx.count("wgmma.mma_async") == wgmmas and ("mma.sync" in ptx) == (wgmmas == 0)


@tl.kernel(num_warps=8)
def scores_softmax(q, k, o, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """S = q k^T split over 8 warps, then a row softmax whose rows span the warps (reduced through
    shared memory), stored as f16: the split accumulator meets reductions and conversions."""
    i = tl.program_id(0) * BM
    s = tl.dot(tl.load(q, (i, 0), shape=(BM, D)), tl.trans(tl.load(k, (0, 0), shape=(BN, D))))
    e = tl.exp(s - tl.max(s, axis=1)[:, None])
    tl.store(o, (i, 0), (e / tl.sum(e, axis=1)[:, None]).to(o.dtype))


@pytest.mark.parametrize("after", STAGES)
def test_a_split_accumulator_meets_reductions_across_warps(after):
    q, k = RNG.standard_normal((128, 64)).astype(np.float16), RNG.standard_normal((128, 64)).astype(np.float16)
    o = np.full((128, 128), np.nan, np.float16)
    scores_softmax.interpret(q, k, o, grid=(2,), BM=64, BN=128, D=64, after=after)
    s = q.astype(np.float64) @ k.astype(np.float64).T
    ref = np.exp(s - s.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    assert np.abs(o - ref).max() < 2e-3


def test_compiles_for_both_targets():
    x = RNG.standard_normal((128, 128)).astype(np.float32)
    h = x.astype(np.float16)
    for arch in ("sm_80", "sm_90"):
        gemm.compile(x, x, x, BM=128, BN=64, BK=32, DT="bfloat16", num_warps=8, arch=arch)
        gemm16.compile(h, h, h, BM=128, BN=128, BK=32, num_warps=8, arch=arch)
        scores_softmax.compile(h, h, h, BM=64, BN=128, D=64, arch=arch)


@tl.kernel
def narrow_parts(q, v, o, M: tl.constexpr, N: tl.constexpr):
    """Split dots whose warps' parts of B are 8 columns wide: the B fragment's column field runs across
    lane bits 2-4 and the first warp bit, which the ldmatrix addresses must split (session 28's hunt)."""
    acc = tl.zeros((M, N))
    for j in tl.range(0, q.shape[1], 16):
        acc = tl.dot(tl.load(q, (0, j), shape=(M, 16)), tl.load(v, (j, 0), shape=(16, N)), acc)
    tl.store(o, (0, 0), acc)


@pytest.mark.parametrize("m, n, warps", [(16, 16, 2), (16, 16, 4), (16, 32, 4), (16, 64, 8), (48, 64, 8)])
def test_split_parts_eight_columns_wide(m, n, warps):
    q, v = RNG.standard_normal((m, 48)).astype(np.float16), RNG.standard_normal((48, n)).astype(np.float16)
    o = np.full((m, n), np.nan, np.float32)
    narrow_parts.interpret(q, v, o, grid=(1,), M=m, N=n, num_warps=warps, after="tile-distribute")
    ref = q.astype(np.float64) @ v.astype(np.float64)
    assert np.abs(o - ref).max() / np.abs(ref).max() < 1e-5


@tl.kernel(num_warps=2)
def small_k(a, b, o):
    tl.store(o, (0, 0), tl.dot(tl.load(a, (0, 0), shape=(32, 8)), tl.load(b, (0, 0), shape=(8, 32))))  # MARK-k


def test_an_atom_that_does_not_fit_names_the_tile_and_the_line():
    """Refused while tracing, so the tile interpreter does not run what the compiler cannot."""
    x = RNG.standard_normal((32, 32)).astype(np.float16)
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if "MARK-k" in text)
    for run in (lambda: small_k.compile(x, x, x.astype(np.float32), arch="sm_80"),
                lambda: small_k.interpret(x, x, x.astype(np.float32), grid=(1,))):
        with pytest.raises(tl.LangError) as info:
            run()
        assert str(info.value).startswith(f"{__file__}:{line}:")
        assert "a 32x32x8 (MxNxK) product does not split into mma_m16n8k16_f16's 16x8x16 steps" in str(info.value)


@tl.kernel
def dot_keywords(a, c, PRECISION: tl.constexpr, OUT: tl.constexpr):
    x = tl.load(a, (0, 0), shape=(32, 32))
    tl.store(c, (0, 0), tl.dot(x, x, input_precision=PRECISION, out_dtype=OUT, max_num_imprecise_acc=None))


def test_tritons_dot_keywords():
    """What tilec does is accepted (tf32 or ieee for f32 operands, an f32, f16 or bf16 result); anything else
    is a LangError."""
    x16, x32 = RNG.standard_normal((32, 32)).astype(np.float16), RNG.standard_normal((32, 32)).astype(np.float32)
    c = np.full((32, 32), np.nan, np.float32)
    dot_keywords.interpret(x16, c, grid=(1,), PRECISION="ieee", OUT="float32")  # no f32 operands: no tf32 question
    assert np.abs(c - x16.astype(np.float64) @ x16).max() < 1e-2
    dot_keywords.interpret(x32, c, grid=(1,), PRECISION="tf32", OUT=None)
    assert 1e-5 < np.abs(c - x32.astype(np.float64) @ x32).max() < 1e-1  # tf32's 10-bit mantissas
    for after in (None, "tile-distribute"):  # ieee: f32 FMAs, exact products
        c[:] = np.nan
        dot_keywords.interpret(x32, c, grid=(1,), PRECISION="ieee", OUT=None, after=after)
        assert np.abs(c - x32.astype(np.float64) @ x32).max() < 1e-5
    for arch in ("sm_80", "sm_90a"):
        ptx = dot_keywords.compile(x32, c, PRECISION="ieee", OUT=None, arch=arch).asm["ptx"]
        assert "fma.rn.f32" in ptx and "mma.sync" not in ptx and "wgmma" not in ptx
    with pytest.raises(tl.LangError, match=r"input_precision='tf32x3'\) has no lowering"):
        dot_keywords.interpret(x32, c, grid=(1,), PRECISION="tf32x3", OUT=None)
    with pytest.raises(tl.LangError, match="out_dtype is float32, float16 or bfloat16, got tl.int32"):
        dot_keywords.interpret(x16, c, grid=(1,), PRECISION=None, OUT="int32")


@tl.kernel(num_warps=4)
def not_staged(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Loads tile-stage does not stage ahead: indices from a loop-carried offset that is not a function of
    the counter (``(off + BK) % K``: the copies cannot open the body: they are staged where they are
    read, no cp.async; ``off + BK`` alone is rewritten as one, see tests/lang/test_block_ptr.py), and a
    48-column B the block's copy cannot split (left as written)."""
    acc = tl.zeros((BM, BN))
    off = 0 * tl.program_id(0)
    for k in tl.range(0, a.shape[1], BK):
        acc = tl.dot(tl.load(a, (0, off), shape=(BM, BK)), tl.load(b, (off, 0), shape=(BK, BN)), acc)
        off = (off + BK) % a.shape[1]
    tl.store(c, (0, 0), acc)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("bn", [64, 48])
def test_loads_left_as_written(after, bn):
    a, b = RNG.standard_normal((64, 96)).astype(np.float16), RNG.standard_normal((96, bn)).astype(np.float16)
    c = np.full((64, bn), np.nan, np.float32)
    not_staged.interpret(a, b, c, grid=(1,), BM=64, BN=bn, BK=32, after=after)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 1e-5
    assert "cp.async" not in not_staged.compile(a, b, c, BM=64, BN=bn, BK=32, arch="sm_80").asm["ptx"]


@tl.kernel(num_warps=4)
def recurrence(h, w, T, BM: tl.constexpr, D: tl.constexpr):
    """Rows r + BM.. of h are rows r.. times w, r = 0, BM, ...: the loop reads what it stored an
    iteration before, so its loads must not be staged (read ahead) by tile-stage (session 28's hunt)."""
    wt = tl.load(w, (0, 0), shape=(D, D))
    for r in tl.range(0, T, BM):
        y = tl.dot(tl.load(h, (r, 0), shape=(BM, D)), wt)
        tl.barrier()
        tl.store(h, (r + BM, 0), y.to(tl.float16))
        tl.barrier()


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("stages", [None, 3])
def test_a_loop_that_reads_what_it_stored(after, stages):
    bm, d, steps = 16, 32, 4
    h = np.full(((steps + 1) * bm, d), np.nan, np.float16)
    h[:bm] = RNG.standard_normal((bm, d))
    w = (RNG.standard_normal((d, d)) / np.sqrt(d)).astype(np.float16)
    ref = np.array(h, np.float64)
    for s in range(steps):
        ref[(s + 1) * bm:(s + 2) * bm] = (ref[s * bm:(s + 1) * bm] @ w.astype(np.float64)).astype(np.float16)
    recurrence.interpret(h, w, steps * bm, grid=(1,), BM=bm, D=d, num_stages=stages, after=after)
    assert np.abs(h - ref).max() / np.abs(ref).max() < 2e-3


@tl.kernel(num_warps=4)
def dot_used_per_warp(a, b, x, o, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """The block's dot, then each warp adds its own tile and stores at its own rows, and warp 0 alone
    stores it again: code each warp runs as its own, so the mma is not split (session 28's review)."""
    acc = tl.dot(tl.load(a, (0, 0), shape=(M, K)), tl.load(b, (0, 0), shape=(K, N)))
    w = tl.warp_id()
    tl.store(o, (w * M, 0), acc + tl.load(x, (w * M, 0), shape=(M, N)))
    if w == 0:
        tl.store(o, (4 * M, 0), acc)


@pytest.mark.parametrize("after", STAGES)
def test_a_block_dot_a_warp_uses_as_its_own(after):
    m = n = k = 32
    a, b = RNG.standard_normal((m, k)).astype(np.float16), RNG.standard_normal((k, n)).astype(np.float16)
    x = RNG.standard_normal((4 * m, n)).astype(np.float32)
    o = np.full((5 * m, n), np.nan, np.float32)
    dot_used_per_warp.interpret(a, b, x, o, grid=(1,), M=m, N=n, K=k, after=after)
    acc = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(o - np.concatenate([np.tile(acc, (4, 1)) + x, acc])).max() < 1e-4


@tl.kernel(num_warps=1)
def named_atom(a, b, c):
    x, y = tl.load(a, (0, 0), shape=(16, 16)), tl.load(b, (0, 0), shape=(16, 8))
    tl.store(c, (0, 0), tl.mma(x, y, tl.zeros((16, 8)), atom="mma_m16n8k16_f16"))


def test_an_mma_with_a_named_atom():
    """``tl.mma(..., atom=...)``: the atom-shape check takes the atom the name gives (a KeyError before)."""
    a, b = RNG.standard_normal((16, 16)).astype(np.float16), RNG.standard_normal((16, 8)).astype(np.float16)
    c = np.full((16, 8), np.nan, np.float32)
    named_atom.interpret(a, b, c, grid=(1,), after="tile-distribute")
    assert np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max() < 1e-3
