"""Reductions, register vectors and fast math on the GPU.

``tests/lit/passes/tile-distribute/reductions.mlir`` is one warp's softmax of a 16 x 64 window
(rows past the view read as -inf, row maxima stored as a vector); here it runs on ragged views
through ``tilec.compile`` with fresh random inputs (scaled x30: the max must be subtracted) and
NaN-poisoned outputs, against float64.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilec
from tilec.runtime import driver, has_device, no_device_reason
from tilec.runtime.gl_views import expand

KERNEL = Path(__file__).resolve().parents[1] / "lit" / "passes" / "tile-distribute" / "reductions.mlir"

gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")



@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("rows, cols", [(16, 64), (13, 50), (1, 1), (9, 63)])
def test_softmax_window(rows: int, cols: int) -> None:
    kernel = tilec.compile(KERNEL)
    rng = np.random.default_rng()
    x = (rng.standard_normal((rows, cols)) * 30).astype(np.float32)
    o = np.full((rows, cols), np.nan, np.float32)
    m = np.full(rows, np.nan, np.float32)
    kernel(*expand(kernel, x, o, m))
    x64 = x.astype(np.float64)
    ref = np.exp(x64 - x64.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    assert not np.isnan(o).any() and not np.isnan(m).any()
    np.testing.assert_array_equal(m, x.max(1))
    err = float(np.abs(o - ref).max())
    print(f"\nsoftmax {rows}x{cols} on {driver.get_device(0).name}: max abs error {err:.2e}")
    assert err < 1e-5


MASKS = KERNEL.with_name("masks.mlir")


@gpu
@pytest.mark.gpu
def test_causal_softmax_window() -> None:
    kernel = tilec.compile(MASKS)
    rng = np.random.default_rng()
    x = (rng.standard_normal((40, 70)) * 30).astype(np.float32)
    o = np.full((40, 70), np.nan, np.float32)
    r0, c0 = 20, 10
    kernel(*expand(kernel, x, o, r0, c0))
    w = x[r0:r0 + 16, c0:c0 + 60].astype(np.float64)
    w = np.where(np.arange(c0, c0 + 60)[None, :] <= np.arange(r0, r0 + 16)[:, None], w, -np.inf)
    ref = np.exp(w - w.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    got = o[r0:r0 + 16, c0:c0 + 60]
    assert not np.isnan(got).any()
    err = float(np.abs(got - ref).max())
    print(f"\ncausal softmax on {driver.get_device(0).name}: max abs error {err:.2e}")
    assert err < 1e-5
