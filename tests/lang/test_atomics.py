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
from tilec.api import CompilationError

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
    (float_max, "MARK-fmax", r"tl.atomic_max combines tl.float32 or tl.int32 or tl.int64 elements atomically; 'o' holds "
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


@tl.kernel(num_warps=4)
def tickets(counter, got):
    """Each block takes a ticket: the counter's value before its own add (a scalar in every thread)."""
    tl.store(got, (tl.program_id(0),), tl.atomic_add(counter, (0,), 1))


@tl.kernel(num_warps=4)
def last_block_sums(x, partial, count, out, N: tl.constexpr, G: tl.constexpr):
    """Split-K's semaphore: each block writes its partial sum, and the block that arrives last (its
    ticket is G - 1) adds the partials up."""
    pid = tl.program_id(0)
    tl.store(partial, (pid,), tl.sum(tl.load(x, (pid * N,), shape=(N,))))
    tl.debug_barrier()
    if tl.atomic_add(count, (0,), 1) == G - 1:
        tl.store(out, (0,), tl.sum(tl.load(partial, (0,), shape=(G,))))


@tl.kernel(num_warps=4)
def old_tiles(x, o, prev, o1, prev1, BM: tl.constexpr, BN: tl.constexpr):
    """The old values of a tile, of a vector whose copies are in several warps and of one in a warp's
    lanes (its place chosen by the warp id), with add, max and xchg."""
    t = tl.load(x, (0, 0), shape=(BM, BN))
    tl.store(prev, (0, 0), tl.atomic_add(o, (0, 0), t))
    tl.store(prev1, (0,), tl.atomic_max(o1, (0,), tl.max(t, axis=0)))
    w = tl.warp_id() * 16
    rows = tl.sum(tl.load(x, (w, 0), shape=(16, BN)), axis=1)
    tl.store(prev1, (BN + w,), tl.atomic_xchg(o1, (BN + w,), rows))


@tl.kernel(num_warps=2)
def swaps(o, prev, cmp, BN: tl.constexpr):
    """Compare and swap: ``o`` becomes the column index where it equals ``cmp``."""
    cols = tl.iota((1, BN), 1)
    tl.store(prev, (0, 0), tl.atomic_cas(o, (0, 0), tl.load(cmp, (0, 0), shape=(1, BN)), cols))


@tl.kernel(num_warps=2)
def bits(o, prev, v):
    """and / or / xor, their old values carried on through the next."""
    a = tl.atomic_and(o, (0,), v)
    b = tl.atomic_or(o, (1,), a)
    tl.store(prev, (0,), tl.atomic_xor(o, (2,), b))


@pytest.mark.parametrize("after", STAGES)
def test_each_block_gets_one_ticket(after):
    counter, got = np.array([5], np.int32), np.full(6, -1, np.int32)
    tickets.interpret(counter, got, grid=(6,), after=after)
    assert counter[0] == 11 and sorted(got) == list(range(5, 11))


@pytest.mark.parametrize("after", STAGES)
def test_the_last_block_to_arrive_adds_the_partials(after):
    x = RNG.standard_normal(5 * 128).astype(np.float32)
    partial, count, out = np.full(5, np.nan, np.float32), np.zeros(1, np.int32), np.full(1, np.nan, np.float32)
    last_block_sums.interpret(x, partial, count, out, grid=(5,), N=128, G=5, after=after)
    assert count[0] == 5 and np.isclose(out[0], x.astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize("after", STAGES)
def test_old_values_of_tiles_and_vectors(after):
    bm, bn = 64, 32
    x = RNG.standard_normal((bm, bn)).astype(np.float32)
    o = RNG.standard_normal((bm, bn + 8)).astype(np.float32)
    o1 = RNG.standard_normal(bn + bm + 8).astype(np.float32)
    before, before1 = o.copy(), o1.copy()
    prev, prev1 = np.full_like(o, np.nan), np.full_like(o1, np.nan)
    old_tiles.interpret(x, o, prev, o1, prev1, grid=(1,), BM=bm, BN=bn, after=after)
    assert np.array_equal(prev[:, :bn], before[:, :bn])
    assert np.allclose(o[:, :bn], before[:, :bn].astype(np.float64) + x, rtol=1e-6)
    assert np.array_equal(o[:, bn:], before[:, bn:])
    assert np.array_equal(prev1[:bn + bm], before1[:bn + bm])
    assert np.array_equal(o1[:bn], np.maximum(before1[:bn], x.max(axis=0)))
    assert np.allclose(o1[bn:bn + bm], x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)  # f32 sums near 0
    assert np.array_equal(o1[bn + bm:], before1[bn + bm:])


@pytest.mark.parametrize("after", STAGES)
def test_compare_and_swap_and_bitwise_atomics(after):
    bn = 64
    o = RNG.integers(0, 4, (1, bn)).astype(np.int32)
    cmp = RNG.integers(0, 4, (1, bn)).astype(np.int32)
    before, prev = o.copy(), np.full_like(o, -1)
    swaps.interpret(o, prev, cmp, grid=(1,), BN=bn, after=after)
    assert np.array_equal(prev, before)
    assert np.array_equal(o, np.where(before == cmp, np.arange(bn), before))
    o = RNG.integers(-2**31, 2**31, 3, dtype=np.int64).astype(np.int32)
    v, before, prev = np.int32(0x0F0F0F0F), o.copy(), np.zeros(1, np.int32)
    bits.interpret(o, prev, v, grid=(1,), after=after)
    a, b = before[0], before[1]
    assert o[0] == a & v and o[1] == b | a and o[2] == before[2] ^ b and prev[0] == before[2]


def test_old_values_compile_to_atom_for_both_targets():
    x = RNG.standard_normal((64, 128)).astype(np.float32)
    for arch in ("sm_80", "sm_90"):
        ptx = old_tiles.compile(x, x, x, x[0], x[0], BM=64, BN=32, arch=arch).asm["ptx"]
        assert "atom.acq_rel.gpu.global.add.f32" in ptx and "atom.acq_rel.gpu.global.exch.b32" in ptx
        assert "red.global" not in ptx
        ptx = tickets.compile(np.zeros(1, np.int32), np.zeros(4, np.int32), arch=arch).asm["ptx"]
        assert ptx.count("atom.acq_rel.gpu.global.add.u32") == 1 and ptx.count("bar.sync") == 2


@tl.kernel(num_warps=2)
def bitwise_unused(o, v):
    """and / or / xor whose old values nothing reads: red.global.{and,or,xor}.b32."""
    tl.atomic_and(o, (0,), v)
    tl.atomic_or(o, (1,), v)
    tl.atomic_xor(o, (2,), v)


@pytest.mark.parametrize("after", STAGES)
def test_bitwise_atomics_without_old_values(after):
    o = RNG.integers(-2**31, 2**31, 3, dtype=np.int64).astype(np.int32)
    before, v = o.copy(), np.int32(0x0F0F0F0F)
    bitwise_unused.interpret(o, v, grid=(1,), after=after)
    assert o.tolist() == [before[0] & v, before[1] | v, before[2] ^ v]
    ptx = bitwise_unused.compile(o, v, arch="sm_80").asm["ptx"]
    assert all(f"red.global.{k}.b32" in ptx for k in ("and", "or", "xor")) and "atom." not in ptx


@tl.kernel(num_warps=1)
def in_some_lanes(p):
    if tl.lane_id() == 5:
        tl.atomic_add(p, (0,), 1)  # MARK-lanes


def test_an_atomic_in_a_branch_some_lanes_take_is_refused():
    """One lane combines each element for its copies; inside a branch only some lanes take it may not be
    there (the add would be lost): refused at the atomic's line, naming the branch."""
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if "MARK-lanes" in text)
    with pytest.raises(CompilationError, match=rf"test_atomics.py:{line}:\d+: error: .*whose condition differs "
                                                  r"between the lanes of a warp"):
        in_some_lanes.compile(np.zeros(1, np.int32), arch="sm_80")


# ---------------------------------------------------------------- 16-bit float sums


@tl.kernel(num_warps=4)
def half_sums(x_ptr, idx_ptr, out_ptr, old_ptr, n, BLOCK: tl.constexpr):
    """Embedding-backward style: each element added at its index (duplicates combine), and, for the
    first block, the old values read back (``atom`` rather than ``red``)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    i = tl.load(idx_ptr + offs, mask=m, other=0)
    tl.atomic_add(out_ptr + i, x, mask=m)
    old = tl.atomic_add(old_ptr + offs % 8, x, mask=m & (tl.program_id(0) == 0))
    tl.store(old_ptr + 8 + offs, old.to(tl.float32), mask=m & (tl.program_id(0) == 0))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_float16_and_bfloat16_sums(dtype, after):
    """f16 and bf16 arrays sum atomically (``red.global.add.noftz.f16`` / ``.bf16``, the latter sm_90's), each
    add rounded to the type; small integers make every order of the sums exact."""
    dt = np.float16 if dtype == "float16" else pytest.importorskip("ml_dtypes", reason="numpy's bf16").bfloat16
    n = 300
    x = RNG.integers(-8, 8, n).astype(dt)
    idx = RNG.integers(0, 7, n).astype(np.int32)
    out = np.full(7, 0.5, dt)
    old = np.zeros(8 + 128, np.float32)
    old_dt = np.zeros(8 + 128, dt)
    half_sums.interpret(x, idx, out, old_dt, n, BLOCK=128, grid=(3,), after=after)
    ref = np.full(7, 0.5)
    np.add.at(ref, idx, x.astype(np.float64))
    assert np.array_equal(out.astype(np.float64), ref)
    sums = np.zeros(8)
    np.add.at(sums, np.arange(128) % 8, x[:128].astype(np.float64))
    assert np.array_equal(old_dt[:8].astype(np.float64), sums)
    del old


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_float16_sums_compile(dtype):
    dt = np.float16 if dtype == "float16" else pytest.importorskip("ml_dtypes", reason="numpy's bf16").bfloat16
    args = (np.zeros(64, dt), np.zeros(64, np.int32), np.zeros(8, dt), np.zeros(8 + 128, dt), 64)
    ptx = half_sums.compile(*args, BLOCK=128, arch="sm_90a").asm["ptx"]
    suffix = "f16" if dtype == "float16" else "bf16"
    assert f"red.global.add.noftz.{suffix}" in ptx and f"atom.acq_rel.gpu.global.add.noftz.{suffix}" in ptx
    if dtype == "float16":
        half_sums.compile(*args, BLOCK=128, arch="sm_80")
    else:
        with pytest.raises(CompilationError, match=r"'red.global.add.noftz.bf16', which needs sm_90"):
            half_sums.compile(*args, BLOCK=128, arch="sm_80")
