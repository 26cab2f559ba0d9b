"""``tl.dot`` of int8 tiles: exact products summed in int32 (wrapping) on ``mma.sync.m16n8k32.s8``, the
operands staged through shared memory and packed four to a register (``tilec.layout.MMA_M16N8K32_S8``,
checked against the PTX ISA's fragment tables in tests/layout/test_layout_atoms.py).

GEMMs of several block shapes, ragged edges, a K that is no multiple of the block's, a transposed
operand and a dot without a K loop, on the tile interpreter and lane by lane after
``tile-distribute``, against numpy's int64 product; the PTX is assembled by the session's ptxas check.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)


@tl.kernel(num_warps=4)
def int8_matmul(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.int32)
    for k in tl.range(0, a.shape[1], BK):
        acc += tl.dot(tl.load(a, (m, k), shape=(BM, BK)), tl.load(b, (k, n), shape=(BK, BN)))
    tl.store(c, (m, n), acc)


@tl.kernel(num_warps=4)
def int8_matmul_nt(a, w, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``a @ w.T`` with ``w`` N x K (a linear layer's int8 weights): both operands contiguous along K."""
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.int32)
    for k in tl.range(0, a.shape[1], BK):
        acc += tl.dot(tl.load(a, (m, k), shape=(BM, BK)), tl.load(w, (n, k), shape=(BN, BK)).T)
    tl.store(c, (m, n), acc)


@tl.kernel(num_warps=4)
def dequantized(a, bt, sa, sb, c, BM: tl.constexpr, BN: tl.constexpr, K: tl.constexpr):
    """One dot without a K loop, b given N x K (``trans_b``), the int32 sums scaled back to f16."""
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.dot(tl.load(a, (m, 0), shape=(BM, K)), tl.load(bt, (n, 0), shape=(BN, K)).T)
    scaled = acc.to(tl.float32) * tl.load(sa, (m,), shape=(BM,))[:, None] * tl.load(sb, (n,), shape=(BN,))[None, :]
    tl.store(c, (m, n), scaled.to(tl.float16))


def _operands(m, n, k):
    return (RNG.integers(-128, 128, (m, k)).astype(np.int8), RNG.integers(-128, 128, (k, n)).astype(np.int8))


@pytest.mark.parametrize("after", (None, "tile-distribute"))
@pytest.mark.parametrize("mnk, block, warps", [((64, 64, 64), (64, 64, 32), 4), ((100, 72, 200), (64, 64, 64), 4),
                                               ((128, 128, 256), (128, 128, 64), 8)], ids=str)
def test_int8_gemm(after, mnk, block, warps):
    m, n, k = mnk
    a, b = _operands(m, n, k)
    c = np.full((m, n), -7, np.int32)
    bm, bn, bk = block
    int8_matmul.with_options(num_warps=warps).interpret(a, b, c, grid=(-(-m // bm), -(-n // bn)), BM=bm, BN=bn, BK=bk,
                                                        after=after)
    assert np.array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("after", (None, "tile-distribute"))
def test_int8_gemm_with_weights_n_by_k(after):
    a, b = _operands(100, 72, 200)
    c = np.full((100, 72), -7, np.int32)
    int8_matmul_nt.interpret(a, np.ascontiguousarray(b.T), c, grid=(2, 2), BM=64, BN=64, BK=64, after=after)
    assert np.array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("after", (None, "tile-distribute"))
def test_int8_dot_of_a_transposed_operand_dequantized(after):
    a, b = _operands(64, 64, 64)
    sa, sb = RNG.uniform(0.01, 0.1, 64).astype(np.float32), RNG.uniform(0.01, 0.1, 64).astype(np.float32)
    c = np.full((64, 64), np.nan, np.float16)
    dequantized.interpret(a, np.ascontiguousarray(b.T), sa, sb, c, grid=(1, 1), BM=64, BN=64, K=64, after=after)
    ref = (a.astype(np.float64) @ b.astype(np.float64)) * sa[:, None] * sb[None, :]
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3


@pytest.mark.parametrize("after", ("tile-stage", "tile-distribute"))
@pytest.mark.parametrize("mnk, block, warps", [((128, 128, 256), (128, 128, 64), 8), ((100, 72, 200), (64, 64, 64), 4)],
                         ids=str)
def test_int8_gemm_on_warpgroup_mmas(after, mnk, block, warps):
    """sm_90a: with both operands K-major (weights N x K) the dot is the block's s8 wgmma."""
    m, n, k = mnk
    a, b = _operands(m, n, k)
    c = np.full((m, n), -7, np.int32)
    bm, bn, bk = block
    int8_matmul_nt.with_options(num_warps=warps).interpret(a, np.ascontiguousarray(b.T), c, grid=(-(-m // bm), -(-n // bn)),
                                                           BM=bm, BN=bn, BK=bk, after=after, arch="sm_90a")
    assert np.array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


def test_int8_dots_compile_to_the_s8_atom():
    a, b = _operands(64, 64, 64)
    c = np.zeros((64, 64), np.int32)
    for arch in ("sm_80", "sm_90a"):
        ptx = int8_matmul.compile(a, b, c, BM=64, BN=64, BK=32, arch=arch).asm["ptx"]
        assert "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" in ptx and "cp.async" in ptx
        dequantized.compile(a, b, c[0].astype(np.float32), c[0].astype(np.float32), c.astype(np.float16), BM=64, BN=64,
                            K=64, arch=arch)
    ptx = int8_matmul_nt.compile(a, b, c, BM=64, BN=64, BK=64, arch="sm_90a").asm["ptx"]
    assert "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8" in ptx and "mma.sync" not in ptx


@tl.kernel
def mixed(a, b, c):
    tl.store(c, (0, 0), tl.dot(tl.load(a, (0, 0), shape=(32, 32)), tl.load(b, (0, 0), shape=(32, 32))))  # MARK-mixed


def test_an_int8_dot_takes_two_int8_tiles():
    a = np.zeros((32, 32), np.int8)
    with pytest.raises(tl.LangError, match=r"tl.dot of int8 multiplies two int8 tiles"):
        mixed.ir(a, a.astype(np.float16), a.astype(np.int32))


@pytest.mark.parametrize("bn, warps", [(40, 4), (80, 8), (48, 4)])
def test_integer_wgmma_takes_ptx_s_n_or_stays_mma_sync(bn, warps):
    """PTX's integer wgmma has N = 8, 16, 24 or a multiple of 16: a warpgroup's N outside those keeps the
    dot on mma.sync (n40; 8 warps on 64 rows split N = 80 into two n40), the others are wgmma (n48)."""
    a, b = _operands(128, 2 * bn, 128)
    c = np.zeros((128, 2 * bn), np.int32)
    kernel = int8_matmul_nt.with_options(num_warps=warps)
    compiled = kernel.compile(a, np.ascontiguousarray(b.T), c, BM=64, BN=bn, BK=64, arch="sm_90a")
    ptx = compiled.asm["ptx"]
    assert ("wgmma.mma_async" in ptx) == (bn == 48) and ("mma.sync" in ptx) == (bn != 48)
    compiled.cubin("sm_90a")


@tl.kernel(num_warps=8, bulk=True)
def int8_matmul_bulk(a, w, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.int32)
    for k in tl.range(0, a.shape[1], BK):
        acc += tl.dot(tl.load(a, (m, k), shape=(BM, BK)), tl.load(w, (n, k), shape=(BN, BK)).T)
    zero_point = tl.load_scalar(w, (0, 0)).to(tl.int32)  # an int8 element read alone
    tl.store(c, (m, n), acc - zero_point)


def test_int8_operands_as_tensor_map_copies():
    """bulk=True (TMA) copies int8 tiles as bytes, into the s8 warpgroup MMA."""
    a, b = _operands(256, 256, 256)
    w = np.ascontiguousarray(b.T)
    c = np.zeros((256, 256), np.int32)
    int8_matmul_bulk.interpret(a, w, c, grid=(2, 2), BM=128, BN=128, BK=64, after="tile-distribute", arch="sm_90a")
    assert np.array_equal(c, a.astype(np.int64) @ b.astype(np.int64) - int(w[0, 0]))
    ptx = int8_matmul_bulk.compile(a, w, c, BM=128, BN=128, BK=64, arch="sm_90a").asm["ptx"]
    assert "cp.async.bulk.tensor" in ptx and "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8" in ptx
