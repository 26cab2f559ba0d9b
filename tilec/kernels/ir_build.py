"""Building a kernel's tile IR in Python: ops appended to a block through one Builder, results named.

The user-level kernels (softmax, norms) build their IR with the dialect's constructors through this,
so what they print reads like hand-written IR (``%m_new``, ``%alpha``) and no kernel is text.
"""

from __future__ import annotations

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, Float32Type, FloatAttr, IndexType, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from tilec.dialects.abi import ALIGNED_ROWS_ATTR


class OpAppender:
    """Appends ops to the end of ``block``; ``appender(op, "name")`` returns the op's first result."""

    def __init__(self, block: Block):
        self.builder = Builder(InsertPoint.at_end(block))

    def __call__(self, op: Operation, name: str | None = None) -> SSAValue | None:
        self.builder.insert(op)
        if name and op.results:
            op.results[0].name_hint = name
        return op.results[0] if op.results else None

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(value, IndexType())), f"c{value}")

    def f32(self, value: float, name: str) -> SSAValue:
        return self(arith.ConstantOp(FloatAttr(value, Float32Type())), name)


def aligned_rows_attrs(align) -> ArrayAttr | None:
    """The ``arg_attrs`` of a kernel whose arguments promise ``tile.aligned_rows = align[i]`` (0: none;
    arguments past ``align`` promise nothing), None when none does."""
    if not any(align):
        return None
    return ArrayAttr([DictionaryAttr({ALIGNED_ROWS_ATTR: IntegerAttr(a, 64)} if a else {}) for a in align])


__all__ = ["OpAppender", "aligned_rows_attrs"]
