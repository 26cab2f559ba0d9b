"""What a Triton user writes out of habit, found by session 29's hunts: each on both interpreters
(the tile level and lane by lane after tile-distribute) against numpy, outputs poisoned with NaN."""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(2929)
STAGES = (None, "tile-distribute")


@tl.kernel
def keep_dims_softmax(x, o, BM: tl.constexpr, N: tl.constexpr):
    """``keep_dims=True`` and the tensor methods ``x.max(axis)`` / ``x.sum(axis)``, as in Triton."""
    r = tl.program_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, N), other=float("-inf"))
    e = tl.exp(t - tl.max(t, axis=1, keep_dims=True))
    col = e.sum(axis=0, keep_dims=True)  # one per column, as a row of the tile
    tl.store(o, (r, 0), e / e.sum(axis=1)[:, None] + 0 * col + 0 * e.max())


@pytest.mark.parametrize("after", STAGES)
def test_keep_dims_and_tensor_methods(after):
    x = RNG.standard_normal((12, 40)).astype(np.float32)
    o = np.full_like(x, np.nan)
    keep_dims_softmax.interpret(x, o, grid=(3,), BM=4, N=64, after=after)
    ref = np.exp(x - x.max(1, keepdims=True))
    assert np.abs(o - ref / ref.sum(1, keepdims=True)).max() < 1e-6


@tl.kernel
def to_int(x, o, N: tl.constexpr):
    tl.store(o, (0,), tl.load(x, (0,), shape=(N,)).to(tl.int32))


@pytest.mark.parametrize("after", STAGES)
def test_float_to_int_saturates(after):
    """``cvt.rzi.s32.f32`` saturates (NaN is 0); the tile interpreter wrapped instead (session 29's hunt)."""
    x = np.array([1e10, -1e10, 3.4e38, np.inf, -np.inf, 2.7, -2.7, np.nan], np.float32)
    o = np.zeros(8, np.int32)
    to_int.interpret(x, o, grid=(1,), N=8, after=after)
    assert o.tolist() == [2**31 - 1, -2**31, 2**31 - 1, 2**31 - 1, -2**31, 2, -2, 0]


@tl.kernel
def rowsum_if(x, init, o, BM: tl.constexpr, N: tl.constexpr):
    """A vector made from nothing (or loaded), reassigned to a row reduction under a run-time if: one
    orientation after the if, as numpy's 1-D arrays have none."""
    pid = tl.program_id(0)
    r = pid * BM
    t = tl.load(x, (r, 0), shape=(BM, N))
    v = tl.zeros((BM,))
    w = tl.load(init, (r,), shape=(BM,))
    if pid == 0:
        v = tl.sum(t, axis=1)
        w = w + tl.sum(t, axis=1)
    tl.store(o, (r, 0), t + v[:, None] + w[:, None])


@pytest.mark.parametrize("after", STAGES)
def test_a_vector_reassigned_under_a_run_time_if(after):
    x, init = RNG.standard_normal((8, 16)).astype(np.float32), RNG.standard_normal(8).astype(np.float32)
    o = np.full_like(x, np.nan)
    rowsum_if.interpret(x, init, o, grid=(2,), BM=4, N=16, after=after)
    x64 = x.astype(np.float64)
    v = np.where(np.arange(8)[:, None] < 4, x64.sum(1, keepdims=True), 0.0)
    w = init[:, None] + v
    assert np.abs(o - (x64 + v + w)).max() < 1e-5


@tl.kernel
def gather_by_int64(x, labels, o):
    i = tl.program_id(0)
    tl.store(o, (i,), tl.load_scalar(x, (i, tl.load_scalar(labels, (i,)))))


@pytest.mark.parametrize("after", STAGES)
def test_int64_labels_are_read_an_element_at_a_time(after):
    """torch's index type: a cross-entropy's labels as they come (tl.load_scalar of int64)."""
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    labels = np.array([3, 0, 31, 5, 7, 1, 2, 30], np.int64)
    o = np.full(8, np.nan, np.float32)
    gather_by_int64.interpret(x, labels, o, grid=(8,), after=after)
    assert np.array_equal(o, x[np.arange(8), labels])
    assert "ld.global" in gather_by_int64.compile(x, labels, o, arch="sm_80").asm["ptx"]


@tl.kernel
def int64_tiles(a, f, o, of, BM: tl.constexpr, N: tl.constexpr):
    """int64 tiles as torch's index tensors come: loaded (masked), reduced down the columns (across
    warps) and along the rows (64-bit shuffles), divided (C's truncation), compared, converted."""
    t = tl.load(a, (0, 0), shape=(BM, N), other=0)
    u = t * 3 + t // 7 - t % 5
    u = tl.where(u > (1 << 40), u, -u)
    tl.store(o, (0,), tl.sum(u, axis=0) + tl.max(t, axis=1) + (1 << 33))
    tl.store(of, (0, 0), tl.load(f, (0, 0), shape=(BM, N)).to(tl.int64) - t)


@tl.kernel
def argmax_ids(x, ids, copy_of, BM: tl.constexpr, N: tl.constexpr):
    r = tl.program_id(0) * BM
    tl.store(ids, (r,), tl.argmax(tl.load(x, (r, 0), shape=(BM, N)), axis=1).to(tl.int64))
    tl.store(copy_of, (tl.program_id(0),), tl.load_scalar(ids, (r,)) * 0 + (1 << 40) + tl.program_id(0))


def _truncated(a, d):
    """C's (and the GPU's) signed division, which rounds toward zero (numpy's // floors)."""
    return np.where((a % d != 0) & (a < 0), a // d + 1, a // d)


@pytest.mark.parametrize("warps", [1, 4, 8])
@pytest.mark.parametrize("after", STAGES)
def test_int64_tiles(after, warps):
    a = RNG.integers(-(1 << 50), 1 << 50, (60, 64)).astype(np.int64)
    f = (RNG.standard_normal((64, 64)) * 1e12).astype(np.float32)
    f[0, :4] = [1e30, -1e30, np.nan, 3.7]  # saturate, saturate, NaN to -2**63, truncate: cvt.rzi.s64.f32
    o, of = np.full(64, -7, np.int64), np.full((64, 64), -7, np.int64)
    int64_tiles.interpret(a, f, o, of, grid=(1,), BM=64, N=64, after=after, num_warps=warps)
    t = np.zeros((64, 64), np.int64)
    t[:60] = a
    u = t * 3 + _truncated(t, 7) - (t - 5 * _truncated(t, 5))
    u = np.where(u > (1 << 40), u, -u)
    assert (o == u.sum(0) + t.max(1) + (1 << 33)).all()
    assert (of[1:] == f[1:].astype(np.int64) - t[1:]).all()
    assert (of[0, :4] + t[0, :4] == np.array([2**63 - 1, -(2**63), -(2**63), 3], np.int64)).all()


@pytest.mark.parametrize("after", STAGES)
def test_int64_outputs(after):
    """Indices stored as torch's int64 (argmax's), and an int64 element read and written."""
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    ids, copy_of = np.full(8, -1, np.int64), np.full(2, -1, np.int64)
    argmax_ids.interpret(x, ids, copy_of, grid=(2,), BM=4, N=32, after=after)
    assert (ids == x.argmax(1)).all() and (copy_of == (1 << 40) + np.arange(2)).all()


@tl.kernel
def returns(x, o):
    t = tl.load(x, (0,), shape=(8,))
    tl.store(o, (0,), t)
    return t  # MARK-return


@tl.kernel
def scalar_shape(x, o):
    tl.store(o, (0, 0), tl.load(x, (0, 0), shape=(8, x.shape[1])))  # MARK-shape


@tl.kernel
def pointer_add(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr, (0,), tl.load(x_ptr + offs))


@tl.kernel
def offsets_plus_pointer(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr, (0,), tl.load(offs + x_ptr))


@pytest.mark.parametrize("kernel", [pointer_add, offsets_plus_pointer])
def test_pointer_arithmetic_either_way_round(kernel):
    """``x_ptr + offs`` and ``offs + x_ptr`` are Triton's pointers (tests/lang/test_pointers.py has more)."""
    x, o = RNG.standard_normal(8).astype(np.float32), np.full(8, np.nan, np.float32)
    kernel.interpret(x, o, grid=(1,), BLOCK=8)
    np.testing.assert_array_equal(o, x)


def _line(mark: str) -> int:
    return next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if mark in text)


@pytest.mark.parametrize("kernel, args, mark, says", [
    (returns, (np.zeros(8, np.float32), np.zeros(8, np.float32)), "MARK-return", "a kernel returns nothing"),
    (scalar_shape, (np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)), "MARK-shape", "got (8, <scalar index>)"),
], ids=["return", "traced shape"])
def test_errors_point_at_the_line(kernel, args, mark, says):
    with pytest.raises(tl.LangError) as info:
        kernel.interpret(*args, grid=(1,), **({"BLOCK": 8} if "BLOCK" in kernel.signature.parameters else {}))
    assert str(info.value).startswith(f"{__file__}:{_line(mark)}:") and says in str(info.value)


@tl.kernel(num_warps=4, num_stages=3)
def gemm_silu(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN))
    for k in tl.range(0, a.shape[1], BK):
        acc = tl.dot(tl.load(a, (i, k), shape=(BM, BK)), tl.load(b, (k, j), shape=(BK, BN)), acc)
    tl.store(c, (i, j), (acc * tl.sigmoid(acc)).to(c.dtype))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_silu_epilogue_is_one_pass_over_the_accumulator(arch):
    """``acc * tl.sigmoid(acc)`` is one tile.map of ``acc`` (the sigmoid's map fused into the product), so
    no second 128x128 tile is live beside it: ptxas spilled 112 bytes before (session 29's hunt)."""
    from tilec.codegen.ptxas import find_ptxas, kernel_resources
    from tilec.dialects.tile import ops as t

    h = RNG.standard_normal((256, 256)).astype(np.float16)
    module = gemm_silu.ir(h, h, h, BM=128, BN=128, BK=32)
    maps = [op for op in module.walk() if isinstance(op, t.MapOp)]
    assert len(maps) == 1 and not any(isinstance(op, t.MulOp) for op in module.walk())
    c = np.full((100, 72), np.nan, np.float16)
    gemm_silu.interpret(h[:100, :40], h[:40, :72], c, grid=(1, 1), BM=128, BN=128, BK=32, after="tile-distribute")
    acc = h[:100, :40].astype(np.float64) @ h[:40, :72].astype(np.float64)
    assert np.abs(c - acc / (1 + np.exp(-acc))).max() / np.abs(acc).max() < 2e-3
    if find_ptxas() is None:
        pytest.skip("ptxas is not installed (pip install -e '.[test]' brings it)")
    k = gemm_silu.compile(h, h, h, BM=128, BN=128, BK=32, arch=arch)
    used = kernel_resources(k.asm["ptx"], arch)[k.name]
    assert used.spill_stores == 0, used


@tl.kernel(num_warps=8, num_stages=3)
def gemm_gelu(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN))
    for k in tl.range(0, a.shape[1], BK):
        acc = tl.dot(tl.load(a, (i, k), shape=(BM, BK)), tl.load(b, (k, j), shape=(BK, BN)), acc)
    acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))
    tl.store(c, (i, j), acc.to(c.dtype))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_an_erf_gelu_epilogue_is_one_pass_over_the_accumulator(arch):
    """``0.5 * acc`` and ``acc * 0.7071`` (native multiplies by a number) are taken into the erf's map, so
    the map reads ``acc`` alone: before, two more 128x256 f32 tiles were live and ptxas spilled 88 bytes
    (sm_80) and 60 (sm_90a) at 128x256x64 on eight warps (session 31's hunt)."""
    from tilec.codegen.ptxas import find_ptxas, kernel_resources
    from tilec.dialects.tile import ops as t
    from math import erf

    h = RNG.standard_normal((256, 256)).astype(np.float16)
    module = gemm_gelu.ir(h, h, h, BM=128, BN=256, BK=64)
    maps = [op for op in module.walk() if isinstance(op, t.MapOp)]
    assert len(maps) == 1 and not any(isinstance(op, t.MulOp) for op in module.walk())
    c = np.full((100, 72), np.nan, np.float16)
    gemm_gelu.interpret(h[:100, :40], h[:40, :72], c, grid=(1, 1), BM=128, BN=256, BK=64, after="tile-distribute",
                        arch=arch)
    acc = h[:100, :40].astype(np.float64) @ h[:40, :72].astype(np.float64)
    want = 0.5 * acc * (1 + np.vectorize(erf)(acc / np.sqrt(2)))
    assert np.abs(c - want).max() / np.abs(want).max() < 2e-3
    if find_ptxas() is None:
        pytest.skip("ptxas is not installed (pip install -e '.[test]' brings it)")
    k = gemm_gelu.compile(h, h, h, BM=128, BN=256, BK=64, arch=arch)
    assert kernel_resources(k.asm["ptx"], arch)[k.name].spill_stores == 0


@tl.kernel
def promotes(x16, y32, n, s, o16, o32, oi, acc, N: tl.constexpr):
    """Triton's promotion: f16 * an f32 scalar, f16 + f32, f16 + bf16 in f32; integers meeting a Python
    float or divided by `/` in f32; results stored (and atomically added) in the array's type."""
    a, b = tl.load(x16, (0,), shape=(N,)), tl.load(y32, (0,), shape=(N,))
    c = tl.floor(a * 4).to(tl.bfloat16)  # small integers: exact in bf16
    i = tl.arange(0, N)
    tl.store(o16, (0,), a * s + b)  # f32 values into an f16 array
    tl.store(o32, (0,), (a + c) + i * 0.5 + i / n + tl.where(i < 3, i, 0.25) + (i > 5) * 1.5)
    tl.store(oi, (0,), b)  # f32 into an i32 array: truncated
    tl.atomic_add(acc, (0,), a)  # f16 values into an f32 array


@pytest.mark.parametrize("after", STAGES)
def test_triton_type_promotion(after):
    n = 32
    x16 = RNG.standard_normal(n).astype(np.float16)
    y32 = (RNG.standard_normal(n) * 10).astype(np.float32)
    o16, o32, oi = np.full(n, np.nan, np.float16), np.full(n, np.nan, np.float32), np.full(n, -7, np.int32)
    acc = np.ones(n, np.float32)
    promotes.interpret(x16, y32, 7, 1.5, o16, o32, oi, acc, grid=(1,), N=n, after=after)
    i = np.arange(n, dtype=np.float64)
    assert np.abs(o16 - (x16 * 1.5 + y32.astype(np.float64))).max() < 2e-2
    want = x16.astype(np.float64) + np.floor(x16.astype(np.float64) * 4) + i * 0.5 + i / 7 + np.where(i < 3, i, 0.25) + (i > 5) * 1.5
    assert np.abs(o32 - want).max() < 1e-5
    assert (oi == np.trunc(y32).astype(np.int32)).all() and (acc == 1 + x16.astype(np.float32)).all()
    ptx = promotes.compile(x16, y32, 7, 1.5, o16, o32, oi, acc, N=n, arch="sm_80").asm["ptx"]
    assert "cvt.rn.f16.f32" in ptx


@tl.kernel
def promotes_scalars(x16, y32, o, N: tl.constexpr):
    """Run-time scalars promoted too: an f16 reduction meeting f32 values, an f16 scalar with an f32
    one, a comparison's truth value as 0 / 1, an i32 reduction with an i64 one."""
    a, b = tl.load(x16, (0,), shape=(N,)), tl.load(y32, (0,), shape=(N,))
    top = tl.max(a, axis=0)  # an f16 scalar
    both = top + tl.sum(b, axis=0)  # f16 + f32 scalars
    ints = tl.sum(b.to(tl.int32), axis=0) + tl.sum(b.to(tl.int64), axis=0)  # i32 + i64
    tl.store(o, (0,), b - top + both * 0.5 + (top > 0) + ints)


@pytest.mark.parametrize("after", STAGES)
def test_run_time_scalars_are_promoted(after):
    n = 32
    x16 = RNG.standard_normal(n).astype(np.float16)
    y32 = (RNG.standard_normal(n) * 10).astype(np.float32)
    o = np.full(n, np.nan, np.float32)
    promotes_scalars.interpret(x16, y32, o, grid=(1,), N=n, after=after)
    top, b = float(x16.max()), y32.astype(np.float64)
    want = b - top + (top + b.sum()) * 0.5 + (top > 0) + 2 * np.trunc(b).sum()
    assert np.abs(o - want).max() / np.abs(want).max() < 1e-6
    ptx = promotes_scalars.compile(x16, y32, o, N=n, arch="sm_80").asm["ptx"]
    assert "cvt.f32.f16" in ptx and "cvt.s64.s32" in ptx


@tl.kernel
def triton_keywords(x, o, om, oi, bits, N: tl.constexpr, BN: tl.constexpr):
    """Triton's keywords: tl.range's hints, tl.max(return_indices=True), .to(bitcast=True)."""
    s = 0.0
    for c in tl.range(0, N, BN, num_stages=2, loop_unroll_factor=1):
        s = s + tl.sum(tl.load(x, (c,), shape=(BN,)))
    tl.store(o, (0,), s)
    t = tl.load(x, (0,), shape=(N,))
    m, i = tl.max(t, axis=0, return_indices=True)
    tl.store(om, (0,), m)
    tl.store(oi, (0,), i)
    tl.store(bits, (0,), (t.to(tl.int32, bitcast=True) ^ 0x7FFFFF).to(tl.float32, bitcast=True))  # mantissa flipped


@pytest.mark.parametrize("after", STAGES)
def test_triton_keywords(after):
    x = RNG.standard_normal(64).astype(np.float32)
    o, om, oi, bits = (np.full(1, np.nan, np.float32), np.full(1, np.nan, np.float32), np.full(1, -1, np.int32),
                       np.full(64, np.nan, np.float32))
    triton_keywords.interpret(x, o, om, oi, bits, grid=(1,), N=64, BN=16, after=after)
    assert abs(o[0] - x.astype(np.float64).sum()) < 1e-4 and om[0] == x.max() and oi[0] == x.argmax()
    assert (bits.view(np.int32) == (x.view(np.int32) ^ 0x7FFFFF)).all()
    with pytest.raises(tl.LangError, match=r"test_triton_habits.py:\d+:\d+: error: tl.range takes start, stop, step"):
        bad_range_keyword.ir(x, o, N=64)
    with pytest.raises(tl.LangError, match=r"error: a bitcast keeps the bits: tl.float16 and tl.int32 differ in width"):
        bad_bitcast.ir(x, o)


@tl.kernel
def bad_range_keyword(x, o, N: tl.constexpr):
    for c in tl.range(0, N, 16, stages=2):
        tl.store(o, (0,), tl.sum(tl.load(x, (c,), shape=(16,))))


@tl.kernel
def bad_bitcast(x, o):
    tl.store(o, (0,), tl.load(x, (0,), shape=(16,)).to(tl.float16).to(tl.int32, bitcast=True).to(tl.float32))


@tl.kernel
def ported(x, y, o, os, oi, M: tl.constexpr, N: tl.constexpr):
    """Triton's other names: expand_dims, broadcast_to, permute, reshape, fma, softmax, swizzle2d, and
    the hints multiple_of / max_contiguous, static_assert, debug_barrier."""
    tl.static_assert(M % 4 == 0, "M is a multiple of 4")
    r = tl.multiple_of(tl.program_id(0) * M, M)
    t = tl.load(x, (r, 0), shape=(M, N))
    col = tl.max_contiguous(tl.arange(0, N), N)
    bias = tl.broadcast_to(tl.expand_dims(tl.load(y, (0,), shape=(N,)), 0), (M, N))
    u = tl.fma(t, 2.0, bias) + tl.reshape(tl.sum(t, axis=1), (M, 1)) + tl.permute(tl.trans(t), (1, 0)) * col
    tl.debug_barrier()
    tl.store(o, (r, 0), u)
    tl.store(os, (r, 0), tl.softmax(t))
    i, j = tl.swizzle2d(tl.program_id(0), 1, 8, 3, 2)
    tl.store(oi, (tl.program_id(0) * 2,), tl.where(tl.arange(0, 2) == 0, i, j))


def _swizzle2d(i, j, size_i, size_j, size_g):
    ij = i * size_j + j
    group_id, size_gj = ij // (size_g * size_j), size_g * size_j
    off_i = group_id * size_g
    size_g = min(size_i - off_i, size_g)
    ij %= size_gj
    return off_i + ij % size_g, ij // size_g


@pytest.mark.parametrize("after", STAGES)
def test_triton_names(after):
    m, n = 8, 32
    x, y = RNG.standard_normal((2 * m, n)).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    o, os_, oi = np.full_like(x, np.nan), np.full_like(x, np.nan), np.full(4, -1, np.int32)
    ported.interpret(x, y, o, os_, oi, grid=(2,), M=m, N=n, after=after)
    xd = x.astype(np.float64)
    want = xd * 2 + y + xd.sum(1, keepdims=True) + xd * np.arange(n)
    assert np.abs(o - want).max() < 1e-4
    e = np.exp(xd - xd.max(1, keepdims=True))
    assert np.abs(os_ - e / e.sum(1, keepdims=True)).max() < 1e-6
    assert list(oi) == [*_swizzle2d(0, 1, 8, 3, 2), *_swizzle2d(1, 1, 8, 3, 2)]
    with pytest.raises(tl.LangError, match="tl.static_assert failed: M is a multiple of 4"):
        ported.ir(x, y, o, os_, oi, M=6, N=n)


@tl.kernel
def bits_round_trip(x, o, N: tl.constexpr):
    tl.store(o, (0,), tl.load(x, (0,), shape=(N,)).to(tl.float32, bitcast=True).to(tl.int32, bitcast=True))


@pytest.mark.parametrize("after", STAGES)
def test_a_bitcast_keeps_signalling_nans(after):
    """int -> f32 -> int keeps every bit, signalling NaNs' too, as the GPU does (the tile interpreter once
    widened the f32 to a float64, which quiets them)."""
    x = np.array([0x7F800001, 0x7FA00000, 0xFF800001, 0x7FC00000, 0x3F800000] * 4, np.uint32)[:16].view(np.int32)
    o = np.zeros_like(x)
    bits_round_trip.interpret(x, o, grid=(1,), N=16, after=after)
    assert np.array_equal(o, x)


@tl.kernel(num_warps=4)
def counting_down(x, o, n, BN: tl.constexpr, STOP: tl.constexpr):
    """tl.range with a negative step, as Triton runs it (from the last tile back to the first)."""
    acc = tl.zeros((BN,))
    count = 0
    for c in tl.range(n - BN, STOP, -BN):
        acc = acc * 0.5 + tl.load(x, (c,), shape=(BN,))
        count += 1
    tl.store(o, (0,), acc + count)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("n, stop", [(128, -1), (100, -1), (128, 40), (20, -1), (128, 200)])
def test_a_loop_counting_down(after, n, stop):
    x = RNG.standard_normal(256).astype(np.float32)
    want, count = np.zeros(32), 0
    for c in range(n - 32, stop, -32):
        want = want * 0.5 + np.array([x[c + j] if 0 <= c + j < 256 else 0.0 for j in range(32)])
        count += 1
    o = np.full(32, np.nan, np.float32)
    counting_down.interpret(x, o, n, grid=(1,), BN=32, STOP=stop, after=after)
    assert np.abs(o - (want + count)).max() < 1e-5


@tl.kernel
def expanded_reductions(x, o, N: tl.constexpr):
    """``v[:, None]`` (and keep_dims results) reduced, scanned and asked for its shape, as Triton's 2-D value."""
    v = tl.load(x, (0,), shape=(N,))
    e = v[:, None]
    m = tl.max(tl.load(x, (0,), shape=(N,))[None, :], axis=1, keep_dims=True)  # (1, 1)
    rows, cols = e.shape
    tl.store(o, (0,), e.sum(axis=1) + tl.sum(tl.exp(e) * e, axis=1) + tl.sum(m) + rows * 100 + cols * 1000)
    tl.store(o, (N,), tl.cumsum(e, axis=0).sum(axis=1) + tl.argmax(e, axis=0).sum())


@pytest.mark.parametrize("after", STAGES)
def test_expanded_vectors_are_tiles_to_reductions(after):
    n = 16
    x = RNG.standard_normal(n).astype(np.float32)
    o = np.full(2 * n, np.nan, np.float32)
    expanded_reductions.interpret(x, o, grid=(1,), N=n, after=after)
    xx = x.astype(np.float64)
    assert np.abs(o[:n] - (xx + np.exp(xx) * xx + xx.max() + n * 100 + 1000)).max() < 1e-3
    assert np.abs(o[n:] - (np.cumsum(xx) + np.argmax(xx))).max() < 1e-4


@tl.kernel(num_warps=4)
def half_accumulator(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, OUT: tl.constexpr):
    """An f16 accumulator carried through the K loop, as Triton writes it: tl.dot(..., out_dtype=tl.float16)
    or an f16 acc alone; each step accumulates in f32 and rounds the result to f16."""
    i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k in tl.range(0, a.shape[1], BK):
        x, y = tl.load(a, (i, k), shape=(BM, BK)), tl.load(b, (k, j), shape=(BK, BN))
        acc = tl.dot(x, y, acc, out_dtype=tl.float16) if OUT else tl.dot(x, y, acc)
    tl.store(c, (i, j), acc)


@pytest.mark.parametrize("after, arch", [(None, None), ("tile-distribute", "sm_80"), ("tile-distribute", "sm_90a")])
@pytest.mark.parametrize("out", [True, False])
def test_a_half_precision_accumulator(after, arch, out):
    a, b = RNG.standard_normal((100, 70)).astype(np.float16), RNG.standard_normal((70, 90)).astype(np.float16)
    c = np.full((100, 90), np.nan, np.float16)
    half_accumulator.interpret(a, b, c, grid=(2, 2), BM=64, BN=64, BK=32, OUT=out, after=after, arch=arch)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 3e-3


@tl.kernel(num_warps=1)
def signed_index_math(o, N: tl.constexpr):
    """``pid - 3`` may be negative: ``//``, ``%`` and ``tl.minimum`` on it are the signed ops (rounding
    toward zero, as C's and Triton's); on ids alone they stay the unsigned ops (``nonnegative``)."""
    pid = tl.program_id(0)
    d = pid - 3
    tl.store(o, (pid, 0), tl.minimum(d, 1))
    tl.store(o, (pid, 1), d // 2)
    tl.store(o, (pid, 2), d % 2)
    tl.store(o, (pid, 3), pid // 2 + pid % 4 + tl.minimum(pid, 2))
    tl.store(o, (pid, 4), (pid * 3000000000 + 7) // 1000000)  # an index past int32, then to int64
    tl.store(o, (pid, 5), (d if pid > 2 else pid + 10) * 2)   # a conditional expression on a traced scalar
    tl.store(o, (pid, 6), tl.cast(d, tl.int64) if N > 3 else 0)


@pytest.mark.parametrize("after", STAGES)
def test_signed_index_math_conditional_expressions_and_wide_indices(after):
    o = np.full((6, 7), -99, np.int64)
    signed_index_math.interpret(o, grid=(6,), N=4, after=after)
    p = np.arange(6)
    d = p - 3
    q = np.trunc(d / 2).astype(np.int64)
    want = np.stack([np.minimum(d, 1), q, d - 2 * q, p // 2 + p % 4 + np.minimum(p, 2),
                     (p * 3000000000 + 7) // 1000000, np.where(p > 2, d, p + 10) * 2, d], axis=1)
    assert np.array_equal(o, want)
    ir = str(signed_index_math.ir(o, N=4))
    assert "arith.divsi" in ir and "arith.divui" in ir and "arith.minsi" in ir and "arith.minui" in ir


def test_triton_names_tilec_lacks_are_errors_at_the_line():
    @tl.kernel
    def asm(x, o):
        v = tl.load(x, (0,), shape=(16,))
        tl.store(o, (0,), tl.dot_scaled(v, None, "e4m3", v, None, "e4m3"))  # MARK-asm

    x = np.zeros(16, np.float32)
    with pytest.raises(tl.LangError) as info:
        asm.ir(x, x)
    assert str(info.value).startswith(f"{__file__}:{_line('MARK-asm')}:")
    assert "tl.dot_scaled is not in tilec.lang" in str(info.value)
    assert not hasattr(tl, "dot_scaled") and hasattr(tl, "cast")
    with pytest.raises(tl.LangError, match=r"'a if c else b' with c a tile .*use tl.where\(c, a, b\)"):
        @tl.kernel
        def tile_condition(x, o):
            t = tl.load(x, (0, 0), shape=(4, 4))
            tl.store(o, (0, 0), t if t > 0 else -t)

        tile_condition.ir(np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32))


@tl.kernel
def wide_arguments(o, seed, n, SEED: tl.constexpr):
    """A number argument past int32 is an i64 (Triton's rule): a 64-bit seed's both words reach Philox,
    as the same seed given as a constexpr does; an i64 quotient."""
    offs = tl.arange(0, 16)
    tl.store(o, (0,), tl.rand(seed, offs) - tl.rand(SEED, offs) + (n // 1000000000).to(tl.float32))


@pytest.mark.parametrize("after", STAGES)
def test_int_arguments_past_int32_are_int64(after):
    o = np.full(16, np.nan, np.float32)
    wide_arguments.interpret(o, 12345678901, 5 * 10**9, grid=(1,), SEED=12345678901, after=after)
    assert np.array_equal(o, np.full(16, 5, np.float32))
    small, large = (wide_arguments.specialize(o, s, 1, SEED=1).params[1][1] for s in (7, 1 << 40))
    assert (small, large) == ("i32", "i64")
    with pytest.raises(ValueError, match="does not fit an i64"):
        wide_arguments.specialize(o, 1 << 64, 1, SEED=1)


@tl.kernel
def hinted(x, c, o):
    """Triton's cache hints (taken, left to the compiler), ``sem``/``scope`` on atomics, ``tl.sum(dtype=)``."""
    t = tl.load(x, (0,), shape=(64,), cache_modifier=".cg", eviction_policy="evict_last")
    tl.atomic_add(c, (0,), 1, sem="release", scope="gpu")
    tl.atomic_add(c, (1,), 1, sem="relaxed")
    tl.store(o, (0,), tl.sum(t, dtype=tl.float32), cache_modifier=".cs")


@pytest.mark.parametrize("after", STAGES)
def test_triton_memory_hints_and_orders(after):
    x = (RNG.standard_normal(64) * 100).astype(np.float16)
    c, o = np.zeros(2, np.int32), np.full(1, np.nan, np.float32)
    hinted.interpret(x, c, o, grid=(3,), after=after)
    assert np.array_equal(c, [3, 3]) and abs(o[0] - x.astype(np.float64).sum()) < 1e-3 * np.abs(x).sum()
    ir = str(hinted.ir(x, c, o))
    assert 'tile.atomic "add" ordered' in ir and ir.count("ordered") == 1


def test_memory_hints_and_orders_tilec_cannot_give_are_errors():
    def kernel(**kw):
        @tl.kernel
        def k(x, c):
            if "volatile" in kw:
                tl.store(x, (0,), tl.load(x, (0,), shape=(16,), volatile=True))
            else:
                tl.atomic_add(c, (0,), 1, **kw)
        return k

    x, c = np.zeros(16, np.float32), np.zeros(1, np.int32)
    with pytest.raises(tl.LangError, match=r"volatile=True\) is not in tilec.lang: .*tl.atomic_add\(view, offsets, 0\)"):
        kernel(volatile=True).ir(x, c)
    with pytest.raises(tl.LangError, match=r"scope='sys'\): tilec's atomics are acquire-release at GPU scope"):
        kernel(scope="sys").ir(x, c)


@tl.kernel
def float_remainder(x, y, o):
    """Triton's ``%`` on floats: C's fmod, the sign of the dividend (LLVM's frem as the GPU computes it)."""
    tl.store(o, (0,), tl.load(x, (0,), shape=(64,)) % tl.load(y, (0,), shape=(64,)) + 0 * (tl.load(x, (0,), shape=(64,)) % 2.5))


@pytest.mark.parametrize("after", STAGES)
def test_float_remainder_is_fmod(after):
    x = (RNG.standard_normal(64) * 10).astype(np.float32)
    y = (RNG.standard_normal(64) * 3).astype(np.float32)
    o = np.full_like(x, np.nan)
    float_remainder.interpret(x, y, o, grid=(1,), after=after)
    assert np.abs(o - np.fmod(x.astype(np.float64), y)).max() < 1e-5 * np.abs(x).max()
    assert (np.sign(o) * np.sign(x) >= 0).all()


@tl.kernel
def nan_extremes(x, y, o):
    """``tl.maximum``/``minimum`` with ``propagate_nan``: ALL (tilec's default) keeps a NaN, NONE ignores it."""
    a, b = tl.load(x, (0,), shape=(32,)), tl.load(y, (0,), shape=(32,))
    tl.store(o, (0, 0), tl.maximum(a, b)[None, :])
    tl.store(o, (1, 0), tl.maximum(a, b, propagate_nan=tl.PropagateNan.NONE)[None, :])
    tl.store(o, (2, 0), tl.minimum(a, b, propagate_nan=tl.PropagateNan.NONE)[None, :])
    tl.store(o, (3, 0), tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)[None, :])


@pytest.mark.parametrize("after", STAGES)
def test_propagate_nan(after):
    x, y = RNG.standard_normal(32).astype(np.float32), RNG.standard_normal(32).astype(np.float32)
    x[::3], y[::4] = np.nan, np.nan
    o = np.zeros((4, 32), np.float32)
    nan_extremes.interpret(x, y, o, grid=(1,), after=after)
    for row, want in enumerate((np.maximum(x, y), np.fmax(x, y), np.fmin(x, y), np.minimum(x, y))):
        assert np.array_equal(o[row], want, equal_nan=True), row


@tl.kernel(num_warps=1)
def review_fixes(x, i, h, o, n, d):
    """A conditional expression runs only the side taken (a guard, an atomic); b = a; a = a + 3 carried
    together; a masked int32 load keeps its type; float % by inf is the dividend; a mask to index is 0/1;
    a counter's // is unsigned (it counts up from 0)."""
    q = n // d if d != 0 else n
    tl.atomic_add(h, (0,), 1) if n > 5 else tl.atomic_add(h, (1,), 1)
    a, b = tl.program_id(0) * 0, tl.program_id(0) * 0
    for k in tl.range(0, n):
        a = a + 3
        b = a
    ints = tl.load(i, (0,), shape=(8,), mask=tl.arange(0, 8) < 5, other=0)
    r = tl.load(x, (0,), shape=(8,)) % float("inf")
    tl.store(o, (0,), r + (ints + q + a * 100 + b + (n > 0).to(tl.index) * 7).to(tl.float32))


@pytest.mark.parametrize("after", STAGES)
def test_the_reviews_findings(after):
    x = RNG.standard_normal(8).astype(np.float32)
    i = np.arange(16777217, 16777225, dtype=np.int32)
    h, o = np.zeros(2, np.int32), np.full(8, np.nan, np.float32)
    review_fixes.interpret(x, i, h, o, 9, 0, grid=(1,), after=after)
    ints = np.where(np.arange(8) < 5, i, 0).astype(np.int64)
    assert np.array_equal(h, [1, 0])
    assert np.array_equal(o, x + (ints + 9 + 2700 + 27 + 7).astype(np.float32))  # in f32, as the kernel adds
    ir = str(review_fixes.ir(x, i, h, o, 9, 0))
    assert "tile.atomic" in ir.split("scf.if")[2] and "tile.atomic" not in ir.split("scf.if")[0]  # inside the if


def test_a_counters_division_is_unsigned():
    @tl.kernel
    def tiles(o, n):
        for t in tl.range(tl.program_id(0), n, 4):
            tl.store(o, (t,), tl.full((1,), 1, tl.int32) * (t // 3 + t % 3))

    ir = str(tiles.ir(np.zeros(4, np.int32), 9))
    assert "arith.divui" in ir and "arith.remui" in ir and "arith.divsi" not in ir


@tl.kernel(num_warps=4, num_stages=2)
def batched_in_the_loop(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Each batch's matrices taken inside the K loop (a[z] in the body), as grouped GEMMs write it."""
    z = tl.program_id(0)
    acc = tl.zeros((BM, BN))
    for k in tl.range(0, a.shape[2], BK):
        acc = tl.dot(tl.load(a[z], (0, k), shape=(BM, BK)), tl.load(b[z], (k, 0), shape=(BK, BN)), acc)
    tl.store(c[z], (0, 0), acc)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("stages", [1, 2])
def test_views_taken_inside_the_k_loop(after, stages):
    a = RNG.standard_normal((2, 64, 64)).astype(np.float16)
    b = RNG.standard_normal((2, 64, 32)).astype(np.float16)
    c = np.full((2, 64, 32), np.nan, np.float32)
    kernel = batched_in_the_loop.with_options(num_stages=stages)
    kernel.interpret(a, b, c, grid=(2,), BM=64, BN=32, BK=32, after=after)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 1e-5
    kernel.compile(a, b, c, BM=64, BN=32, BK=32, arch="sm_80")


@tl.kernel
def divide_a_ragged_window(x, y, o, N: tl.constexpr):
    """The window runs past the arrays: its padded lanes divide by the zeros they read, and their
    results are not stored (on the GPU a value PTX leaves unspecified; the interpreters give -1)."""
    a = tl.load(x, (0,), shape=(N,))
    b = tl.load(y, (0,), shape=(N,))
    tl.store(o, (0,), a // b + a % b)


@pytest.mark.parametrize("after", STAGES)
def test_integer_division_in_padded_lanes(after):
    x = np.arange(1, 101, dtype=np.int32) * 7 - 300
    y = RNG.integers(1, 9, 100).astype(np.int32) * RNG.choice([-1, 1], 100).astype(np.int32)
    o = np.zeros(100, np.int32)
    divide_a_ragged_window.interpret(x, y, o, grid=(1,), N=128, after=after)
    q = np.trunc(x / y).astype(np.int32)
    np.testing.assert_array_equal(o, q + (x - y * q))


@tl.kernel
def sixteen_bit_scalars(x, o, N: tl.constexpr):
    """A bf16 scalar as f16 and back (LLVM has no cast between the two 16-bit types: through f32)."""
    s = tl.sum(tl.load(x, (0,), shape=(N,)).to(tl.bfloat16))
    tl.store(o, (0,), s.to(tl.float16).to(tl.bfloat16).to(tl.float32))


def test_scalars_between_the_16_bit_floats():
    x = np.linspace(-2, 3, 16).astype(np.float32)
    for after in STAGES:
        o = np.full(1, np.nan, np.float32)
        sixteen_bit_scalars.interpret(x, o, grid=(1,), N=16, after=after)
        assert abs(o[0] - x.sum()) < 0.1
    for arch in ("sm_80", "sm_90a"):
        sixteen_bit_scalars.compile(x, o, N=16, arch=arch)


@tl.kernel
def steps_of_either_sign(x, o, start, stop, step, N: tl.constexpr):
    """tl.range with a step known only at run time, which may be negative (an scf.for's may not)."""
    acc = tl.zeros((N,))
    for i in tl.range(start, stop, step):
        acc = acc * 2.0 + tl.load(x, (i * N,), shape=(N,))
    tl.store(o, (0,), acc)


@pytest.mark.parametrize("after", STAGES)
def test_run_time_steps_of_either_sign(after):
    x = RNG.standard_normal(12 * 4).astype(np.float32)
    for start, stop, step in [(5, -1, -2), (0, 11, 3), (0, 12, 3), (3, 3, 1), (5, 9, -1), (9, 2, 2), (11, 0, -4)]:
        ref = np.zeros(4)
        for i in range(start, stop, step):
            ref = ref * 2 + x.reshape(12, 4)[i]
        o = np.full(4, np.nan, np.float32)
        steps_of_either_sign.interpret(x, o, start, stop, step, grid=(1,), N=4, after=after)
        np.testing.assert_allclose(o, ref, rtol=1e-6, atol=1e-6)


@tl.kernel
def tile_valued_other(x, y, o, r, N: tl.constexpr):
    """A masked load whose other= is a tile: outside the array it reads other too, as a number other= does."""
    cols = tl.arange(0, N)
    t = tl.load(x, (r, 0), shape=(4, N), mask=(cols % 3 != 0)[None, :], other=tl.load(y, (0, 0), shape=(4, N)))
    tl.store(o, (0, 0), t)


@pytest.mark.parametrize("after", STAGES)
def test_a_tile_valued_other_outside_the_array(after):
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    y = RNG.standard_normal((4, 8)).astype(np.float32)
    for r in (-2, 3):
        o = np.full((4, 8), np.nan, np.float32)
        tile_valued_other.interpret(x, y, o, r, grid=(1,), N=8, after=after)
        ref = y.copy()
        for i in range(4):
            for j in range(8):
                if 0 <= r + i < 5 and j < 6 and j % 3 != 0:
                    ref[i, j] = x[r + i, j]
        np.testing.assert_array_equal(o, ref)


@tl.kernel
def counters_used_as_values(x, o, n, B: tl.constexpr):
    """Python numbers the loops change, used as traced values in the bodies (Triton's loop-carried values
    are tensors): traced again as scalars."""
    t = tl.load(x, (0,), shape=(B,))
    i = 0
    acc = tl.zeros((B,))
    for _ in tl.range(0, n):
        acc = acc + t * i.to(tl.float32)
        i = i + 1
    j = 0
    while j < n:
        acc = acc + j.to(tl.float32)
        j = j + 1
    tl.store(o, (0,), acc)


@pytest.mark.parametrize("after", STAGES)
def test_counters_used_as_values(after):
    x = RNG.standard_normal(8).astype(np.float32)
    o = np.full(8, np.nan, np.float32)
    counters_used_as_values.interpret(x, o, 4, grid=(1,), B=8, after=after)
    np.testing.assert_allclose(o, x * 6 + 6, rtol=1e-6)


@tl.kernel(num_warps=1)
def python_min_max(o, M, GROUP: tl.constexpr):
    """Python's min / max on run-time scalars (the matmul tutorial's group size): tl.minimum / tl.maximum."""
    g = min(M - tl.program_id(0), GROUP)
    tl.store(o + tl.program_id(0), max(g, 1, GROUP - 5))


@pytest.mark.parametrize("after", STAGES)
def test_python_min_and_max_of_traced_scalars(after):
    o = np.zeros(4, np.int32)
    python_min_max.interpret(o, 3, grid=(4,), GROUP=2, after=after)
    np.testing.assert_array_equal(o, [2, 2, 1, 1])
