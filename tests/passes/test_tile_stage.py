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
