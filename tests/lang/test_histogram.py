"""``tl.histogram``: counts of an integer vector's values in bins 0 .. num_bins - 1 (Triton's), masked
elements and values outside the bins counted nowhere; one block's counts added into the array by an
atomic. Both interpreters against ``np.bincount``; the PTX assembled by the session's ptxas check."""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)


@tl.kernel
def pixel_histogram(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(out_ptr + tl.arange(0, BINS), tl.histogram(x, BINS, mask=offs < n))


@pytest.mark.parametrize("after", (None, "tile-distribute"))
@pytest.mark.parametrize("dtype", [np.int32, np.uint8], ids=lambda d: np.dtype(d).name)
def test_histogram_counts_each_bin(dtype, after):
    n, bins = 1000, 64
    x = RNG.integers(0, 80, n).astype(dtype)  # some values past the bins
    out = np.zeros(bins, np.int32)
    pixel_histogram.interpret(x, out, n, BLOCK=256, BINS=bins, grid=(4,), after=after)
    assert np.array_equal(out, np.bincount(x[x < bins].astype(np.int64), minlength=bins))


def test_histogram_takes_integer_vectors():
    @tl.kernel
    def floats(x_ptr):
        tl.histogram(tl.load(x_ptr + tl.arange(0, 16)), 8)

    with pytest.raises(tl.LangError, match="tl.histogram counts an integer vector's values"):
        floats.ir(np.zeros(16, np.float32))


@pytest.mark.parametrize("arch", ("sm_80", "sm_90a"))
def test_histogram_compiles(arch):
    pixel_histogram.compile(np.zeros(64, np.int32), np.zeros(64, np.int32), 64, BLOCK=256, BINS=64, arch=arch)
