"""``tl.join`` / ``tl.split``: two vectors as the columns of an (n, 2) tile, and back.

Triton's idiom for pairs stored side by side (complex numbers, GPT-J's rotary pairs): load them as an
(n, 2) tile through ``ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :]``, split it into its two columns,
compute, join the results and store them the same way. tilec's tiles are 2-D, so join takes vectors and
split an (n, 2) tile (``tl.interleave`` and ``tl.cat``, which read joins in other shapes, are in
``test_shapes.py``). Both interpreters against numpy; the PTX is assembled by the session's ptxas check.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)
STAGES = (None, "tile-distribute")


@tl.kernel
def complex_multiply(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    pair = offs[:, None] * 2 + tl.arange(0, 2)[None, :]
    inside = offs[:, None] < n
    xr, xi = tl.split(tl.load(x_ptr + pair, mask=inside, other=0.0))
    yr, yi = tl.split(tl.load(y_ptr + pair, mask=inside, other=0.0))
    tl.store(o_ptr + pair, tl.join(xr * yr - xi * yi, xr * yi + xi * yr), mask=inside)


@pytest.mark.parametrize("after", STAGES)
def test_complex_numbers_split_and_joined(after):
    n = 100
    x, y = (RNG.standard_normal(2 * n).astype(np.float32) for _ in range(2))
    o = np.full(2 * n, np.nan, np.float32)
    complex_multiply.interpret(x, y, o, n, BLOCK=64, grid=(2,), after=after)
    ref = (x[0::2] + 1j * x[1::2].astype(np.float64)) * (y[0::2] + 1j * y[1::2].astype(np.float64))
    assert np.abs(o[0::2] - ref.real).max() < 1e-6 and np.abs(o[1::2] - ref.imag).max() < 1e-6


@tl.kernel
def exact_columns(x_ptr, first_ptr, second_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * 2 + tl.arange(0, 2)[None, :])
    a, b = tl.split(x)
    tl.store(first_ptr + rows, a)
    tl.store(second_ptr + rows, b)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_], ids=lambda d: np.dtype(d).name)
def test_split_gives_each_column_exactly(dtype, after):
    n = 32
    if dtype == np.float32:
        x = RNG.standard_normal((n, 2)).astype(dtype)
        x[:4] = [[-0.0, np.nan], [np.inf, -np.inf], [np.nan, -0.0], [-np.inf, 5.0]]
    elif dtype == np.bool_:
        x = RNG.random((n, 2)) < 0.5
    else:
        info = np.iinfo(dtype)
        x = RNG.integers(info.min, info.max, (n, 2), dtype=dtype, endpoint=True)
    first, second = np.zeros(n, dtype), np.zeros(n, dtype)
    exact_columns.interpret(x, first, second, N=n, grid=(1,), after=after)
    for got, want in ((first, x[:, 0]), (second, x[:, 1])):
        assert np.array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))  # bits: -0.0, NaN


def test_join_and_split_take_what_tilec_holds():
    @tl.kernel
    def tile_and_vector(x_ptr):
        t = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :])
        tl.join(t, tl.arange(0, 4))

    with pytest.raises(tl.LangError, match=r"tl.join joins two vectors of one length into an \(n, 2\) tile, or two "
                                           r"tiles of one shape"):
        tile_and_vector.ir(np.zeros(16, np.float32))

    @tl.kernel
    def wide(x_ptr):
        tl.split(tl.load(x_ptr + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :]))

    with pytest.raises(tl.LangError, match=r"tl.split takes a tile whose last extent is 2"):
        wide.ir(np.zeros(16, np.float32))


@pytest.mark.parametrize("arch", ("sm_80", "sm_90a"))
def test_complex_multiply_compiles(arch):
    v = np.zeros(128, np.float32)
    complex_multiply.compile(v, v, v, 64, BLOCK=64, arch=arch)
