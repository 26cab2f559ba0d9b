"""``tile-stage``: the lit test's K loop computes the same GEMM before the pass, after it, and lane by
lane after the whole block-level pipeline (staged, swizzled, pipelined, split over the warps and
distributed), on fresh random inputs against float64, the output poisoned with NaN."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilec.api import BLOCK_LEVEL_PIPELINE, make_context
from tilec.dialects.tile import ops as t
from tilec.interp import parse_module, run
from tilec.passes.registry import build_pipeline
from tilec.passes.tile_stage import warpgroup_grid

LIT = Path(__file__).resolve().parents[1] / "lit" / "passes" / "tile-stage" / "stage.mlir"


def _view(x: np.ndarray) -> list:
    """A numpy array as a distributed kernel's (pointer, extents..., strides...) arguments."""
    return [x, *x.shape, *(s // x.itemsize for s in x.strides)]


def _module(name: str | None = None):
    """The lit file's kernels, or only ``name`` (the lane interpreter counts a module's shared buffers
    against each kernel's launch)."""
    module = parse_module(LIT.read_text())
    if name is not None:
        for fn in list(module.ops):
            if fn.sym_name.data != name:
                fn.detach()
    return module


def _after(passes: str, name: str | None = None):
    module = _module(name)
    build_pipeline(passes).apply(make_context(), module)
    return module


@pytest.mark.parametrize("passes", [None, "tile-stage", "tile-stage,tile-swizzle,tile-pipeline{stages=3}",
                                    BLOCK_LEVEL_PIPELINE.removesuffix(",tile-to-llvm")])
@pytest.mark.parametrize("m, n, k", [(64, 64, 32), (100, 70, 65)])
def test_the_staged_loop_computes_the_same_gemm(passes, m, n, k):
    module = _module("gemm") if passes is None else _after(passes, "gemm")
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    out = np.full((m, n), np.nan, np.float32)
    args = (a, b, out) if passes is None or "tile-distribute" not in passes else (*_view(a), *_view(b), *_view(out))
    run(module, "gemm", *args, -(-k // 32) * 32, grid=(-(-m // 64), -(-n // 64), 1))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(out - ref).max() / np.abs(ref).max() < 1e-5


def test_what_is_staged():
    module = _after("tile-stage")
    fns = {op.sym_name.data: op for op in module.ops}
    assert sum(isinstance(op, t.CopyOp) for op in fns["gemm"].walk()) == 2
    assert not any(isinstance(op, t.CopyOp | t.AllocOp) for op in fns["left"].walk())


@pytest.mark.parametrize("passes", [None, "tile-stage", BLOCK_LEVEL_PIPELINE.removesuffix(",tile-to-llvm")])
def test_a_loop_with_its_own_copies_computes_the_same(passes):
    module = _module("mixed") if passes is None else _after(passes, "mixed")
    rng = np.random.default_rng(28)
    a, b = rng.standard_normal((64, 96)).astype(np.float16), rng.standard_normal((96, 64)).astype(np.float16)
    out = np.full((64, 64), np.nan, np.float32)
    args = (a, b, out) if passes is None or "tile-distribute" not in passes else (*_view(a), *_view(b), *_view(out))
    run(module, "mixed", *args, 96, grid=(1, 1, 1))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(out - ref).max() / np.abs(ref).max() < 1e-5


WGMMA_LIT = LIT.with_name("wgmma.mlir")
WGMMA_PASSES = "tile-stage{wgmma=true},tile-swizzle,tile-pipeline{stages=2},tile-layout,tile-distribute"


def _wgmma_module(name: str, passes: str | None):
    module = parse_module(WGMMA_LIT.read_text())
    for fn in list(module.ops):
        if fn.sym_name.data != name:
            fn.detach()
    if passes is not None:
        build_pipeline(passes).apply(make_context(), module)
    return module


@pytest.mark.parametrize("passes", [None, "tile-stage{wgmma=true}", WGMMA_PASSES])
@pytest.mark.parametrize("m, n, k", [(128, 128, 64), (200, 130, 40)])
def test_the_block_wgmma_computes_the_same_gemm(passes, m, n, k):
    """The warpgroup's two bands, on every pass: ragged edges, K not a multiple of the step (zeros)."""
    module = _wgmma_module("gemm", passes)
    if passes is not None:
        assert any(isinstance(op, t.WgmmaOp) for op in module.walk()) == (passes != WGMMA_PASSES)
    rng = np.random.default_rng(m + 3 * n + 7 * k)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    out = np.full((m, n), np.nan, np.float32)
    args = (a, b, out) if passes != WGMMA_PASSES else (*_view(a), *_view(b), *_view(out))
    run(module, "gemm", *args, -(-k // 32) * 32, grid=(-(-m // 128), -(-n // 128), 1))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(out - ref).max() / np.abs(ref).max() < 1e-5


@pytest.mark.parametrize("passes", [None, WGMMA_PASSES])
def test_warpgroups_split_the_block_wgmma_along_m_and_n(passes):
    """Two warpgroups: 64-row bands of a 128x256 product, and 128 columns each of a 64x256 one (B N x K)."""
    module = _wgmma_module("groups", passes)
    rng = np.random.default_rng(29)
    a, b = rng.standard_normal((128, 128)).astype(np.float16), rng.standard_normal((256, 256)).astype(np.float16)
    out = np.full((128, 256), np.nan, np.float32)
    args = (a, b, out) if passes is None else (*_view(a), *_view(b), *_view(out))
    run(module, "groups", *args, 128, grid=(1, 1, 1))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64[:128, :]
    ref[:64] = a64[:64] @ b64[:, :128].T  # the second product is stored over the first one's first rows
    assert np.abs(out - ref).max() / np.abs(ref).max() < 1e-5


def test_warpgroup_grids():
    """As many warpgroups along M as 64-row bands allow, the rest along N where a warpgroup's columns
    are a wgmma's N (on whole swizzle atoms for an N-major B); a chain of dots along M only."""
    assert warpgroup_grid(128, 256, 2) == (2, 1)
    assert warpgroup_grid(64, 256, 2) == (1, 2)
    assert warpgroup_grid(64, 64, 2, n_major=True) is None  # 32 columns start inside a 64-wide atom
    assert warpgroup_grid(64, 128, 2, rows_only=True) is None
    assert warpgroup_grid(128, 128, 2, rows_only=True) == (2, 1)
    assert warpgroup_grid(256, 64, 4, rows_only=True) == (4, 1)
    assert warpgroup_grid(96, 64, 1) is None  # not whole bands
    assert warpgroup_grid(64, 512, 1) is None  # 512 columns in one wgmma
