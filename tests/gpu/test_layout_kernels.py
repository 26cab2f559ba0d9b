"""The tile-layout kernels on the GPU: attention's P tile as an mma's A operand, and a loop with a bias vector.

``tests/lit/passes/tile-layout/same_function.mlir`` computes O = f16(Q K^T) V: S leaves one mma in the
C fragment and, converted to f16 without a layout conversion (the same function as the A fragment),
feeds the next mma as packed pairs (one ``cvt.rn.f16x2.f32`` per pair). ``fragments.mlir`` carries an
accumulator through a loop and adds a column vector broadcast over it. Both are compiled by
``tilec.compile`` (the pipeline chosen from the IR's level) and launched with fresh random inputs and
NaN-poisoned outputs, against float64 references.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilec
from tilec.runtime import driver, has_device, no_device_reason
from tilec.runtime.gl_views import expand

LIT = Path(__file__).resolve().parents[1] / "lit" / "passes" / "tile-layout"

gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")



def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    x[np.abs(x) < 1e-3] = 0.5  # never zero
    return x.astype(dtype)


def _error(got, ref) -> float:
    assert not np.isnan(got).any(), "some outputs were never written"
    return float(np.abs(got.astype(np.float64) - ref).max() / np.abs(ref).max())


@gpu
@pytest.mark.gpu
def test_p_tile_feeds_the_next_mma() -> None:
    kernel = tilec.compile(LIT / "same_function.mlir")
    assert "cvt.rn.f16x2.f32" in kernel.asm["ptx"]
    rng = np.random.default_rng()
    for _ in range(3):
        q, k, v = (_random(rng, s, np.float16) for s in ((16, 16), (16, 16), (16, 8)))
        o = np.full((16, 8), np.nan, np.float32)
        kernel(*expand(kernel, q, k, v, o))
        s = q.astype(np.float64) @ k.astype(np.float64).T
        ref = s.astype(np.float16).astype(np.float64) @ v.astype(np.float64)
        err = _error(o, ref)
        print(f"\nP V on {driver.get_device(0).name}: max relative error {err:.2e}")
        assert err < 2e-3


@gpu
@pytest.mark.gpu
def test_loop_and_bias_vector() -> None:
    kernel = tilec.compile(LIT / "fragments.mlir")
    rng = np.random.default_rng()
    a, b = _random(rng, (32, 16), np.float16), _random(rng, (16, 16), np.float16)
    bias = _random(rng, 16, np.float32)
    c = np.full((32, 16), np.nan, np.float32)
    kernel(*expand(kernel, a, b, bias, c))
    ref = 4 * (a.astype(np.float64) @ b.astype(np.float64)) + bias
    err = _error(c, ref)
    print(f"\nloop + bias on {driver.get_device(0).name}: max relative error {err:.2e}")
    assert err < 1e-3


CONVERT = Path(__file__).resolve().parents[1] / "lit" / "passes" / "tile-distribute" / "convert.mlir"


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("name", ["permute", "chain"])
def test_layout_conversions(name: str) -> None:
    """A renumbering within each lane, and tf32's C -> A through a per-warp scratch tile."""
    kernel = tilec.compile(CONVERT, kernel=name)
    rng = np.random.default_rng()
    g = _random(rng, (16, 8), np.float32)
    out = np.full((16, 8), np.nan, np.float32)
    kernel(*expand(kernel, g, out))
    if name == "permute":
        np.testing.assert_array_equal(out, g)
        return
    a = g.astype(np.float64)
    ref = (a @ a[:8]) @ a[:8]  # d = A B, e = d B, A and B both read from g
    err = _error(out, ref)
    print(f"\ntf32 chain through shared memory on {driver.get_device(0).name}: max relative error {err:.2e}")
    assert err < 1e-2  # tf32 operands
