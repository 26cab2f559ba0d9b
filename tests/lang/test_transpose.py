"""``x.T`` / ``tl.trans(x)`` (``tile.transpose``): a register tile's rows become its columns.

Each kernel runs on the tile-level interpreter, after ``tile-layout`` and lane by lane after
``tile-distribute``, against a float64 reference on fresh random inputs with NaN-poisoned outputs;
its PTX is assembled for sm_80 and sm_90 by the session's ptxas check (tests/conftest.py). The
fragments themselves are checked in tests/layout (``TVLayout.transposed``) and the lit tests.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261128)
STAGES = (None, "tile-layout", "tile-distribute")


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def rel_err(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert not np.isnan(got).any(), "an output was not written"
    return np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)


@tl.kernel(num_warps=4)
def transpose(x, y, BM: tl.constexpr, BN: tl.constexpr):
    """The memory-bound transpose: each side of the tile is read or written in coalesced rows."""
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    tl.store(y, (j, i), tl.load(x, (i, j), shape=(BM, BN)).T)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("m, n, bm, bn, dtype", [(100, 70, 32, 64, np.float32), (64, 128, 64, 32, np.float16),
                                                 (33, 17, 16, 16, np.float32), (1, 200, 16, 128, np.float16)])
def test_transpose_kernel_with_ragged_edges(after, m, n, bm, bn, dtype):
    x = rand(m, n, dtype=dtype)
    y = np.full((n, m), np.nan, dtype)
    transpose.interpret(x, y, grid=(-(-m // bm), -(-n // bn)), BM=bm, BN=bn, after=after)
    assert rel_err(y, x.T) == 0


@tl.kernel(num_warps=2)
def column_softmax(x, y, BM: tl.constexpr, BN: tl.constexpr):
    """Softmax down each column, written as a row softmax of the transposed tile."""
    j = tl.program_id(0) * BN
    a = tl.load(x, (0, j), shape=(BM, BN), other=float("-inf")).T
    e = tl.exp(a - tl.max(a, axis=1)[:, None])
    tl.store(y, (0, j), (e / tl.sum(e, axis=1)[:, None]).T)


@pytest.mark.parametrize("after", STAGES)
def test_reductions_of_a_transposed_tile(after):
    x = rand(50, 96) * 30  # large scores: the max subtraction must be per column
    y = np.full_like(x, np.nan)
    column_softmax.interpret(x, y, grid=(3,), BM=64, BN=32, after=after)
    x64 = x.astype(np.float64)
    ref = np.exp(x64 - x64.max(0))
    assert rel_err(y, ref / ref.sum(0)) < 1e-5


@tl.kernel(num_warps=1)
def products(a, b, c, d, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, DT: tl.constexpr):
    """``c = (a @ b.T).T`` with ``b`` held N x K, and ``d = a + a.T`` of a square tile: an operand
    loaded in the fragment its transpose feeds the mma with, a result stored transposed, and a
    tile met both ways (one side converted). The inputs are f32, rounded to ``DT`` in the kernel."""
    ta = tl.load(a, (0, 0), shape=(M, K)).to(DT)
    tb = tl.load(b, (0, 0), shape=(N, K)).to(DT)
    acc = tl.mma(ta, tb.T, tl.zeros((M, N)))
    tl.store(c, (0, 0), tl.trans(acc))
    sq = tl.load(d, (0, 0), shape=(K, K)).to(DT)
    tl.store(d, (0, 0), (sq + sq.T.T.T).to(tl.float32))


def rounded(x, dtype):
    from tilec.interp.dtypes import round_bf16, round_tf32

    return {"float16": lambda v: v.astype(np.float16), "bfloat16": round_bf16, "float32": round_tf32}[dtype](x)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_mma_operands_and_results_transposed(after, dtype):
    m, n, k = 32, 16, 32
    a, b, d = rand(m, k), rand(n, k), rand(k, k)
    c = np.full((n, m), np.nan, np.float32)
    d_in = d.astype(np.float64)
    products.interpret(a, b, c, d, grid=(1,), M=m, N=n, K=k, DT=dtype, after=after)
    ra, rb = (np.asarray(rounded(v, dtype), np.float64) for v in (a, b))
    assert rel_err(c, (ra @ rb.T).T) < 1e-5  # the operands rounded as the kernel does, f32 sums
    assert rel_err(d, d_in + d_in.T) < 1e-2


@tl.kernel(num_warps=4)
def carried(x, o, BM: tl.constexpr, STEPS: tl.constexpr):
    """A transposed tile carried through a loop and added to itself transposed each step."""
    acc = tl.zeros((BM, BM))
    t = tl.load(x, (0, 0), shape=(BM, BM))
    for _ in tl.range(0, STEPS):
        acc = (acc + t).T
    tl.store(o, (0, 0), acc)


@pytest.mark.parametrize("after", STAGES)
def test_a_transpose_in_a_loop(after):
    x = rand(32, 32)
    o = np.full_like(x, np.nan)
    carried.interpret(x, o, grid=(1,), BM=32, STEPS=3, after=after)
    acc = np.zeros((32, 32))
    for _ in range(3):
        acc = (acc + x).T
    assert rel_err(o, acc) < 1e-6


def test_compiles_for_both_targets():
    x = rand(64, 64)
    for arch in ("sm_80", "sm_90"):
        assert f".target {arch}" in transpose.compile(x, x, BM=32, BN=64, arch=arch).asm["ptx"]
        for dtype in ("float16", "bfloat16", "float32"):
            products.compile(x, x, x, x, M=32, N=16, K=32, DT=dtype, arch=arch)


@tl.kernel
def transposes_a_vector(x, o, N: tl.constexpr):
    v = tl.sum(tl.load(x, (0, 0), shape=(4, N)), axis=1)
    tl.store(o, (0,), tl.trans(v))  # MARK-vector


def test_a_vector_has_no_transpose():
    with pytest.raises(tl.LangError, match=r"tl.trans takes a register tile, got") as info:
        transposes_a_vector.ir(rand(4, 32), rand(4), N=32)
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if "MARK-vector" in text)
    assert str(info.value).startswith(f"{__file__}:{line}:")


@tl.kernel(num_warps=4)
def masks(x, z, w, N: tl.constexpr):
    """Masks (i1) that change fragments: a transposed comparison of a tile of the block (converted
    through shared memory) and comparisons of a row and a column vector meeting (one turned)."""
    t = tl.load(x, (0, 0), shape=(N, N))
    tl.store(z, (0, 0), tl.where((t > 0).T, 1.0, 0.0))
    tl.store(w, (0,), tl.where((tl.sum(t, axis=1) > 0) & (tl.sum(t, axis=0) > 0), 1.0, 0.0))


@pytest.mark.parametrize("after", STAGES)
def test_masks_change_fragments(after):
    x = rand(32, 32)
    z, w = np.full((32, 32), np.nan, np.float32), np.full(32, np.nan, np.float32)
    masks.interpret(x, z, w, grid=(1,), N=32, after=after)
    assert (z == (x.T > 0)).all() and (w == ((x.sum(1) > 0) & (x.sum(0) > 0))).all()


def test_masks_compile():
    x = rand(32, 32)
    for arch in ("sm_80", "sm_90"):
        masks.compile(x, x, x[0], N=32, arch=arch)
