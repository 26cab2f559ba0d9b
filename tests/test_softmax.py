"""tilec.softmax without a GPU: argument checks, the kernel for each dtype through ptxas, and its meaning.

The kernel (``tilec.kernels.softmax_ir``) runs in the tile interpreter and, after tile-layout and
tile-distribute, in the lane interpreter, over a grid of blocks, on ragged shapes (rows that end
inside a chunk, bands of rows past the view) and on a transposed view (the softmax over dim 0),
against float64 references with NaN-poisoned outputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec
from tilec.codegen.ptxas import assemble, find_ptxas
from tilec.dialects.context import make_context
from tilec.interp import run
from tilec.kernels.row_tiling import RowTiling, row_tiling
from tilec.kernels.softmax_ir import SoftmaxSpec, build_module
from tilec.passes.registry import build_pipeline
from tilec.runtime import has_device


def _reference(x: np.ndarray, axis: int = 1) -> np.ndarray:
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _view(x, shape, strides) -> list:
    return [x, *shape, *strides]


@pytest.mark.parametrize("bad, match", [
    (np.zeros((2, 3), np.int32), "x has dtype int32"),
    (np.zeros((2, 3, 4), np.float32), r"x has shape \(2, 3, 4\); expected 1 or 2 dimensions"),
    (np.zeros((0, 3), np.float32), "x is empty"),
    ([1.0, 2.0], "x must be an array"),
])
def test_bad_arguments_name_them(bad, match):
    with pytest.raises((TypeError, ValueError), match=f"tilec.softmax: {match}"):
        tilec.softmax_kernel(bad)


def test_bad_dim_and_dtype():
    x = np.ones((4, 5), np.float32)
    with pytest.raises(ValueError, match=r"tilec.softmax: dim=2 is not a dimension of x \(shape \(4, 5\)\)"):
        tilec.softmax_kernel(x, dim=2)
    for dim in (True, 1.0, np.float64(1.0)):  # a bool or a float is not a dimension (True was 1)
        with pytest.raises(TypeError, match=r"tilec.softmax: dim must be an integer, got"):
            tilec.softmax_kernel(x, dim=dim)
    with pytest.raises(TypeError, match="tilec.softmax: dtype='int8'"):
        tilec.softmax_kernel(x, dtype="int8")


@pytest.mark.skipif(has_device(), reason="checks the message given when there is no GPU")
def test_no_gpu_is_a_clear_error():
    with pytest.raises(tilec.runtime.NoDeviceError, match="tilec.softmax_kernel"):
        tilec.softmax(np.ones((4, 5), np.float32))


TWO_PASSES = RowTiling(2, 64, 2, 2)
"""A small two-pass tiling (rows longer than 64 columns walk in steps) the interpreters run quickly."""


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [1000, 32768, 100000])
def test_kernels_assemble(dtype, n):
    """One pass (rows up to 32k in registers, the block's warps combined in shared memory), two passes."""
    spec = SoftmaxSpec(dtype, dtype, row_tiling(n), (16, 16))
    kernel = tilec.compile(build_module(spec), arch="sm_80", cache=False)
    ptx = kernel.asm["ptx"]
    assert "ex2.approx.ftz.f32" in ptx and "shfl.sync.bfly" in ptx and "bar.sync" in ptx and "ld.global.v4" in ptx
    if find_ptxas() is not None:
        for arch in ("sm_80", "sm_90"):
            assemble(tilec.compile(build_module(spec), arch=arch, cache=False).asm["ptx"], arch)


@pytest.mark.parametrize("dtype, shape, transposed, passes", [
    ("float32", (70, 150), False, 1),   # 70 rows: the last block's rows end inside the view
    ("float32", (7, 150), False, 2),    # rows that end inside a step
    ("float16", (3, 200), False, 1),
    ("float16", (3, 200), False, 2),
    ("float32", (90, 33), True, 1),     # dim 0: the columns of a 33 x 90 array are the rows
])
def test_meaning_in_both_interpreters(dtype, shape, transposed, passes):
    np_dtype = {"float32": np.float32, "float16": np.float16}[dtype]
    spec = SoftmaxSpec(dtype, dtype, row_tiling(shape[1]) if passes == 1 else TWO_PASSES)
    rng = np.random.default_rng()
    rows, n = shape
    if transposed:
        base = (rng.standard_normal((n, rows)) * 5).astype(np_dtype)
        x, ref = base, _reference(base, axis=0).T
        x_strides = (1, rows)  # row r of the view is column r of base
    else:
        x = (rng.standard_normal(shape) * 5).astype(np_dtype)
        ref, x_strides = _reference(x), (n, 1)
    grid = (-(-rows // spec.rows_per_block), 1, 1)
    tol = 1e-6 if dtype == "float32" else 2e-3
    for lowered in (False, True):
        module = build_module(spec)
        if lowered:
            build_pipeline("tile-swizzle,tile-pipeline,tile-layout,tile-distribute").apply(make_context(), module)
        o = np.full((rows, n), np.nan, np_dtype)
        if lowered:
            run(module, spec.kernel_name, *_view(x, (rows, n), x_strides), *_view(o, (rows, n), (n, 1)), grid=grid)
        elif transposed:
            run(module, spec.kernel_name, np.ascontiguousarray(x.T), o, grid=grid)
        else:
            run(module, spec.kernel_name, x, o, grid=grid)
        assert not np.isnan(o).any()
        assert np.abs(o.astype(np.float64) - ref).max() < tol


def test_two_passes_survive_a_row_that_starts_masked():
    """A row whose first chunks are all -inf (a leading mask) rescales nothing until its first value:
    e^(-inf - -inf) must not poison the running sum (it did: NaN rows)."""
    import numpy as np

    from tilec.kernels.softmax_ir import softmax_rows

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 300)).astype(np.float32)
    x[0, :100] = -np.inf
    o = np.full_like(x, np.nan)
    softmax_rows.interpret(x, o, grid=(1,), ROWS=2, COLS=64, PASSES=2)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    assert np.abs(o - e / e.sum(1, keepdims=True)).max() < 1e-6
