"""FP8 (``tl.float8_e4m3fn`` / ``tl.float8_e5m2``, Triton's ``float8e4nv`` / ``float8e5``) in register tiles.

An FP8 value is loaded, stored, converted and multiplied by the tensor cores; arithmetic on it is typed
as Triton types it and done in f32 (PTX has none on 8-bit floats). Conversions into FP8 round to nearest and saturate, as PTX's only
conversion into FP8 (``cvt.rn.satfinite``, Triton's) does. ``tl.dot`` of FP8 tiles is the FP8 warpgroup
MMA on sm_90a where both operands are staged K-major, else ``mma.sync.m16n8k32`` of FP8 (sm_89 on);
sm_80 code refuses both with a message naming the instruction.

The quantizer, the matmul tutorial and the linear layer are examples/lang/fp8.py's. Numpy has no FP8:
the arrays are ``ml_dtypes``' (what JAX uses), which ``interpret`` reads and writes as it holds FP8
(float32 copies of the values). Each kernel runs on the tile interpreter and lane by
lane after ``tile-distribute``, outputs poisoned first, against float64 references; the PTX is
assembled by the session's ptxas check (tests/conftest.py).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tilec.lang as tl
from tilec.api import CompilationError
from tilec.interp.dtypes import round_bf16
from tilec.ir.float8 import f8_bits, f8_values, saturated_f8

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (the test extra) gives numpy its FP8 dtypes")

_spec = importlib.util.spec_from_file_location(
    "lang_example_fp8", Path(__file__).resolve().parents[2] / "examples" / "lang" / "fp8.py")
ex = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ex)

RNG = np.random.default_rng(20261130)
STAGES = (None, "tile-distribute")
FP8 = {"e4m3": (ml_dtypes.float8_e4m3fn, "f8E4M3FN"), "e5m2": (ml_dtypes.float8_e5m2, "f8E5M2")}


def rel_err(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert not np.isnan(got).any(), "an output was not written"
    return np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)


def nan_fp8(shape, dtype):
    return np.full(shape, np.nan, np.float32).astype(dtype)


# ---------------------------------------------------------------- conversions


@pytest.mark.parametrize("after", STAGES)
def test_quantize_and_dequantize_rows(after):
    m, n = 48, 96
    x = (RNG.standard_normal((m, n)) * 3).astype(np.float16)
    q, s = nan_fp8((m, n), ml_dtypes.float8_e4m3fn), np.full(m, np.nan, np.float32)
    ex.quantize_rows.interpret(x, q, s, grid=(m // 16,), BM=16, N=n, after=after)
    ref_scale = np.abs(x.astype(np.float32)).max(1) / np.float32(448.0)
    assert rel_err(s, ref_scale) < 1e-6
    expected = f8_values(f8_bits(x.astype(np.float32) / s[:, None], "f8E4M3FN"), "f8E4M3FN")
    assert np.array_equal(q.astype(np.float64), expected)  # rounded to nearest even, each value
    y = np.full((m, n), np.nan, np.float16)
    ex.dequantize_rows.interpret(q, s, y, grid=(m // 16,), BM=16, N=n, after=after)
    assert rel_err(y, x) < 2**-3  # E4M3 keeps 3 mantissa bits


@tl.kernel(num_warps=1)
def converted(x, o8, o16, B: tl.constexpr):
    """Into FP8 (from f32, f16 and bf16), and back into f16."""
    v = tl.load(x, (0,), shape=(B,))
    tl.store(o8, (0,), v.to(o8.dtype))
    tl.store(o8, (B,), v.to(tl.float16).to(o8.dtype))
    tl.store(o8, (2 * B,), v.to(tl.bfloat16).to(o8.dtype))
    tl.store(o16, (0,), v.to(o8.dtype).to(tl.float16))


@pytest.mark.parametrize("kind", FP8)
@pytest.mark.parametrize("after", STAGES)
def test_conversions_round_to_nearest_and_saturate(kind, after):
    """Past the largest finite value (and infinities) a conversion gives the largest value; NaN stays."""
    dtype, name = FP8[kind]
    top = float(ml_dtypes.finfo(dtype).max)
    x = np.concatenate([RNG.standard_normal(26) * 10, [top * 1.02, -top * 1.5, np.inf, -np.inf, np.nan, 0.0]])
    x = x.astype(np.float32)
    o8, o16 = nan_fp8(96, dtype), np.full(32, 7.0, np.float16)
    converted.interpret(x, o8, o16, grid=(1,), B=32, after=after)
    sat = f8_values(f8_bits(saturated_f8(x, name), name), name)
    got = o8.astype(np.float64)
    with np.errstate(over="ignore"):  # f16 overflows to infinity, which then saturates
        halves = x.astype(np.float16)
    for part, source in ((got[:32], x), (got[32:64], halves), (got[64:], round_bf16(x))):
        want = f8_values(f8_bits(saturated_f8(source.astype(np.float64), name), name), name)
        assert np.array_equal(part, want, equal_nan=True)
    assert np.array_equal(o16.astype(np.float64), sat, equal_nan=True)
    assert got[26] == top and got[27] == -top and got[28] == top and got[29] == -top and np.isnan(got[30])


@tl.kernel(num_warps=4)
def fp8_arithmetic(x, y, z, o, B: tl.constexpr):
    """Triton's types: FP8 with the same FP8 type (or a Python number) stays FP8, computed in f32 and rounded
    back; with the other FP8 type it is f16; with f32, f32. A maximum comes back as FP8, a sum in f32."""
    a, b, c = tl.load(x, (0,), shape=(B,)), tl.load(y, (0,), shape=(B,)), tl.load(z, (0,), shape=(B,))
    same, mixed, wide, scaled = a * a, a + b, a * c, a * 3.0
    tl.static_assert(same.dtype == x.dtype and scaled.dtype == x.dtype)
    tl.static_assert(mixed.dtype == tl.float16 and wide.dtype == tl.float32)
    biggest = tl.max(a, axis=0)
    tl.static_assert(biggest.dtype == x.dtype and tl.sum(a, axis=0).dtype == tl.float32)
    tl.store(o, (0,), same.to(tl.float32))
    tl.store(o, (B,), mixed.to(tl.float32))
    tl.store(o, (2 * B,), tl.where(a > b, wide, scaled.to(tl.float32)) + biggest)


@pytest.mark.parametrize("after", STAGES)
def test_arithmetic_on_fp8_follows_tritons_types(after):
    x = (RNG.standard_normal(64) * 4).astype(ml_dtypes.float8_e5m2)
    y = (RNG.standard_normal(64) * 4).astype(ml_dtypes.float8_e4m3fn)
    z = RNG.standard_normal(64).astype(np.float32)
    o = np.full(192, np.nan, np.float32)
    fp8_arithmetic.interpret(x, y, z, o, grid=(1,), B=64, after=after)
    a, b = x.astype(np.float64), y.astype(np.float64)

    def e5m2(v):
        return f8_values(f8_bits(saturated_f8(v, "f8E5M2"), "f8E5M2"), "f8E5M2")

    np.testing.assert_array_equal(o[:64], e5m2(a * a))
    np.testing.assert_array_equal(o[64:128], (a.astype(np.float16) + b.astype(np.float16)).astype(np.float32))
    assert rel_err(o[128:], np.where(a > b, a * z.astype(np.float64), e5m2(a * 3.0)) + a.max()) < 1e-6


# ---------------------------------------------------------------- tl.dot


def _fp8_gemm(kinds, m, n, k, arch, after, block=(64, 64, 64)):
    (ta, _), (tb, _) = FP8[kinds[0]], FP8[kinds[1]]
    a = (RNG.standard_normal((m, k)) * 2).astype(ta)
    w = RNG.standard_normal((n, k)).astype(tb)  # B = w.T, K-major
    c = np.full((m, n), np.nan, np.float16)
    bm, bn, bk = block
    grid, args, consts = ex.tutorial_call(a, w, c, bm, bn, bk)
    ex.matmul_kernel.interpret(*args, grid=grid, arch=arch, after=after, **consts)
    assert rel_err(c, a.astype(np.float64) @ w.astype(np.float64).T) < 2e-3  # the f16 output's rounding
    return ex.matmul_kernel.compile(*args, arch=arch, **consts).asm["ptx"]


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("kind", FP8)
def test_fp8_gemm_on_the_fp8_warpgroup_mma(kind, after):
    """sm_90a: B's K-major pointers are gathered transposed (``orient_gathers``), so both staged tiles are
    K-major and the dot is the FP8 wgmma; K = 160 ends inside a block (the masks)."""
    ptx = _fp8_gemm((kind, kind), 200, 136, 160, "sm_90a", after)
    assert f"wgmma.mma_async.sync.aligned.m64n64k32.f32.{kind}.{kind}" in ptx and "mma.sync" not in ptx
    assert "cp.async.cg.shared.global" in ptx


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("kinds", [("e4m3", "e4m3"), ("e5m2", "e4m3")], ids="x".join)
def test_fp8_gemm_on_mma_sync(kinds, after):
    """sm_90 (no wgmma): ``mma.sync.m16n8k32`` of FP8, the two operands of either type."""
    ptx = _fp8_gemm(kinds, 136, 72, 96, "sm_90", after)
    assert f"mma.sync.aligned.m16n8k32.row.col.f32.{kinds[0]}.{kinds[1]}.f32" in ptx and "wgmma" not in ptx
    assert ".version 8.4" in ptx  # the first PTX ISA with FP8 mma.sync


def test_mixed_fp8_types_stay_on_mma_sync_at_sm_90a():
    ptx = _fp8_gemm(("e4m3", "e5m2"), 64, 64, 64, "sm_90a", None)
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32" in ptx and "wgmma" not in ptx


@pytest.mark.parametrize("after", STAGES)
def test_fp8_linear_layer_on_windows(after):
    m, n, k = 128, 128, 192
    x = (RNG.standard_normal((m, k)) * 2).astype(ml_dtypes.float8_e4m3fn)
    w = RNG.standard_normal((n, k)).astype(ml_dtypes.float8_e4m3fn)
    c = np.full((m, n), np.nan, np.float32)
    ex.linear.interpret(x, w, c, grid=(1, 1), BM=128, BN=128, BK=64, arch="sm_90a", after=after)
    assert rel_err(c, x.astype(np.float64) @ w.astype(np.float64).T) < 1e-6
    ptx = ex.linear.compile(x, w, c, BM=128, BN=128, BK=64, arch="sm_90a").asm["ptx"]
    assert "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3" in ptx


def test_sm_80_code_refuses_fp8_instructions_by_name():
    x = np.zeros(32, np.float32)
    with pytest.raises(CompilationError, match=r"cvt\.rn\.satfinite\.e4m3x2.*needs sm_89 or newer; the target is sm_80"):
        converted.compile(x, np.zeros(96, ml_dtypes.float8_e4m3fn), np.zeros(32, np.float16), B=32, arch="sm_80")
    with pytest.raises(CompilationError, match=r"mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e4m3.*needs sm_89"):
        a, c = np.zeros((64, 64), ml_dtypes.float8_e4m3fn), np.zeros((64, 64), np.float16)
        grid, args, consts = ex.tutorial_call(a, a, c, 64, 64, 64)
        ex.matmul_kernel.compile(*args, arch="sm_80", **consts)
    # sm_89 has them all, in PTX ISA 8.1 (conversions) and 8.4 (mma.sync)
    ptx = converted.compile(x, np.zeros(96, ml_dtypes.float8_e4m3fn), np.zeros(32, np.float16), B=32, arch="sm_89").asm["ptx"]
    assert ".version 8.1" in ptx and ".target sm_89" in ptx
    # E5M2 widens by a shift, which sm_80 has
    ptx = ex.dequantize_rows.compile(np.zeros((16, 64), ml_dtypes.float8_e5m2), np.zeros(16, np.float32),
                                  np.zeros((16, 64), np.float16), BM=16, N=64, arch="sm_80").asm["ptx"]
    assert "e5m2" not in ptx


@tl.kernel(num_warps=1)
def fp8_bits(x, o, back, B: tl.constexpr):
    """An FP8 value's byte and back (``.to(tl.int8, bitcast=True)``)."""
    bits = tl.load(x, (0,), shape=(B,)).to(tl.int8, bitcast=True)
    tl.store(o, (0,), bits)
    tl.store(back, (0,), bits.to(x.dtype, bitcast=True))


@pytest.mark.parametrize("kind", FP8)
@pytest.mark.parametrize("after", STAGES)
def test_bitcasts_keep_the_bytes(kind, after):
    x = (RNG.standard_normal(32) * 10).astype(FP8[kind][0])
    o, back = np.zeros(32, np.int8), nan_fp8(32, FP8[kind][0])
    fp8_bits.interpret(x, o, back, grid=(1,), B=32, after=after)
    assert np.array_equal(o, x.view(np.int8)) and np.array_equal(back.view(np.uint8), x.view(np.uint8))
    fp8_bits.compile(x, o, back, B=32, arch="sm_80")  # no conversion: sm_80 has it
