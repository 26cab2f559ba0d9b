"""tilec.ir.walk.walk_ops: xDSL's walk order, as a list."""

from __future__ import annotations

import pytest

from tilec.api import make_context
from tilec.ir.walk import walk_ops
from tilec.kernels.gemm_config import MatmulConfig
from tilec.kernels.gemm_ir import MatmulSpec, build_module
from tilec.passes.registry import build_pipeline


@pytest.fixture(scope="module")
def kernel():
    """A GEMM at the fragment level: a function with a loop, ifs inside it, ops after them."""
    module = build_module(MatmulSpec("float16", "float32"))
    build_pipeline(MatmulConfig((64, 64, 32), (2, 2), 3).pipeline_to("tile-distribute")).apply(make_context(), module)
    return module


@pytest.mark.parametrize("reverse", [False, True])
def test_walk_ops_is_xdsls_walk(kernel, reverse):
    assert walk_ops(kernel, reverse=reverse) == list(kernel.walk(reverse=reverse))
    assert len(walk_ops(kernel)) > 500


def test_the_orders_tile_to_llvm_relies_on(kernel):
    # the pattern walker's worklist taken from its end, and the lowering walk
    assert walk_ops(kernel)[1:] == list(reversed(list(kernel.body.walk(reverse=True, region_first=True))))
    assert walk_ops(kernel, reverse=True)[1:] == list(reversed(list(kernel.body.walk(region_first=True))))
