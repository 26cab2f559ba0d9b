"""How a register tile's values change along its rows (from column to column): constant, increasing
or decreasing, read off the ops that compute it.

A copy's mask whose every row is true, then false (``falls_along_rows``: Triton's ``offs_k < K -
k * BK``, ``cols < N``, and such tests ANDed with a test of the row) leaves each copied run of a
row a prefix, which ``cp.async``'s source size zero-fills exactly: tile-stage marks such a copy
(``tile.copy ... mask %m prefix``) and tile-distribute then issues its runs with no test and no
element path. Index arithmetic is taken not to wrap, as Triton takes it; the tile interpreter checks
each marked mask's rows.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.ir import Block, Operation, SSAValue

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterVectorType

SAME, UP, DOWN = "same", "up", "down"
"""Along a row: every value the same, never decreasing, never increasing (an i1: false < true)."""

_MAX_DEPTH = 48


def falls_along_rows(mask: SSAValue) -> bool:
    """Whether every row of the i1 tile ``mask`` is true, then false (or all one value)."""
    return _tile(mask, 0) in (SAME, DOWN)


def _flip(trend: str | None) -> str | None:
    return {UP: DOWN, DOWN: UP}.get(trend, trend)


def _sum(a: str | None, b: str | None) -> str | None:
    """The trend of ``a + b`` (and of ``a & b``, ``a | b`` for booleans)."""
    if a is None or b is None:
        return None
    if a == SAME:
        return b
    if b == SAME or a == b:
        return a
    return None


def _positive_constant(v: SSAValue) -> bool:
    c = v.owner
    return isinstance(c, arith.ConstantOp) and isinstance(c.value, IntegerAttr) and c.value.value.data > 0


def _is_true(v: SSAValue) -> bool:
    """Whether ``v`` is the i1 constant true (what ``not`` XORs with)."""
    c = v.owner
    return isinstance(c, arith.ConstantOp) and v.type == IntegerType(1) and isinstance(c.value, IntegerAttr) \
        and c.value.value.data != 0


def _tile(v: SSAValue, depth: int) -> str | None:
    """The trend of a tile or vector along the tile's columns (a vector: along its index)."""
    if depth > _MAX_DEPTH or not isinstance(v.owner, Operation):
        return None
    op = v.owner
    match op:
        case t.IotaOp():
            if isinstance(v.type, RegisterVectorType):
                return UP
            return UP if op.dim.value.data == 1 else SAME
        case t.BroadcastOp():
            return SAME if op.input.type.is_row else _tile(op.input, depth + 1)
        case t.FillOp() | t.ZerosOp():
            return SAME
        case t.ConvertLayoutOp():  # the same values, held otherwise (tile-layout's)
            return _tile(op.input, depth + 1)
        case t.MapOp():
            body = op.body.block
            env = {arg: _tile(x, depth + 1) for arg, x in zip(body.args, op.operands)}
            last = body.last_op
            if not isinstance(last, t.YieldOp) or len(last.operands) != 1:
                return None
            return _scalar(last.operands[0], body, env, depth + 1)
    return None


def _scalar(v: SSAValue, body: Block, env: dict, depth: int) -> str | None:
    """The trend of a value in a ``tile.map`` body whose arguments have the trends ``env``."""
    if depth > _MAX_DEPTH:
        return None
    if v in env:
        return env[v]
    op = v.owner
    if not isinstance(op, Operation) or op.parent_block() is not body:
        return SAME  # read from outside the map: one value for the whole tile
    go = lambda x: _scalar(x, body, env, depth + 1)  # noqa: E731
    match op:
        case arith.ConstantOp():
            return SAME
        case arith.AddiOp() | arith.AddfOp():
            return _sum(go(op.lhs), go(op.rhs))
        case arith.SubiOp() | arith.SubfOp():
            return _sum(go(op.lhs), _flip(go(op.rhs)))
        case arith.MuliOp():
            a, b = go(op.lhs), go(op.rhs)
            if a == SAME and b == SAME:
                return SAME
            if _positive_constant(op.rhs):
                return a
            return b if _positive_constant(op.lhs) else None
        case arith.IndexCastOp() | arith.ExtSIOp() | arith.ExtUIOp() | arith.SIToFPOp():
            return go(op.input)
        case arith.CmpiOp():
            gap = _sum(go(op.lhs), _flip(go(op.rhs)))  # the trend of lhs - rhs
            pred = op.predicate.value.data  # eq ne slt sle sgt sge ult ule ugt uge
            if gap == SAME:
                return SAME
            if pred in (2, 3, 6, 7):  # lhs < rhs: true while lhs - rhs is small
                return _flip(gap)
            if pred in (4, 5, 8, 9):
                return gap
            return None
        case arith.AndIOp() | arith.OrIOp():
            return _sum(go(op.lhs), go(op.rhs))
        case arith.XOrIOp():
            a, b = go(op.lhs), go(op.rhs)
            if _is_true(op.rhs):
                return _flip(a)  # not lhs
            if _is_true(op.lhs):
                return _flip(b)
            return SAME if a == SAME and b == SAME else None
    return None


__all__ = ["DOWN", "SAME", "UP", "falls_along_rows"]
