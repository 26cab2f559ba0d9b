"""``tl.reduce(x, axis, combine_fn)``: one ``tile.reduce`` whose region is the traced function, lowered as
the built-in reductions are (registers, butterflies, warps through shared memory). Checked against
float64 on the tile-level interpreter and lane by lane after ``tile-distribute``, tiles of one warp and
of the block, rows, columns, everything, a vector; fresh random inputs, outputs poisoned first."""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261130)


@tl.func
def add(a, b):
    return a + b


@tl.func
def abs_max(a, b):
    return tl.maximum(tl.abs(a), tl.abs(b))


@tl.kernel(num_warps=4)
def reductions(x, v, rows, cols, total, BM: tl.constexpr, BN: tl.constexpr):
    t = tl.load(x, (0, 0), shape=(BM, BN))
    tl.store(rows, (0,), tl.reduce(t, 1, add))
    tl.store(cols, (0,), tl.reduce(t, 0, abs_max) + tl.reduce(t, None, lambda a, b: tl.maximum(a, b)))
    tl.store(total, (0,), tl.reduce(tl.load(v, (0,), shape=(BN,)), 0, add) + tl.sum(tl.reduce(t, 1, add)))


@pytest.mark.parametrize("after, arch", [(None, None), ("tile-distribute", "sm_80"), ("tile-distribute", "sm_90a")])
@pytest.mark.parametrize("bm, bn, warps", [(16, 32, 4), (2, 1024, 8), (64, 64, 4), (32, 16, 1)], ids=str)
def test_reductions_with_a_function(after, arch, bm, bn, warps):
    x = RNG.standard_normal((bm, bn)).astype(np.float32)
    v = RNG.standard_normal(bn).astype(np.float32)
    rows, cols, total = (np.full(n, np.nan, np.float32) for n in (bm, bn, 1))
    reductions.with_options(num_warps=warps).interpret(x, v, rows, cols, total, grid=(1,), BM=bm, BN=bn,
                                                       after=after, arch=arch)
    xx = x.astype(np.float64)
    assert np.abs(rows - xx.sum(1)).max() < 1e-5 * np.abs(xx).sum(1).max()
    assert np.array_equal(cols, (np.abs(x).max(0) + x.max()).astype(np.float32))
    assert abs(total[0] - (v.astype(np.float64).sum() + xx.sum())) < 1e-5 * (np.abs(v).sum() + np.abs(xx).sum())


@tl.kernel
def bad_reduce(x, o, FN: tl.constexpr):
    tl.store(o, (0,), tl.reduce(tl.load(x, (0, 0), shape=(4, 8)), 1, FN))


@pytest.mark.parametrize("fn, match", [
    (lambda a, b: tl.zeros((2, 2)), "tl.reduce's combine_fn must return one scalar"),
    (lambda a: a, "tl.reduce's combine_fn is called with two scalars"),
])
def test_a_combine_fn_it_cannot_use_is_an_error_at_the_line(fn, match):
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(tl.LangError, match=match) as e:
        bad_reduce.ir(x, x, FN=fn)
    assert "test_reduce_fn.py" in str(e.value)
