"""8- and 16-bit integer arrays and tiles (``tl.int8``, ``tl.int16``): quantize and dequantize kernels,
sums and extremes of int8 tiles (summed in int32 as Triton promotes them, extremes in int8),
wrapping integer arithmetic, and float conversions that saturate (an f32 300.0 is int8 127: PTX
converts into 16 bits at least, so the language clamps first).

Each kernel runs on the tile-level interpreter and lane by lane after ``tile-distribute`` against
numpy on fresh random inputs (outputs poisoned first); the PTX is assembled by the session's ptxas
check (tests/conftest.py).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)
STAGES = (None, "tile-distribute")


@tl.kernel(num_warps=4)
def quantize(x, q, scale, BM: tl.constexpr, BN: tl.constexpr):
    """Row-wise symmetric int8 quantization: q = round(x * 127 / amax), scale = amax / 127."""
    r = tl.program_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, BN))
    amax = tl.max(tl.abs(t), axis=1)
    v = t * (127.0 / amax[:, None])
    tl.store(q, (r, 0), tl.where(v >= 0, v + 0.5, v - 0.5).to(tl.int8))
    tl.store(scale, (r,), amax / 127.0)


@tl.kernel(num_warps=4)
def dequantize(q, scale, out, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM
    t = tl.load(q, (r, 0), shape=(BM, BN)).to(tl.float32)
    tl.store(out, (r, 0), (t * tl.load(scale, (r,), shape=(BM,))[:, None]).to(out.dtype))


@tl.kernel(num_warps=2)
def int8_math(q, sums, extremes, doubled, BM: tl.constexpr, BN: tl.constexpr):
    t = tl.load(q, (0, 0), shape=(BM, BN))
    tl.store(sums, (0,), tl.sum(t, axis=1))  # int32
    tl.store(extremes, (0,), tl.max(t, axis=0))  # int8
    tl.store(extremes, (BN,), tl.min(t, axis=0))
    tl.store(doubled, (0, 0), t + t)  # wraps


@tl.kernel(num_warps=1)
def conversions(x, i, q, qi, h, BN: tl.constexpr):
    t = tl.load(x, (0,), shape=(BN,))
    tl.store(q, (0,), t.to(tl.int8))
    tl.store(qi, (0,), tl.load(i, (0,), shape=(BN,)).to(tl.int8))
    tl.store(h, (0,), t.to(tl.int16) + 1)


@pytest.mark.parametrize("after", STAGES)
def test_quantize_and_dequantize(after):
    x = (RNG.standard_normal((96, 64)) * RNG.uniform(0.1, 10, (96, 1))).astype(np.float32)
    q, scale = np.zeros(x.shape, np.int8), np.full(96, np.nan, np.float32)
    quantize.interpret(x, q, scale, grid=(3,), BM=32, BN=64, after=after)
    amax = np.abs(x).max(axis=1, keepdims=True)
    v = x * (np.float32(127.0) / amax)
    assert np.array_equal(q, np.trunc(np.where(v >= 0, v + 0.5, v - 0.5)).astype(np.int8))
    assert np.allclose(scale, amax[:, 0] / 127, rtol=1e-6)
    out = np.full(x.shape, np.nan, np.float16)
    dequantize.interpret(q, scale, out, grid=(3,), BM=32, BN=64, after=after)
    assert np.abs(out.astype(np.float64) - x).max() / np.abs(x).max() < 1e-2


@pytest.mark.parametrize("after", STAGES)
def test_int8_reductions_and_wrapping(after):
    q = RNG.integers(-128, 128, (16, 32)).astype(np.int8)
    sums, extremes, doubled = np.zeros(16, np.int32), np.zeros(64, np.int8), np.zeros_like(q)
    int8_math.interpret(q, sums, extremes, doubled, grid=(1,), BM=16, BN=32, after=after)
    assert np.array_equal(sums, q.astype(np.int64).sum(axis=1))
    assert np.array_equal(extremes, np.concatenate([q.max(axis=0), q.min(axis=0)]))
    assert np.array_equal(doubled, (q.astype(np.int32) * 2).astype(np.int8))


@pytest.mark.parametrize("after", STAGES)
def test_conversions_saturate_as_the_gpu_does(after):
    x = np.array([300.0, -300.0, 1.7, -1.7, np.nan, 127.9, -128.9, 40000.0] * 4, np.float32)
    i = np.array([300, -300, 127, 128, -129, 255, 256, 65535] * 4, np.int32)
    q, qi, h = np.zeros(32, np.int8), np.zeros(32, np.int8), np.zeros(32, np.int16)
    conversions.interpret(x, i, q, qi, h, grid=(1,), BN=32, after=after)
    assert q[:8].tolist() == [127, -128, 1, -1, 0, 127, -128, 127]
    assert qi[:8].tolist() == [44, -44, 127, -128, 127, -1, 0, -1]  # integer narrowing wraps
    assert h[:8].tolist() == [301, -299, 2, 0, 1, 128, -127, -32768]  # 32767 + 1 wraps


def test_int8_tiles_move_in_16_byte_vectors():
    x, q = np.zeros((64, 64), np.float32), np.zeros((64, 64), np.int8)
    for arch in ("sm_80", "sm_90"):
        ptx = dequantize.compile(q, x[0], x, BM=32, BN=64, arch=arch).asm["ptx"]
        assert "ld.global.v4.b32" in ptx and "ld.global.b8" not in ptx
        ptx = quantize.compile(x, q, x[0], BM=32, BN=64, arch=arch).asm["ptx"]
        assert re.search(r"st\.global\.v4\.b32", ptx) and "st.global.b8" not in ptx
        int8_math.compile(q, np.zeros(16, np.int32), q[0], q, BM=16, BN=32, arch=arch)
        conversions.compile(x[0], np.zeros(32, np.int32), q[0], q[0], np.zeros(32, np.int16), BN=32, arch=arch)
