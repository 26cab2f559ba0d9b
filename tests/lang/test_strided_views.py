"""Strided numpy views in ``interpret``: run as themselves, with the strides they have.

A transposed or sliced view's strides are the kernel's: a window load reads it through its view, and a
Triton-style kernel given ``x.strides`` reads the same elements (before, ``interpret`` ran a row-major
copy, which such strides then walked wrongly). The launcher copies a host view from its first element
with its strides kept (``runtime/launch.py``), so the specialisation (the unit-stride dimension, the
rows' alignment) is the view's on both. Tile interpreter and lane by lane after ``tile-distribute``.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)
STAGES = (None, "tile-distribute")


@tl.kernel
def scaled_copy(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    inside = (r < M) & (c < N)
    x = tl.load(x_ptr + r * sxm + c * sxn, mask=inside, other=0.0)
    tl.store(y_ptr + r * sym + c * syn, x * 2.0, mask=inside)


@tl.kernel
def window_copy(x, y, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM
    tl.store(y, (r, 0), tl.load(x, (r, 0), shape=(BM, BN)) * 2.0)


def element_strides(a: np.ndarray) -> list[int]:
    return [s // a.itemsize for s in a.strides]


def views():
    base = RNG.standard_normal((40, 30)).astype(np.float32)
    return {"transposed": base.T, "rows skipped": base[::2, 1:], "columns skipped": base[:, ::3]}


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("name", ["transposed", "rows skipped", "columns skipped"])
def test_pointer_kernels_read_views_through_their_strides(name, after):
    x = views()[name]
    y = np.full(x.shape, np.nan, np.float32)
    scaled_copy.interpret(x, y, *x.shape, *element_strides(x), *element_strides(y), BM=16, BN=64,
                          grid=(-(-x.shape[0] // 16),), after=after)
    assert np.array_equal(y, x * 2)
    out = np.full(x.shape[::-1], np.nan, np.float32).T  # written through a transposed view too
    scaled_copy.interpret(x, out, *x.shape, *element_strides(x), *element_strides(out), BM=16, BN=64,
                          grid=(-(-x.shape[0] // 16),), after=after)
    assert np.array_equal(out, x * 2)


@pytest.mark.parametrize("after", STAGES)
def test_windows_of_a_transposed_view(after):
    x = views()["transposed"]
    y = np.full(x.shape, np.nan, np.float32)
    window_copy.interpret(x, y, BM=16, BN=64, grid=(2,), after=after)
    assert np.array_equal(y, x * 2)


def test_a_views_unit_stride_dimension_is_its_own():
    x = views()["transposed"]
    spec = window_copy.specialize(x, np.zeros(x.shape, np.float32), BM=16, BN=64)
    kinds = dict(spec.params)
    assert kinds["x"].unit_dim == 0 and kinds["y"].unit_dim == 1


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn"])
def test_views_of_types_held_as_float32_keep_their_strides_and_signed_zeros(name, after):
    """bf16 and FP8 arrays (ml_dtypes') are held as float32 copies: a strided view's copy has the view's
    strides over a copy of the memory it spans, and a -0.0 written over 0.0 is written back (bits compared)."""
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="numpy's bf16 and FP8 types are ml_dtypes'")
    dt = getattr(ml_dtypes, name)
    base = np.arange(20 * 30, dtype=np.float32).reshape(20, 30) % 64
    x = base.astype(dt)[::2, 1:]
    y = np.zeros((20, 30), dt)[::2, 1:]
    scaled_copy.interpret(x, y, *x.shape, *element_strides(x), *element_strides(y), BM=16, BN=32, grid=(1,),
                          after=after)
    assert np.array_equal(y.astype(np.float32), x.astype(np.float32) * 2)
    zeros = np.zeros((4, 4), dt)
    minus = np.full((4, 4), -0.0, np.float32).astype(dt)
    out = np.zeros((4, 4), dt)
    scaled_copy.interpret(minus, out, 4, 4, 4, 1, 4, 1, BM=16, BN=32, grid=(1,), after=after)
    assert np.signbit(out.astype(np.float32)).all() and not np.signbit(zeros.astype(np.float32)).any()
