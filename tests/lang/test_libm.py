"""libdevice's math functions PTX has no instruction for, written in the language (tilec/lang/libm.py):
against numpy's float64 on fresh random inputs and the edges (0, ±1, large, infinities, NaN), on the tile
interpreter and lane by lane after tile-distribute; their PTX is assembled by the session's ptxas check."""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl
from tilec.lang.compat import libdevice

RNG = np.random.default_rng(20261131)
STAGES = (None, "tile-distribute")

CASES = {  # name: (numpy's function, inputs)
    "tan": (np.tan, lambda: np.concatenate([RNG.uniform(-1.4, 1.4, 246), [0, 1e-5, -3e-6, 3.0, -3.0, 10.0, 100.0,
                                                                          0.7853981, -2.356194, 5.5]])),
    "expm1": (np.expm1, lambda: np.concatenate([RNG.standard_normal(240) * 3, [0, 1e-7, -1e-7, 1e-30, 60, -60, 100, -100,
                                                                                 np.inf, -np.inf, 1e-3, -1e-3, 0.5, -0.5, 2, -2]])),
    "log1p": (np.log1p, lambda: np.concatenate([RNG.uniform(-0.99, 10, 240), [0, 1e-7, -1e-7, 1e-30, -1, 1e30, np.inf,
                                                                               1e-3, -1e-3, 0.5, -0.5, 2, 3, 7, 9, 5]])),
    "sinh": (np.sinh, lambda: np.concatenate([RNG.standard_normal(250) * 4, [0, 1e-6, -1e-6, 20, -20, 0.1]])),
    "cosh": (np.cosh, lambda: np.concatenate([RNG.standard_normal(250) * 4, [0, 1e-6, -1e-6, 20, -20, 0.1]])),
    "asin": (np.arcsin, lambda: np.concatenate([RNG.uniform(-1, 1, 248), [0, 1, -1, 0.5, -0.5, 1e-8, 0.9999, -0.9999]])),
    "acos": (np.arccos, lambda: np.concatenate([RNG.uniform(-1, 1, 248), [0, 1, -1, 0.5, -0.5, 1e-8, 0.9999, -0.9999]])),
    "atan": (np.arctan, lambda: np.concatenate([RNG.standard_normal(248) * 5, [0, 1, -1, 1e8, -1e8, np.inf, -np.inf, 0.4]])),
    "cbrt": (np.cbrt, lambda: np.concatenate([RNG.standard_normal(248) * 100, [0, 1, -1, 8, -27, 1e-20, 1e20, np.inf]])),
    "exp10": (lambda v: 10.0 ** v, lambda: RNG.uniform(-10, 10, 256)),
    "log10": (np.log10, lambda: np.concatenate([RNG.uniform(1e-3, 1e3, 254), [1, 10]])),
    "round": (lambda v: np.trunc(v + np.copysign(0.5, v)) * (np.abs(v - np.trunc(v)) >= 0.5) +
              np.trunc(v) * (np.abs(v - np.trunc(v)) < 0.5),
              lambda: np.concatenate([RNG.standard_normal(248) * 10, [0.5, -0.5, 1.5, -2.5, 0.49999997, 2.0, -3.0, 0]])),
}


def _kernel(name: str):
    f = getattr(libdevice, name)

    @tl.kernel(num_warps=2)
    def apply(x, o, B: tl.constexpr):
        tl.store(o, (0,), f(tl.load(x, (0,), shape=(B,))))

    return apply


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy(name, after):
    ref_fn, make = CASES[name]
    x = make().astype(np.float32)
    o = np.full(x.shape, np.nan, np.float32)
    _kernel(name).interpret(x, o, grid=(1,), B=x.size, after=after)
    with np.errstate(all="ignore"):  # what f32 holds of it (past f32's range: infinity)
        ref = ref_fn(x.astype(np.float64)).astype(np.float32).astype(np.float64)
    finite = np.isfinite(ref)
    assert np.array_equal(np.isnan(o), np.isnan(ref)) and np.array_equal(o[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)])
    err = np.abs(o[finite] - ref[finite]) / np.maximum(np.abs(ref[finite]), 1e-30)
    assert err.max() < 4e-6, (name, x[finite][err.argmax()], o[finite][err.argmax()], ref[finite][err.argmax()])
    if after is None:
        for arch in ("sm_80", "sm_90a"):
            assert ".entry" in _kernel(name).compile(x, o, B=x.size, arch=arch).asm["ptx"]


@tl.kernel(num_warps=2)
def two_arguments(y, x, o, p, B: tl.constexpr):
    a, b = tl.load(y, (0,), shape=(B,)), tl.load(x, (0,), shape=(B,))
    tl.store(o, (0,), libdevice.atan2(a, b))
    tl.store(p, (0,), tl.math.hypot(a, b) + tl.where(libdevice.isinf(a * 1e38), 1.0, 0.0))


@pytest.mark.parametrize("after", STAGES)
def test_atan2_hypot_isinf(after):
    y = np.concatenate([RNG.standard_normal(60), [0, 1, -1, 0]]).astype(np.float32)
    x = np.concatenate([RNG.standard_normal(60), [-1, 0, 0, 0]]).astype(np.float32)
    o, p = np.full(64, np.nan, np.float32), np.full(64, np.nan, np.float32)
    two_arguments.interpret(y, x, o, p, grid=(1,), B=64, after=after)
    ref = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    assert np.abs(o - ref).max() < 4e-6 * np.pi
    big = np.isinf(y.astype(np.float32) * np.float32(1e38))
    np.testing.assert_allclose(p, np.hypot(y, x) + big, rtol=2e-6)


def test_f16_inputs_are_computed_in_f32():
    x = RNG.uniform(-1, 1, 64).astype(np.float16)
    o = np.full(64, np.nan, np.float32)
    _kernel("asin").interpret(x, o, grid=(1,), B=64)
    assert np.abs(o - np.arcsin(x.astype(np.float64))).max() < 4e-6
