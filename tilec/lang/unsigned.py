"""Which traced integers are unsigned, and which arrays hold booleans.

The IR's integers are signless, as MLIR's and Triton's are: an ``i32`` is 32 bits, and each operation
says how it reads them (``arith.divui`` / ``divsi``, ``cmpi ult`` / ``slt``, ``uitofp`` / ``sitofp``).
Signedness is the language's: ``tl.uint32`` values are the IR's ``i32`` values that the language
divides, shifts, compares, widens and converts as unsigned numbers. This module is the one place that
knows which values those are:

- marked ones: what an operation on unsigned values, ``.to(tl.uint32)``, ``tl.full`` / ``tl.zeros`` /
  ``tl.alloc`` of an unsigned type or an unsigned array argument made (:func:`mark`);
- and what follows from them in the IR, so that no construct has to pass the mark on: a load, gather or
  atomic of an unsigned array (or shared tile), a subview of one, a tile op that moves values without
  computing new ones (broadcast, transpose, layout conversion, extract, a reduction of them), a loop's
  carried value and result (from its initial value) and an ``if``'s result (from either branch: a Python
  number in the other takes its reading; two traced values of different readings are an error).

A constant is never marked (constants are shared by every use of the number); the operation that meets
it gives it its type. Boolean arrays (numpy's and torch's ``bool``, a byte an element) are ``i8``
arrays marked as such: a load reads them as a mask (nonzero), a store writes a mask as 0 / 1.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import Attribute, BlockArgument, OpResult, SSAValue

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import GlobalType, SharedType
from tilec.lang.tracing import Trace, current

_MEMORY_READS = (t.LoadOp, t.LoadScalarOp, t.GatherOp, t.SubviewOp, t.AtomicOp, t.ScatterAtomicOp)
"""Ops whose result holds elements of the array (or shared tile) they read."""

_MOVES = (t.BroadcastOp, t.TransposeOp, t.ReshapeOp, t.SplitOp, t.TakeOp, t.ConvertLayoutOp, t.ExtractOp, t.SliceOp, t.FillOp, t.RowMaxOp, t.RowMinOp,
          t.ColMaxOp, t.ColMinOp, t.RowSumOp, t.ColSumOp, t.ReduceOp, t.ScanOp)
"""Tile ops whose result holds values of their first operand's type, read as it is (a reduction of unsigned
values is computed as the language asks: :func:`tilec.lang.ops` flips the sign bit around a maximum)."""

_DEPTH = 64


def _element(ty: Attribute) -> Attribute:
    return getattr(ty, "element_type", ty)


def _integer(ty: Attribute) -> bool:
    e = _element(ty)
    return isinstance(e, IntegerType) and e.width.data > 1


def mark(value: SSAValue) -> SSAValue:
    """Record that ``value`` (an integer) is unsigned; returns it."""
    current().unsigned.add(value)
    return value


def is_unsigned(value: SSAValue, depth: int = _DEPTH) -> bool:
    """Whether the language reads the integer ``value`` as unsigned (see the module doc)."""
    if depth == 0 or isinstance(value.type, IndexType) or not _integer(value.type):
        return False
    if value in current().unsigned:
        return True
    if isinstance(value, BlockArgument):
        parent = value.owner.parent_op()
        if isinstance(parent, scf.ForOp) and value.index > 0:  # a carried value: as its initial value
            return is_unsigned(parent.iter_args[value.index - 1], depth - 1)
        if isinstance(parent, scf.WhileOp) and value.owner is parent.before_region.block:
            return is_unsigned(parent.arguments[value.index], depth - 1)
        if isinstance(parent, scf.WhileOp):  # the after region's: what the condition passes on
            return _passed_on(parent, value.index, depth)
        return False
    if not isinstance(value, OpResult):
        return False
    op = value.op
    if isinstance(op, _MEMORY_READS):
        return any(isinstance(x.type, GlobalType | SharedType) and is_unsigned(x, depth - 1) for x in op.operands)
    if isinstance(op, _MOVES):
        return is_unsigned(op.operands[0], depth - 1)
    if isinstance(op, t.JoinOp):  # the language joins parts of one type (promoted: u8 with i8 is u8)
        return is_unsigned(op.lhs, depth - 1) or is_unsigned(op.rhs, depth - 1)
    if isinstance(op, scf.ForOp):
        return is_unsigned(op.iter_args[value.index], depth - 1)
    if isinstance(op, scf.WhileOp):  # what the condition passes out
        return _passed_on(op, value.index, depth)
    if isinstance(op, scf.IfOp):  # either branch's (a Python number in the other takes its reading)
        ends = [r.block.last_op for r in (op.true_region, op.false_region) if r.blocks]
        return any(isinstance(end, scf.YieldOp) and is_unsigned(end.operands[value.index], depth - 1) for end in ends)
    return False


def keep_reading(arg: SSAValue, initial: SSAValue) -> SSAValue:
    """A loop body's block argument, read as its initial value is (the loop op that links them is built
    after its body is traced); returns it."""
    return mark(arg) if is_unsigned(initial) else arg


def _passed_on(loop: scf.WhileOp, index: int, depth: int) -> bool:
    cond = loop.before_region.block.last_op
    return isinstance(cond, scf.ConditionOp) and is_unsigned(cond.args[index], depth - 1)


def mark_array(trace: Trace, value: SSAValue, dtype_name: str) -> None:
    """A kernel's array argument of ``dtype_name`` (``uint8`` ..., ``bool``): how its elements are read."""
    if dtype_name.startswith("uint"):
        trace.unsigned.add(value)
    elif dtype_name == "bool":
        trace.booleans.add(value)


def holds_booleans(view: SSAValue, depth: int = _DEPTH) -> bool:
    """Whether ``view`` is (a subview of) a ``bool`` array."""
    if view in current().booleans:
        return True
    owner = view.op if isinstance(view, OpResult) else None
    return depth > 0 and isinstance(owner, t.SubviewOp) and holds_booleans(owner.source, depth - 1)
