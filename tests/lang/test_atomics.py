"""``tl.atomic_add`` / ``atomic_max`` / ``atomic_min`` (``tile.atomic``): each element of a tile, vector
or scalar combined into global memory once, however many threads hold a copy of it.

Each kernel runs on the tile-level interpreter and lane by lane after ``tile-distribute`` (whose
``red.global`` lanes combine one at a time) against float64 or exact integer references on fresh
random inputs; the outputs start from known non-zero values; the PTX is assembled by the
session's ptxas check (tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261128)
STAGES = (None, "tile-distribute")


@tl.kernel(num_warps=4)
def column_sums(x, o, BM: tl.constexpr, BN: tl.constexpr):
    """Split-K style: each block adds its rows' column sums (a vector of the block) into ``o``."""
    t = tl.load(x, (tl.program_id(0) * BM, tl.program_id(1) * BN), shape=(BM, BN))
    tl.atomic_add(o, (tl.program_id(1) * BN,), tl.sum(t, axis=0))


@tl.kernel(num_warps=4)
def total(x, o, N: tl.constexpr):
    """Each block adds its slice's total, a scalar, into one element."""
    tl.atomic_add(o, (0,), tl.sum(tl.load(x, (tl.program_id(0) * N,), shape=(N,))))


@tl.kernel(num_warps=4)
def tiles(x, o, BM: tl.constexpr, BN: tl.constexpr):
    """Every block adds its whole tile into one window (ragged at the array's edge)."""
    tl.atomic_add(o, (0, 0), tl.load(x, (tl.program_id(0) * BM, 0), shape=(BM, BN)) * 0.5)


@tl.kernel(num_warps=4)
def warp_totals(x, o, BN: tl.constexpr):
    """Each warp's rows (chosen by the warp id) summed: a value of its own, added by every warp; the
    same total of the first 16 rows in every warp: added once."""
    t = tl.load(x, (tl.warp_id() * 16, 0), shape=(16, BN))
    tl.atomic_add(o, (0,), tl.sum(t))
    tl.atomic_add(o, (1,), tl.sum(tl.load(x, (0, 0), shape=(16, BN))))


@tl.kernel(num_warps=2)
def extremes(x, o, BM: tl.constexpr):
    """int32 maxima and minima of each column, and the total, across blocks."""
    t = tl.load(x, (tl.program_id(0) * BM, 0), shape=(BM, 32))
    tl.atomic_max(o, (0,), tl.max(t, axis=0))
    tl.atomic_min(o, (32,), tl.min(t, axis=0))
    tl.atomic_add(o, (64,), tl.sum(t))


@pytest.mark.parametrize("after", STAGES)
def test_float_sums_from_many_blocks(after):
    x = RNG.standard_normal((100, 96)).astype(np.float32)
    o = np.full(96, 0.25, np.float32)
    column_sums.interpret(x, o, grid=(4, 2), BM=32, BN=64, after=after)
    assert np.abs(o - (x.astype(np.float64).sum(0) + 0.25)).max() < 1e-4
    y = RNG.standard_normal(1000).astype(np.float32)
    s = np.full(1, 2.0, np.float32)
    total.interpret(y, s, grid=(4,), N=256, after=after)
    assert abs(s[0] - (y.astype(np.float64).sum() + 2)) < 1e-4
    t = RNG.standard_normal((40, 24)).astype(np.float32)
    w = np.full((20, 24), -1.0, np.float32)
    tiles.interpret(t, w, grid=(3,), BM=16, BN=32, after=after)
    want = np.full((20, 24), -1.0)
    for b in range(3):
        rows = t[16 * b:16 * b + 16].astype(np.float64) * 0.5
        want[:min(len(rows), 20)] += rows[:20]
    assert np.abs(w - want).max() < 1e-5


@pytest.mark.parametrize("after", STAGES)
def test_a_value_of_the_block_is_added_once_and_a_warps_own_by_each_warp(after):
    x = RNG.standard_normal((64, 64)).astype(np.float32)
    o = np.zeros(2, np.float32)
    warp_totals.interpret(x, o, grid=(1,), BN=64, after=after)
    x64 = x.astype(np.float64)
    assert abs(o[0] - x64.sum()) < 1e-4 and abs(o[1] - x64[:16].sum()) < 1e-4


@pytest.mark.parametrize("after", STAGES)
def test_int32_maxima_minima_and_sums(after):
    x = RNG.integers(-1000, 1000, (70, 32), dtype=np.int32)
    o = np.concatenate([np.full(32, -5000), np.full(32, 5000), [7]]).astype(np.int32)
    extremes.interpret(x, o, grid=(3,), BM=32, after=after)
    assert (o[:32] == x.max(0)).all() and (o[32:64] == x.min(0)).all() and o[64] == x.sum() + 7


@tl.kernel(num_warps=4)
def float_extremes(x, o, BM: tl.constexpr):
    """f32 maxima and minima of each column across blocks (an amax for a scale: of the absolute values)."""
    t = tl.load(x, (tl.program_id(0) * BM, 0), shape=(BM, 32))
    tl.atomic_max(o, (0,), tl.max(t, axis=0))
    tl.atomic_min(o, (32,), tl.min(t, axis=0))
    tl.atomic_max(o, (64,), tl.max(tl.abs(t)))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("sign", [1.0, -1.0, 0.0])
def test_float_extremes_from_many_blocks(after, sign):
    """Both signs meet in one element: positive values take the signed integer maximum of their bits,
    negative ones the unsigned minimum (and the reverse for a minimum), as Triton does."""
    x = (RNG.standard_normal((128, 32)) + 3 * sign).astype(np.float32)  # whole blocks: no zeros read past the end
    o = np.array([-np.inf] * 32 + [np.inf] * 32 + [0.5], np.float32)
    float_extremes.interpret(x, o, grid=(4,), BM=32, after=after)
    assert (o[:32] == x.max(0)).all() and (o[32:64] == x.min(0)).all() and o[64] == max(np.abs(x).max(), 0.5)


@tl.kernel
def extreme_bits(o, v, N: tl.constexpr):
    x = tl.load(v, (0,), shape=(N,))
    tl.atomic_max(o, (0,), x)
    tl.atomic_min(o, (N,), x)


@pytest.mark.parametrize("after", STAGES)
def test_float_extremes_of_nans_and_zeros_agree_with_the_gpu(after):
    """NaNs and -0.0 are ordered by their bits, as the GPU's integer reductions order them: both
    interpreters give what the GPU does (a positive NaN wins a maximum, a negative one loses it)."""
    nan, neg_nan = np.float32(np.nan), -np.float32(np.nan)
    v = np.array([1.0, -0.0, nan, 2.0], np.float32)
    o = np.array([neg_nan, 0.0, 1.0, nan, 1.0, 0.0, nan, neg_nan], np.float32)
    extreme_bits.interpret(o, v, grid=(1,), N=4, after=after)
    want = np.array([1.0, 0.0, nan, nan, 1.0, -0.0, nan, neg_nan], np.float32)  # min(-NaN, 2) is the -NaN
    assert (o.view(np.uint32) == want.view(np.uint32)).all(), o


def test_compiles_for_both_targets():
    x = RNG.standard_normal((64, 64)).astype(np.float32)
    xi = x.astype(np.int32)
    for arch in ("sm_80", "sm_90"):
        assert "red.global.add.f32" in column_sums.compile(x, x[0], BM=32, BN=64, arch=arch).asm["ptx"]
        ptx = extremes.compile(xi, xi[0], BM=32, arch=arch).asm["ptx"]
        assert "red.global.max.s32" in ptx and "red.global.min.s32" in ptx and "red.global.add.s32" in ptx
        warp_totals.compile(x, x[0], BN=64, arch=arch)
        ptx = float_extremes.compile(x, x[0], BM=32, arch=arch).asm["ptx"]
        assert "red.global.max.s32" in ptx and "red.global.min.u32" in ptx and "red.global.max.u32" in ptx
        tiles.compile(x, x, BM=16, BN=32, arch=arch)


@tl.kernel
def float_max(x, o, N: tl.constexpr):
    tl.atomic_max(o, (0,), tl.load(x, (0,), shape=(N,)))  # MARK-fmax


@tl.kernel
def mixed(x, o, N: tl.constexpr):
    tl.atomic_add(o, (0,), tl.load(x, (0,), shape=(N,)).to(tl.float16) + tl.zeros((N + 1,), axis=0))  # MARK-mixed


@pytest.mark.parametrize("kernel, marker, match, out", [
    (float_max, "MARK-fmax", r"tl.atomic_max combines tl.float32 or tl.int32 elements atomically; 'o' holds "
                             r"tl.float16", np.float16),
    (mixed, "MARK-mixed", r"differ in length", np.float32),
])
def test_errors_point_at_the_line(kernel, marker, match, out):
    x = RNG.standard_normal(32).astype(np.float32)
    with pytest.raises(tl.LangError, match=match) as info:
        kernel.ir(x, x.astype(out), N=32)
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if marker in text)
    assert str(info.value).startswith(f"{__file__}:{line}:")


@tl.kernel(num_warps=4)
def places_per_warp(x, o, p):
    """A value the same in every warp added at a place computed from the warp id: each warp's own add
    (a histogram by warp); and lane ids as places: each lane's (session 28's review)."""
    tl.atomic_add(o, (tl.warp_id(),), tl.sum(tl.load(x, (0,), shape=(32,))))
    tl.atomic_add(p, (tl.lane_id(),), 1.0)


def test_places_that_differ_between_warps_and_lanes():
    x = RNG.standard_normal(32).astype(np.float32)
    o, p = np.zeros(4, np.float32), np.zeros(32, np.float32)
    places_per_warp.interpret(x, o, p, grid=(1,), after="tile-distribute")
    assert np.allclose(o, x.astype(np.float64).sum(), rtol=1e-5) and (p == 4).all()  # four warps' lanes
    o[:] = 0
    p[:] = 0
    places_per_warp.interpret(x, o, p, grid=(1,))  # the tile interpreter: warps, not lanes
    assert np.allclose(o, x.astype(np.float64).sum(), rtol=1e-5)


@tl.kernel
def uses_old_values(x, o, old, N: tl.constexpr):
    prev = tl.atomic_add(o, (0,), tl.load(x, (0,), shape=(N,)))
    tl.store(old, (0,), prev + 1.0)  # MARK-old


def test_the_old_values_are_not_returned():
    """Triton's atomics return the old values; tilec's red.global does not: using the result is an
    error at the line that uses it, naming the atomic."""
    x = RNG.standard_normal(32).astype(np.float32)
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if "MARK-old" in text)
    with pytest.raises(tl.LangError, match=rf"test_atomics.py:{line}:\d+: error: tl.atomic_add returns no old values"):
        uses_old_values.ir(x, x, x, N=32)
