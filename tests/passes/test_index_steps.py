"""passes/index_steps.py: the step of an integer tile along a dimension, read from how it is built."""

from __future__ import annotations

import numpy as np

import tilec.lang as tl
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType
from tilec.passes.index_steps import separable, step_along


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


@tl.kernel
def parts(x, o, n, s, B: tl.constexpr):
    rows = tl.arange(0, 8, axis=0)
    wrapped = (tl.program_id(0) * B + tl.arange(0, B)) % n  # Triton's tutorial's columns: unknown steps
    tl.store(o + (rows[:, None] * s + wrapped[None, :]), tl.zeros((8, B)))  # a row's part plus a column's
    tl.store(o + ((rows[:, None] * s + wrapped[None, :]) * 3 + 1), tl.zeros((8, B)))  # scaled and shifted
    tl.store(o + ((rows[:, None] + wrapped[None, :]) % n), tl.zeros((8, B)))  # a remainder of the sum: not
    tl.store(o + rows[:, None] * wrapped[None, :], tl.zeros((8, B)))  # a product of the parts: not
    tl.store(o + tl.load(x + rows[:, None] * B + tl.arange(0, B)[None, :]).to(tl.int32), tl.zeros((8, B)))  # loaded


def test_tiles_that_are_a_row_part_plus_a_column_part():
    """separable: f(row) + g(col), whatever f and g are (a gathering copy then compares one row's steps)."""
    x = np.zeros(64, np.float32)
    ops = [op for op in parts.ir(x, x, 5, 7, B=16).walk() if isinstance(op, t.ScatterOp)]
    assert [separable(op.indices[0]) for op in ops] == [True, True, False, False, False]
    assert step_along(ops[0].indices[0], 1) is None  # the remainder hides the step itself


def test_a_conversion_of_layout_keeps_the_steps():
    """tile-layout's tile.convert_layout holds the same values otherwise: the steps and the parts read
    through it (so a tile of offsets converted for one use still stores whole vectors)."""
    from xdsl.rewriter import InsertPoint, Rewriter

    x = np.zeros(64, np.float32)
    module = offsets.ir(x, x, 5, 7, B=16).clone()
    # the store at rows * s + cols + 3
    store = [op for op in module.walk() if isinstance(op, t.ScatterOp) and isinstance(op.indices[0].type, RegisterType)][0]
    converted = t.ConvertLayoutOp(store.indices[0], store.indices[0].type)
    Rewriter.insert_op(converted, InsertPoint.before(store))
    assert (step_along(converted.result, 0), step_along(converted.result, 1)) == (None, 1)
    assert separable(converted.result)
