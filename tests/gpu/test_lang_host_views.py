"""Strided host (numpy) views launched on the GPU: the launcher copies a view from its first element with
its strides kept, and the kernel is specialised on those strides (its unit-stride dimension, its rows'
alignment), so a transposed or sliced view reads the elements it names, through windows or through the
strides a Triton-style kernel is given. Outputs poisoned with NaN; exact references (a copy times 2)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.lang.test_join_split import complex_multiply  # the kernels the CPU tests run, launched here
from tests.lang.test_strided_views import element_strides, scaled_copy, window_copy
from tilec.runtime import has_device, no_device_reason

gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")
RNG = np.random.default_rng(20261129)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("view", ["transposed", "rows skipped", "columns skipped"])
def test_host_views_keep_their_strides_on_the_gpu(view):
    base = RNG.standard_normal((300, 200)).astype(np.float32)
    x = {"transposed": base.T, "rows skipped": base[::2, 1:], "columns skipped": base[:, ::3]}[view]
    y = np.full(x.shape, np.nan, np.float32)
    scaled_copy[(-(-x.shape[0] // 16),)](x, y, *x.shape, *element_strides(x), *element_strides(y), BM=16, BN=512)
    assert np.array_equal(y, x * 2)
    out = np.full(x.shape[::-1], np.nan, np.float32).T
    window_copy[(-(-x.shape[0] // 16),)](x, out, BM=16, BN=512)
    assert np.array_equal(out, x * 2)


@gpu
@pytest.mark.gpu
def test_pairs_side_by_side_split_and_joined():
    """Complex numbers as (re, im) pairs: an (n, 2) tile split into its columns and joined back."""
    n = 10_001
    x, y = (RNG.standard_normal(2 * n).astype(np.float32) for _ in range(2))
    o = np.full(2 * n, np.nan, np.float32)
    complex_multiply[(-(-n // 256),)](x, y, o, n, BLOCK=256)
    ref = (x[0::2] + 1j * x[1::2].astype(np.float64)) * (y[0::2] + 1j * y[1::2].astype(np.float64))
    assert np.abs(o[0::2] - ref.real).max() < 1e-5 and np.abs(o[1::2] - ref.imag).max() < 1e-5
