"""numpy's broadcasting of tiles with an extent of 1: a (1, N) or (M, 1) tile meets an (M, N) one.

Triton kernels load a weight row through ``w_ptr + cols[None, :]`` (a (1, BN) tile) and a per-row value
through ``s_ptr + rows[:, None]`` ((BM, 1)); both stretch where they meet a full tile, in operators,
``tl.where``, masks, stores and ``tl.broadcast_to``, as numpy's and Triton's do. tilec reads the one row
(column) out as a vector (a maximum over one element, exact) and broadcasts that. Each kernel runs on
the tile interpreter and lane by lane after ``tile-distribute``, outputs poisoned, against numpy; the PTX
is assembled by the session's ptxas check.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)
STAGES = (None, "tile-distribute")


@tl.kernel
def stretched(x_ptr, w_ptr, s_ptr, o_ptr, p_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    inside = (rows < M) & (cols < N)
    x = tl.load(x_ptr + rows * N + cols, mask=inside, other=0.0)  # (BM, BN)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0)  # (1, BN)
    s = tl.load(s_ptr + rows, mask=rows < M, other=0.0)  # (BM, 1)
    y = tl.where(w > 0, x * w, s) + s * w  # (1, BN) mask, (BM, 1) * (1, BN) outer product
    tl.store(o_ptr + rows * N + cols, y, mask=inside)
    tl.store(p_ptr + rows * N + cols, tl.broadcast_to(w, (BM, BN)), mask=(rows < M) & (cols < N))


@pytest.mark.parametrize("after", STAGES)
def test_a_row_and_a_column_stretch_to_the_tile(after):
    m, n = 37, 50
    x, w, s = (RNG.standard_normal(shape).astype(np.float32) for shape in ((m, n), n, m))
    o, p = np.full((m, n), np.nan, np.float32), np.full((m, n), np.nan, np.float32)
    stretched.interpret(x, w, s, o, p, m, n, BM=16, BN=64, grid=(3,), after=after)
    ref = np.where(w > 0, x * w, s[:, None]) + s[:, None] * w
    assert np.abs(o - ref).max() <= 1e-6 * np.abs(ref).max()
    assert np.array_equal(p, np.broadcast_to(w, (m, n)))


@tl.kernel
def one_element(x_ptr, o_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rows, cols = tl.arange(0, BM)[:, None], tl.arange(0, BN)[None, :]
    corner = tl.load(x_ptr + rows * 0 + cols * 0 + tl.zeros((1, 1), tl.int32))  # (1, 1)
    tl.store(o_ptr + rows * BN + cols, tl.load(x_ptr + rows * BN + cols) - corner)


@pytest.mark.parametrize("after", STAGES)
def test_a_one_by_one_tile_is_its_element(after):
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    o = np.full_like(x, np.nan)
    one_element.interpret(x, o, BM=8, BN=32, grid=(1,), after=after)
    assert np.array_equal(o, x - x[0, 0])


def test_clashing_extents_are_an_error():
    @tl.kernel
    def clash(x_ptr, o_ptr):
        a = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
        b = tl.load(x_ptr + tl.arange(0, 2)[:, None] + tl.arange(0, 8)[None, :])
        tl.store(o_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], a + b)

    with pytest.raises(tl.LangError, match=r"tiles of shapes \(4, 8\) and \(2, 8\) do not broadcast"):
        clash.ir(np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32))


@pytest.mark.parametrize("arch", ("sm_80", "sm_90a"))
def test_stretched_tiles_compile(arch):
    a = np.zeros((16, 64), np.float32)
    v = np.zeros(64, np.float32)
    stretched.compile(a, v, v, a, a, 16, 64, BM=16, BN=64, arch=arch, num_warps=4)
