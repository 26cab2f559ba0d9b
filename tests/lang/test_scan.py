"""``tl.cumsum`` / ``tl.cumprod`` / ``tl.cummax`` / ``tl.cummin``: one ``tile.scan``, lowered for any fragment
(tile_distribute/scan.py). Checked against float64 on the tile-level interpreter and lane by lane after
``tile-distribute``: tiles of one warp and of the block (thread bits past the lane's along the scan: the
exchange through shared memory), an mma's accumulator, vectors, reversed, int32, f16; fresh random
inputs, outputs poisoned first."""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl
from tilec.codegen.ptxas import find_ptxas, kernel_resources

RNG = np.random.default_rng(20261129)
STAGES = [(None, None), ("tile-distribute", "sm_80")]
SCANS = {"sum": (tl.cumsum, np.cumsum), "prod": (tl.cumprod, np.cumprod),
         "max": (tl.cummax, np.maximum.accumulate), "min": (tl.cummin, np.minimum.accumulate)}


@tl.kernel(num_warps=4)
def scan_rows(x, o, BM: tl.constexpr, BN: tl.constexpr, AXIS: tl.constexpr, KIND: tl.constexpr, REV: tl.constexpr):
    i = tl.program_id(0) * BM
    t = tl.load(x, (i, 0), shape=(BM, BN))
    tl.store(o, (i, 0), SCANS[KIND][0](t, axis=AXIS, reverse=REV))


def reference(x, axis, kind, reverse):
    fn = SCANS[kind][1]
    x = x.astype(np.float64)
    return np.flip(fn(np.flip(x, axis), axis=axis), axis) if reverse else fn(x, axis=axis)


@pytest.mark.parametrize("after, arch", STAGES)
@pytest.mark.parametrize("bm, bn, warps", [(16, 32, 4), (4, 256, 4), (2, 1024, 8), (128, 16, 4), (32, 64, 1)],
                         ids=str)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("kind, reverse, dtype", [("sum", False, np.float32), ("sum", True, np.int32),
                                                  ("max", True, np.float16), ("min", False, np.float32),
                                                  ("prod", False, np.float32)])
def test_scans_of_tiles(after, arch, bm, bn, warps, axis, kind, reverse, dtype):
    x = RNG.standard_normal((2 * bm, bn)) * (8 if dtype == np.int32 else 1)
    x = (1 + 0.01 * x if kind == "prod" else x).astype(dtype)
    o = np.full(x.shape, -12345 if dtype == np.int32 else np.nan, dtype)
    scan_rows.with_options(num_warps=warps).interpret(x, o, grid=(2,), BM=bm, BN=bn, AXIS=axis, KIND=kind,
                                                      REV=reverse, after=after, arch=arch)
    want = np.concatenate([reference(x[:bm], axis, kind, reverse), reference(x[bm:], axis, kind, reverse)])
    tol = 3e-3 if dtype == np.float16 else 1e-5
    assert np.abs(o - want).max() / np.abs(want).max() <= tol


@tl.kernel(num_warps=4)
def scan_products(a, b, v, o, ov, BM: tl.constexpr, BN: tl.constexpr, K: tl.constexpr, N: tl.constexpr):
    """A running sum down an mma's accumulator, a reversed one of a vector (also as Triton's method)."""
    acc = tl.dot(tl.load(a, (0, 0), shape=(BM, K)), tl.load(b, (0, 0), shape=(K, BN)))
    tl.store(o, (0, 0), tl.cumsum(acc, axis=0) - tl.cumsum(acc, axis=1, reverse=True))
    x = tl.load(v, (0,), shape=(N,))
    tl.store(ov, (0,), tl.cumsum(x, reverse=True) + x.cumsum(0) + tl.cumsum(x > 0))


@pytest.mark.parametrize("after, arch", STAGES + [("tile-distribute", "sm_90a")])
@pytest.mark.parametrize("bm, bn, warps", [(64, 64, 4), (128, 64, 8), (16, 16, 1)], ids=str)
def test_scans_of_mma_results_and_vectors(after, arch, bm, bn, warps):
    k, n = 32, 1024
    a, b = RNG.standard_normal((bm, k)).astype(np.float16), RNG.standard_normal((k, bn)).astype(np.float16)
    v = RNG.standard_normal(n).astype(np.float32)
    o, ov = np.full((bm, bn), np.nan, np.float32), np.full(n, np.nan, np.float32)
    scan_products.with_options(num_warps=warps).interpret(a, b, v, o, ov, grid=(1,), BM=bm, BN=bn, K=k, N=n,
                                                          after=after, arch=arch)
    p = a.astype(np.float64) @ b.astype(np.float64)
    want = np.cumsum(p, 0) - np.flip(np.cumsum(np.flip(p, 1), 1), 1)
    assert np.abs(o - want).max() / np.abs(want).max() < 1e-5
    x = v.astype(np.float64)
    want_v = np.flip(np.cumsum(np.flip(x))) + np.cumsum(x) + np.cumsum(x > 0)
    assert np.abs(ov - want_v).max() / np.abs(want_v).max() < 1e-5


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_scan_ptx_assembles_without_spills(arch):
    if find_ptxas() is None:
        pytest.skip("ptxas is not installed (pip install -e '.[test]' brings it)")
    a = RNG.standard_normal((128, 32)).astype(np.float16)
    v = RNG.standard_normal(1024).astype(np.float32)
    o = np.zeros((128, 64), np.float32)
    kernel = scan_products.with_options(num_warps=8)
    ptx = kernel.compile(a, a, v, o, v, BM=128, BN=64, K=32, N=1024, arch=arch).asm["ptx"]
    assert "shfl.sync.bfly" in ptx
    assert kernel_resources(ptx, arch)[kernel.name].spill_stores == 0


@tl.kernel
def bad_scan(x, o, N: tl.constexpr, AXIS: tl.constexpr):
    tl.store(o, (0, 0), tl.cumsum(tl.load(x, (0, 0), shape=(4, N)), axis=AXIS))


@pytest.mark.parametrize("n, axis, message", [
    (48, 1, "tl.cumsum scans an extent that is a power of two"),
    (64, 2, r"tl.cumsum's axis is 0 \(down the columns\) or 1 \(along the rows\) of a tile, got 2"),
])
def test_scan_errors_name_the_line(n, axis, message):
    x = np.zeros((4, n), np.float32)
    with pytest.raises(tl.LangError, match=message) as e:
        bad_scan.ir(x, x, N=n, AXIS=axis)
    assert "test_scan.py" in str(e.value)


@tl.func
def last_nonzero(a, b):
    """Forward fill: associative, not commutative (``a`` is what came first)."""
    return tl.where(b != 0, b, a)


@tl.kernel(num_warps=4)
def fill_rows(x, o, BM: tl.constexpr, BN: tl.constexpr, AXIS: tl.constexpr, REV: tl.constexpr):
    t = tl.load(x, (0, 0), shape=(BM, BN))
    tl.store(o, (0, 0), tl.associative_scan(t, AXIS, last_nonzero, reverse=REV)
             + tl.associative_scan(t, AXIS, lambda a, b: tl.maximum(a, b)))


def forward_fill(x, axis, reverse):
    x = np.moveaxis(np.flip(x, axis) if reverse else x, axis, 0).copy()
    for i in range(1, x.shape[0]):
        x[i] = np.where(x[i] != 0, x[i], x[i - 1])
    x = np.moveaxis(x, 0, axis)
    return np.flip(x, axis) if reverse else x


@pytest.mark.parametrize("after, arch", STAGES + [("tile-distribute", "sm_90a")])
@pytest.mark.parametrize("bm, bn, warps", [(16, 32, 4), (2, 1024, 8), (64, 16, 1)], ids=str)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_with_a_function(after, arch, bm, bn, warps, axis, reverse):
    """tl.associative_scan with a @tl.func that does not commute, and a lambda: the earlier value first,
    in scan order (from the far end when reversed), as Triton's."""
    x = RNG.integers(-3, 4, (bm, bn)).astype(np.float32) * (RNG.random((bm, bn)) < 0.3)
    o = np.full_like(x, np.nan)
    fill_rows.with_options(num_warps=warps).interpret(x, o, grid=(1,), BM=bm, BN=bn, AXIS=axis, REV=reverse,
                                                      after=after, arch=arch)
    want = forward_fill(x, axis, reverse) + np.maximum.accumulate(x, axis=axis)
    assert np.array_equal(o, want)


@tl.kernel(num_warps=8)
def half_functions(x, o, m, BM: tl.constexpr, BN: tl.constexpr):
    """A function's scan and reduction of f16 / bf16 run in that type: the values cross lanes as 32 bits."""
    t = tl.load(x, (0, 0), shape=(BM, BN))
    tl.store(o, (0, 0), tl.associative_scan(t, 1, lambda a, b: tl.maximum(a, b)))
    tl.store(m, (0,), tl.reduce(t, 1, lambda a, b: tl.minimum(a, b)))


@pytest.mark.parametrize("after, arch", STAGES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_functions_of_16_bit_values(after, arch, dtype):
    from tilec.interp.dtypes import round_bf16

    x = RNG.standard_normal((4, 1024)).astype(np.float32)
    x = x.astype(np.float16) if dtype == "float16" else np.asarray(round_bf16(x), np.float32)
    o, m = np.full_like(x, np.nan), np.full(4, np.nan, x.dtype)
    half_functions.interpret(x, o, m, grid=(1,), BM=4, BN=1024, after=after, arch=arch)
    assert np.array_equal(o, np.maximum.accumulate(x, axis=1)) and np.array_equal(m, x.min(1))
