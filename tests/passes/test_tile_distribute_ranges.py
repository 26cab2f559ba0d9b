"""tile-distribute's range facts: ``known_range`` bounds window origins, and only provable ones.

The aligned copy path tests ``origin + offset + s < extent`` as one i32 compare
when the origin is provably nonnegative; these tests pin what is provable (the
origins every matmul kernel makes) and what is not (anything that could wrap
or go negative), and that a view may not claim an extent beyond the limit the
proof rests on.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Region

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import EXTENT_LIMIT
from tilec.runtime.gl_views import GlView
from tilec.kernels.gemm_ir import MatmulSpec, build_module
from tilec.passes.tile_distribute.analysis import known_range

IDX = IndexType()


def const(v: int):
    return arith.ConstantOp(IntegerAttr(v, IDX)).result


def test_matmul_origins_are_nonnegative():
    """Every copy origin of the matmul kernel (block offsets, k and k + 2·BK) has a proven lower bound ≥ 0."""
    from tilec.api import _run_pipeline, make_context
    from tilec.kernels.gemm_config import MatmulConfig

    module = build_module(MatmulSpec("float16", "float16", align=16))
    _run_pipeline(make_context(), module, MatmulConfig((128, 128, 64), (2, 2), 3).pipeline_to("tile-pipeline"),
                  "matmul", False)
    origins = [i for op in module.walk() if isinstance(op, t.AsyncCopyOp) for i in op.indices]
    assert len(origins) == 12
    for v in origins:
        r = known_range(v)
        assert r is not None and 0 <= r[0] <= r[1] < 1 << 63, (v, r)


def test_interval_arithmetic():
    a, b = const(5), const(-3)
    assert known_range(arith.AddiOp(a, b).result) == (2, 2)
    assert known_range(arith.SubiOp(a, b).result) == (8, 8)
    assert known_range(arith.MuliOp(a, b).result) == (-15, -15)
    big = const((1 << 62) + 1)
    assert known_range(arith.MuliOp(big, const(2)).result) is None, "could wrap: no range"
    assert known_range(arith.AddiOp(big, big).result) is None


def test_unsigned_ops_need_a_nonnegative_operand():
    neg, four = const(-7), const(4)
    assert known_range(arith.DivUIOp(const(100), four).result) == (25, 25)
    assert known_range(arith.RemUIOp(const(100), four).result) == (0, 3)
    assert known_range(arith.DivUIOp(neg, four).result) is None, "-7 is huge unsigned"
    assert known_range(arith.MinUIOp(neg, four).result) == (0, 4)
    assert known_range(arith.MaxUIOp(neg, four).result) is None


def test_ids_extents_and_loop_counters():
    bid = t.BlockIdOp("x").results[0]
    assert known_range(bid) == (0, (1 << 31) - 1)
    body = Block(arg_types=[IDX])
    body.add_op(scf.YieldOp())
    lb, ub, step = const(0), const(1000), const(64)
    loop = scf.ForOp(lb, ub, step, [], Region(body))
    iv = loop.body.block.args[0]
    assert known_range(iv) == (0, 999)
    assert known_range(arith.AddiOp(iv, const(128)).result) == (128, 1127)
    assert known_range(arith.SubiOp(iv, const(1)).result)[0] == -1, "may be negative: not provable ≥ 0"


def test_unknown_values_have_no_range():
    block = Block(arg_types=[IDX])
    assert known_range(block.args[0]) is None


def test_gl_view_extents_below_the_limit():
    x = np.zeros(4, np.float32)
    GlView(x, (2, 2), (2, 1))
    with pytest.raises(ValueError, match=r"GlView: extent .* must be in \[0, 2\^62\)"):
        GlView(x, (EXTENT_LIMIT, 1), (0, 1))
    with pytest.raises(ValueError, match="GlView: extent -1"):
        GlView(x, (-1, 2), (2, 1))
