"""Triton's other spellings of the math functions (``tl.math``, ``tl.extra.cuda.libdevice``), ``tl.trunc``,
``tl.rint``, ``tl.isnan``, ``tl.umulhi``, and the debugging names (``tl.static_print``, ``tl.assume``,
``tl.device_assert``, ``tl.device_print``), on both interpreters against numpy, and assembled by the
session's ptxas check (tests/conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

libdevice = tl.extra.cuda.libdevice
RNG = np.random.default_rng(20261129)


@tl.kernel(num_warps=1)
def spelled(x, u, y, h, N: tl.constexpr):
    t = tl.load(x, (0,), shape=(N,))
    tl.static_print("tracing spelled, N =", N)
    tl.device_assert(t == t, "no NaN")
    tl.assume(N > 0)
    y_value = libdevice.tanh(t) + tl.math.exp2(t) + tl.trunc(t) + tl.rint(t) + tl.where(tl.isnan(t), 1.0, 0.0)
    tl.store(y, (0,), y_value + libdevice.fmaxf(t, 0.5) + tl.math.pow(tl.abs(t) + 1.0, 1.5))
    a = tl.load(u, (0,), shape=(N,))
    tl.store(h, (0,), tl.umulhi(a, a * 3 + 7))


@tl.kernel
def prints(x):
    tl.device_print("x", tl.load(x, (0,), shape=(32,)))  # MARK-print


@pytest.mark.parametrize("after", (None, "tile-distribute"))
def test_tritons_spellings(after, capsys):
    x = np.linspace(-3, 3, 32).astype(np.float32)
    x[5] = 2.5  # a tie: rint rounds it to even
    x[7] = np.nan
    u = RNG.integers(-2**31, 2**31, 32).astype(np.int32)
    y, h = np.full(32, np.nan, np.float32), np.zeros(32, np.int32)
    spelled.interpret(x, u, y, h, grid=(1,), N=32, after=after)
    ref = (np.tanh(x) + np.exp2(x) + np.trunc(x) + np.rint(x) + np.isnan(x) + np.maximum(x, 0.5)
           + (np.abs(x) + 1.0) ** 1.5)
    ok = ~np.isnan(x)
    assert np.abs(y[ok] - ref[ok]).max() / np.abs(ref[ok]).max() < 1e-5 and np.isnan(y[7])
    product = u.astype(np.uint32).astype(np.uint64) * (u.astype(np.int64) * 3 + 7).astype(np.uint32).astype(np.uint64)
    assert np.array_equal(h, (product >> np.uint64(32)).astype(np.uint32).view(np.int32))


def test_static_print_prints_while_tracing(capsys):
    x = np.zeros(16, np.float32)
    spelled.ir(x, x.astype(np.int32), x, x.astype(np.int32), N=16)  # a specialisation no other test traces
    assert "tracing spelled, N = 16" in capsys.readouterr().out


def test_device_print_is_an_error_at_the_line():
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if "MARK-print" in text)
    with pytest.raises(tl.LangError, match="tl.device_print is not supported") as info:
        prints.ir(np.zeros(32, np.float32))
    assert str(info.value).startswith(f"{__file__}:{line}:")


def test_compiles_for_both_targets():
    x, u = np.zeros(32, np.float32), np.zeros(32, np.int32)
    for arch in ("sm_80", "sm_90"):
        ptx = spelled.compile(x, u, x, u, N=32, arch=arch).asm["ptx"]
        assert "tanh.approx.f32" in ptx and ("mul.hi.u32" in ptx or "mul.wide.u32" in ptx)


@tl.kernel(num_warps=1)
def more_spellings(x, u, y, h, N: tl.constexpr):
    t = tl.load(x, (0,), shape=(N,))
    a = tl.load(u, (0,), shape=(N,))
    tl.store(y, (0,), tl.math.pow(t, 3) + tl.math.pow(t, 2.0) * 0.5 + libdevice.fmaxf(t, tl.where(t > 0, t, float("nan")))
             + tl.sqrt_rn(tl.abs(t)) + tl.div_rn(t, 3.0))
    tl.store(h, (0,), tl.umulhi(a, 12345))
    tl.store(h, (N,), tl.xor_sum(a))  # one element


@tl.kernel
def missing_name(x):
    tl.store(x, (0,), libdevice.j0(tl.load(x, (0,), shape=(32,))))  # MARK-missing


@tl.kernel
def umulhi_of_floats(x):
    tl.store(x, (0,), tl.umulhi(tl.load(x, (0,), shape=(32,)), 3))  # MARK-umulhi


@pytest.mark.parametrize("after", (None, "tile-distribute"))
def test_more_of_tritons_spellings(after):
    x = np.linspace(-3, 3, 32).astype(np.float32)
    u = RNG.integers(-2**31, 2**31, 32).astype(np.int32)
    y, h = np.full(32, np.nan, np.float32), np.zeros(33, np.int32)
    more_spellings.interpret(x, u, y, h, grid=(1,), N=32, after=after)
    ref = x ** 3 + x ** 2 * 0.5 + np.where(x > 0, x, x) + np.sqrt(np.abs(x)) + x / 3  # fmax ignores the NaN
    assert np.abs(y - ref).max() / np.abs(ref).max() < 1e-5
    product = u.astype(np.uint32).astype(np.uint64) * np.uint64(12345)
    assert np.array_equal(h[:32], (product >> np.uint64(32)).astype(np.uint32).view(np.int32))
    assert h[32] == np.bitwise_xor.reduce(u)


@pytest.mark.parametrize("kernel, marker, match", [
    (missing_name, "MARK-missing", r"libdevice.j0 is not in tilec.lang \(it has .*fabs"),
    (umulhi_of_floats, "MARK-umulhi", r"tl.umulhi multiplies int32 or uint32 tiles, vectors or scalars"),
])
def test_names_tilec_lacks_are_errors_at_the_line(kernel, marker, match):
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if marker in text)
    with pytest.raises(tl.LangError, match=match) as info:
        kernel.ir(np.zeros(32, np.float32))
    assert str(info.value).startswith(f"{__file__}:{line}:")
