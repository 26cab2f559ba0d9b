"""passes/index_steps.py: the step of an integer tile along a dimension, read from how it is built."""

from __future__ import annotations

import numpy as np

import tilec.lang as tl
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType
from tilec.passes.index_steps import step_along


@tl.kernel
def offsets(x, o, n, s, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)          # steps by 1
    rows = tl.arange(0, 8, axis=0)
    cols = tl.arange(0, B)
    tl.store(o + i, tl.load(x + i))
    tl.store(o + (i * 2), tl.load(x + (i % n)))           # by 2; a remainder: unknown
    t = rows[:, None] * s + cols[None, :] + 3             # rows by a run-time stride: unknown along 0, 1 along 1
    tl.store(o + t, tl.load(x + t.to(tl.int64)))
    tl.store(o + (rows[:, None] * 0 + cols[None, :] * 0 + n), tl.zeros((8, B)))  # a tile that does not move


def test_steps_of_the_offsets_kernels_write():
    x = np.zeros(64, np.float32)
    ops = [op for op in offsets.ir(x, x, 5, 7, B=16).walk() if isinstance(op, t.GatherOp | t.ScatterOp)]
    steps = [tuple(step_along(op.indices[0], d) for d in ((0, 1) if isinstance(op.indices[0].type, RegisterType) else (0,)))
             for op in ops]
    assert steps == [(1,), (1,), (None,), (2,), (None, 1), (None, 1), (0, 0)]
