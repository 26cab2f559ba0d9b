"""tilec.rms_norm / tilec.layer_norm without a GPU: argument checks, kernels through ptxas, meaning.

The kernels run in the tile interpreter and, after tile-layout and tile-distribute, in the lane
interpreter over a grid of blocks, on rows that end inside a chunk and bands of rows past the view,
against float64 references (NaN-poisoned outputs, fresh random inputs with a nonzero mean).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec
from tilec.codegen.ptxas import assemble, find_ptxas
from tilec.dialects.context import make_context
from tilec.interp import run
from tilec.kernels.norms_ir import NormSpec, build_module
from tilec.kernels.row_tiling import RowTiling, row_tiling
from tilec.passes.registry import build_pipeline


def _reference(kind: str, x, w, b, eps):
    x64 = x.astype(np.float64)
    if kind == "rms":
        return x64 / np.sqrt((x64 ** 2).mean(1, keepdims=True) + eps) * w
    out = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + eps) * w
    return out + b if b is not None else out


def _view(a):
    return [a, *a.shape, *(s // a.itemsize for s in a.strides)]


def test_bad_arguments_name_them():
    x, w = np.ones((4, 300), np.float32), np.ones(300, np.float32)
    with pytest.raises(ValueError, match=r"tilec.layer_norm: weight has shape \(3,\); expected \(300,\)"):
        tilec.layer_norm_kernel(x, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="tilec.rms_norm: x has dtype int32"):
        tilec.rms_norm_kernel(np.ones((4, 5), np.int32), np.ones(5, np.float32))
    with pytest.raises(TypeError, match="tilec.layer_norm: weight is float32 but bias is float16"):
        tilec.layer_norm_kernel(x, w, np.ones(300, np.float16))
    with pytest.raises(ValueError, match=r"tilec.rms_norm: x has shape \(2, 3, 4\)"):
        tilec.rms_norm_kernel(np.ones((2, 3, 4), np.float32), w)


@pytest.mark.parametrize("kind", ["rms", "layer"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("n", [4096, 100000])
def test_kernels_assemble(kind, dtype, n):
    spec = NormSpec(kind, dtype, "float32", tiling=row_tiling(n, dtype), align=(16, 16, 16, 16))
    ptx = tilec.compile(build_module(spec), arch="sm_80", cache=False).asm["ptx"]
    assert "rsqrt.approx" in ptx and "shfl.sync.bfly" in ptx and "bar.sync" in ptx and "ld.global.v4" in ptx
    if find_ptxas() is not None:
        for arch in ("sm_80", "sm_90"):
            assemble(tilec.compile(build_module(spec), arch=arch, cache=False).asm["ptx"], arch)


@pytest.mark.parametrize("kind, bias", [("rms", False), ("layer", True), ("layer", False)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("passes", [1, 2])
def test_meaning_in_both_interpreters(kind, bias, dtype, passes):
    np_dtype = {"float32": np.float32, "float16": np.float16}[dtype]
    spec = NormSpec(kind, dtype, "float32", bias=bias, tiling=row_tiling(300) if passes == 1 else RowTiling(2, 64, 2, 2))
    rng = np.random.default_rng()
    m, n = 7, 300
    x = (rng.standard_normal((m, n)) * 2 + 1).astype(np_dtype)
    w = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32) if bias else None
    eps = 1e-5
    ref = _reference(kind, x, w, b, eps)
    vectors = [w] + ([b] if bias else [])
    grid = (-(-m // spec.rows_per_block), 1, 1)
    tol = 2e-5 if dtype == "float32" else 5e-3
    for lowered in (False, True):
        module = build_module(spec)
        o = np.full((m, n), np.nan, np_dtype)
        if lowered:
            build_pipeline("tile-swizzle,tile-pipeline,tile-layout,tile-distribute").apply(make_context(), module)
            run(module, spec.kernel_name, *_view(x), *[v for a in vectors for v in _view(a)], *_view(o),
                np.float32(eps), grid=grid)
        else:
            run(module, spec.kernel_name, x, *vectors, o, np.float32(eps), grid=grid)
        assert not np.isnan(o).any()
        assert np.abs(o.astype(np.float64) - ref).max() / np.abs(ref).max() < tol


@pytest.mark.parametrize("passes", [1, 2])
def test_layer_norm_keeps_digits_under_a_large_mean(passes):
    """Rows of 1000 + N(0, 1): the variance from the sums (E[x^2] - mean^2 in f32) would be off by
    percents; the one-pass kernel's deviations and the two-pass kernel's merged moments are not."""
    spec = NormSpec("layer", "float32", "float32", bias=False,
                    tiling=row_tiling(300) if passes == 1 else RowTiling(2, 64, 2, 2))
    rng = np.random.default_rng()
    x = (rng.standard_normal((5, 300)) + 1000).astype(np.float32)
    w = np.ones(300, np.float32)
    ref = _reference("layer", x, w, None, 1e-5)
    module = build_module(spec)
    build_pipeline("tile-layout,tile-distribute").apply(make_context(), module)
    o = np.full(x.shape, np.nan, np.float32)
    run(module, spec.kernel_name, *_view(x), *_view(w), *_view(o), np.float32(1e-5), grid=(3, 1, 1))
    assert np.abs(o.astype(np.float64) - ref).max() / np.abs(ref).max() < 1e-4
