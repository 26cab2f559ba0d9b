"""float64 arrays and tiles (numpy's default dtype): loads, arithmetic, exact roundings, square roots
and reductions in f64, conversions to f32; the transcendental functions, which tilec computes with
PTX's f32 approximations, are an error at the line for f64 rather than a silent loss of precision.

Run on both interpreters (after tile-distribute: lane by lane) against numpy; the PTX is assembled
by the session's ptxas check (tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)


@tl.kernel(num_warps=2)
def wide(x, y, z, BN: tl.constexpr):
    t = tl.load(x, (0, 0), shape=(16, BN))
    s = tl.sum(t, axis=1)
    tl.store(y, (0, 0), t * 2.0 + tl.floor(t) + s[:, None] / tl.sqrt(tl.abs(t) + 1.0))
    tl.store(z, (0, 0), (t * 3.0).to(tl.float32))


@tl.kernel
def exp64(x, y):
    tl.store(y, (0,), tl.exp(tl.load(x, (0,), shape=(32,))))  # MARK-exp


@pytest.mark.parametrize("after", (None, "tile-distribute"))
def test_float64_tiles(after):
    x = RNG.standard_normal((16, 64)) * 1e3
    y, z = np.full_like(x, np.nan), np.full(x.shape, np.nan, np.float32)
    wide.interpret(x, y, z, grid=(1,), BN=64, after=after)
    ref = x * 2 + np.floor(x) + x.sum(axis=1, keepdims=True) / np.sqrt(np.abs(x) + 1)
    assert np.abs(y - ref).max() / np.abs(ref).max() < 1e-14
    assert np.array_equal(z, (x * 3).astype(np.float32))


def test_float64_compiles_to_f64_instructions():
    x = np.zeros((16, 64))
    for arch in ("sm_80", "sm_90"):
        ptx = wide.compile(x, x, x.astype(np.float32), BN=64, arch=arch).asm["ptx"]
        assert "sqrt.rn.f64" in ptx and "cvt.rmi.f64.f64" in ptx and "ld.global.v2.b64" in ptx


def test_float64_transcendentals_are_an_error_at_the_line():
    x = np.zeros(32)
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if "MARK-exp" in text)
    with pytest.raises(tl.LangError, match=r"tl.exp of float64 values: .* convert to float32 first") as info:
        exp64.ir(x, x)
    assert str(info.value).startswith(f"{__file__}:{line}:")


@tl.kernel(num_warps=1)
def nan_to_int(x, a, b, c, d):
    t = tl.load(x, (0,), shape=(32,))
    tl.store(a, (0,), t.to(tl.int32))
    tl.store(b, (0,), t.to(tl.int16))
    tl.store(c, (0,), t.to(tl.int8))
    tl.store(d, (0,), t.to(tl.float32).to(tl.int32))


@pytest.mark.parametrize("after", (None, "tile-distribute"))
def test_float64_to_integer_conversions_are_the_gpus(after):
    """A NaN from f64 converts to the smallest integer (cvt.rzi.s32.f64, .s16.f64), from f32 to 0; int8 is
    PTX's 16-bit conversion's low byte after the language's clamp: 0 (measured on an H200, session 32)."""
    x = np.full(32, np.nan)
    x[1], x[2], x[3] = 1e20, -1e20, 300.0
    a, b, c, d = (np.zeros(32, t) for t in (np.int32, np.int16, np.int8, np.int32))
    nan_to_int.interpret(x, a, b, c, d, grid=(1,), after=after)
    assert a[:4].tolist() == [-2**31, 2**31 - 1, -2**31, 300] and b[:4].tolist() == [-32768, 32767, -32768, 300]
    assert c[:4].tolist() == [0, 127, -128, 127] and d[:3].tolist() == [0, 2**31 - 1, -2**31]
