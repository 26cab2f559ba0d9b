"""``tl.sum(x)`` / ``tl.max`` / ``tl.min`` without an axis, and of vectors: a total reduction to a
scalar, as in Triton (the row reduction, then the row vector as a tile of one column, then its one
element, ``tile.extract``), and ``tl.store`` of a scalar.

Run on the tile-level interpreter and lane by lane after ``tile-distribute`` against float64 on
fresh random inputs, outputs poisoned with NaN; the PTX is assembled by the session's ptxas check.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261128)
STAGES = (None, "tile-distribute")


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


@tl.kernel(num_warps=4)
def dot_product(x, y, o, N: tl.constexpr):
    """A 1-D kernel: each block a slice of the vectors, a total carried through a loop."""
    acc = 0.0
    for i in tl.range(tl.program_id(0) * N, x.shape[0], tl.num_programs(0) * N):
        acc += tl.sum(tl.load(x, (i,), shape=(N,)) * tl.load(y, (i,), shape=(N,)))
    tl.store(o, (tl.program_id(0),), acc)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("n", [1, 1000, 4096])
def test_a_total_carried_through_a_loop(after, n):
    x, y = rand(n), rand(n)
    o = np.full(3, np.nan, np.float32)
    dot_product.interpret(x, y, o, grid=(3,), N=256, after=after)
    got = o.astype(np.float64).sum()
    ref = x.astype(np.float64) @ y
    assert abs(got - ref) <= 1e-5 * np.abs(x.astype(np.float64) * y).sum()


@tl.kernel(num_warps=2)
def totals(x, o, BM: tl.constexpr, BN: tl.constexpr):
    """Every total reduction of a 2-D tile, the vectors' too, and a scalar in tile arithmetic."""
    t = tl.load(x, (0, 0), shape=(BM, BN))
    tl.store(o, (0,), tl.sum(t))
    tl.store(o, (1,), tl.max(t))
    tl.store(o, (2,), tl.min(t))
    tl.store(o, (3,), tl.sum(tl.max(t, axis=1)))  # a row vector to a scalar
    tl.store(o, (4,), tl.min(tl.sum(t, axis=0), axis=0))  # a column vector, with its one axis named
    centred = t - tl.sum(t) / (BM * BN)  # a scalar meets a tile
    tl.store(o, (5,), tl.max(centred * centred))


def totals_reference(x: np.ndarray) -> list[float]:
    x = x.astype(np.float64)
    c = x - x.mean()
    return [x.sum(), x.max(), x.min(), x.max(1).sum(), x.sum(0).min(), (c * c).max()]


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("bm, bn", [(16, 64), (2, 256), (64, 8)])
def test_every_total(after, bm, bn):
    x = rand(bm, bn) * 3
    o = np.full(6, np.nan, np.float32)
    totals.interpret(x, o, grid=(1,), BM=bm, BN=bn, after=after)
    ref = totals_reference(x)
    assert np.allclose(o, ref, rtol=1e-5, atol=1e-4 * np.abs(x).sum() / x.size), (o, ref)


@tl.kernel(num_warps=1)
def mma_total(a, o, M: tl.constexpr):
    """The total of an mma's accumulator (a warp's fragment)."""
    x = tl.load(a, (0, 0), shape=(M, M))
    tl.store(o, (0,), tl.sum(tl.dot(x, x)))


@pytest.mark.parametrize("after", STAGES)
def test_the_total_of_an_accumulator(after):
    a = rand(32, 32, dtype=np.float16)
    o = np.full(1, np.nan, np.float32)
    mma_total.interpret(a, o, grid=(1,), M=32, after=after)
    ref = (a.astype(np.float64) @ a).sum()
    assert abs(o[0] - ref) <= 1e-5 * np.abs(a.astype(np.float64) @ a).sum()


@tl.kernel(num_warps=2)
def int_reductions(x, o, BM: tl.constexpr, BN: tl.constexpr):
    """int32 tiles: row sums, column maxima, the total minimum and sum (signed, in i32)."""
    t = tl.load(x, (0, 0), shape=(BM, BN))
    tl.store(o, (0, 0), tl.sum(t, axis=1)[:, None] + tl.zeros((BM, BN), tl.int32))
    tl.store(o, (BM, 0), tl.max(t, axis=0)[None, :] + tl.zeros((1, BN), tl.int32))
    tl.store(o, (BM + 1, 0), tl.zeros((1, BN), tl.int32) + tl.min(t))
    tl.store(o, (BM + 2, 0), tl.zeros((1, BN), tl.int32) + tl.sum(t))


@pytest.mark.parametrize("after", STAGES)
def test_int32_reductions(after):
    x = RNG.integers(-1000, 1000, (16, 64), dtype=np.int32)
    o = np.full((19, 64), -7, np.int32)  # no NaN in int32: a value no result here has
    int_reductions.interpret(x, o, grid=(1,), BM=16, BN=64, after=after)
    assert (o[:16] == x.sum(1)[:, None]).all()
    assert (o[16] == x.max(0)).all() and (o[17] == x.min()).all() and (o[18] == x.sum()).all()


def test_compiles_for_both_targets():
    x = rand(64, 64)
    for arch in ("sm_80", "sm_90"):
        totals.compile(x, x[0], BM=16, BN=64, arch=arch)
        dot_product.compile(x[0], x[0], x[0], N=256, arch=arch)
        mma_total.compile(x.astype(np.float16), x[0], M=32, arch=arch)
        int_reductions.compile(x.astype(np.int32), x.astype(np.int32), BM=16, BN=64, arch=arch)


@tl.kernel
def bad_axis(x, o, N: tl.constexpr):
    tl.store(o, (0,), tl.sum(tl.load(x, (0,), shape=(N,)), axis=1))  # MARK-axis


@tl.kernel
def tile_axis(x, o, N: tl.constexpr):
    tl.store(o, (0,), tl.sum(tl.load(x, (0, 0), shape=(2, N)), axis=2))  # MARK-tile-axis


@pytest.mark.parametrize("kernel, marker, match", [
    (bad_axis, "MARK-axis", r"tl.sum of a vector reduces its one axis \(axis=None or 0\), got axis=1"),
    (tile_axis, "MARK-tile-axis", r"tl.sum's axis is 0 \(down the columns\), 1 \(along the rows\) or None"),
])
def test_errors_point_at_the_line(kernel, marker, match):
    x = rand(2, 32) if kernel is tile_axis else rand(32)
    with pytest.raises(tl.LangError, match=match) as info:
        kernel.ir(x, x, N=32)
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if marker in text)
    assert str(info.value).startswith(f"{__file__}:{line}:")


@tl.kernel(num_warps=2)
def arg_extremes(x, o, BM: tl.constexpr, BN: tl.constexpr):
    """tl.argmax/argmin along rows, columns, of the whole tile and of a vector (NaN's index first, ties
    the first), with zeros_like/full_like making the int32 rows they are stored in."""
    t = tl.load(x, (0, 0), shape=(BM, BN), other=float("-inf"))
    tl.store(o, (0, 0), tl.argmax(t, axis=1)[:, None])
    tl.store(o, (0, 1), tl.argmin(tl.where(t == float("-inf"), float("inf"), t), axis=-1)[:, None])
    tl.store(o, (BM, 0), tl.argmax(t, axis=0)[None, :])
    row = tl.zeros_like(tl.sum(t, axis=0)).to(tl.int32)
    tl.store(o, (BM + 1, 0), (tl.argmax(t) + row)[None, :])
    tl.store(o, (BM + 2, 0), (tl.argmin(tl.sum(t, axis=0)) + tl.full_like(row, 0))[None, :])


@pytest.mark.parametrize("after", STAGES)
def test_arg_extremes(after):
    x = RNG.standard_normal((20, 24)).astype(np.float32)
    x[3, 5] = np.nan  # numpy's argmax/argmin point at the first NaN
    x[7, :] = 1.0  # ties: the first
    o = np.full((35, 32), -7, np.int32)
    arg_extremes.interpret(x, o, grid=(1,), BM=32, BN=32, after=after)
    padded = np.full((32, 32), -np.inf, np.float32)
    padded[:20, :24] = x
    assert (o[:20, 0] == np.argmax(x, 1)).all() and (o[:20, 1] == np.argmin(x, 1)).all()
    assert (o[32, :24] == np.argmax(x, 0)).all()
    assert o[33, 0] == np.argmax(padded)  # row-major in the tile
    assert o[34, 0] == np.argmin(padded.sum(0))
