"""How an integer register tile changes from one element to the next along a dimension.

``step_along(v, dim)`` is the constant difference ``v[.., j + 1] - v[.., j]`` along ``dim`` (0 for a
register vector), read from how ``v`` is built: an iota along ``dim`` steps by 1, a tile broadcast from
a vector along the other dimension by 0, a fill by 0; ``tile.map`` bodies add, subtract and multiply
by constants; anything else (a load, a remainder, a loop's carried value) is unknown (None).

``separable(v)`` says whether a 2-D tile is a function of its row plus a function of its column
(``rows[:, None] * stride + cols[None, :]``, whatever each part is: Triton's ``(pid * BN + tl.arange(0,
BN)) % N`` too), so its differences along a row are the same in every row: a gathering copy compares
one row's offsets to know every row's runs consecutive.

``tile-distribute`` reads them for ``tile.gather`` / ``tile.scatter`` and gathering copies: where the offsets (or the last
coordinate, the others not moving) step by 1 along a fragment's run, the run's elements are
consecutive in memory and move as one vector when the addresses allow (Triton's ``x_ptr + offsets``
with ``offsets = start + tl.arange(...)``; its AxisInfo analysis finds the same contiguity).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, BlockArgument, OpResult, SSAValue

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, RegisterVectorType

_SAME_STEP = (arith.ExtSIOp, arith.ExtUIOp, arith.IndexCastOp)
"""Casts that keep consecutive integers consecutive (offsets do not wrap: a wrapped offset is a bug)."""


def step_along(v: SSAValue, dim: int, depth: int = 16) -> int | None:
    """The step of the register tile or vector ``v`` along ``dim``, or None where it is not known."""
    if depth == 0 or not isinstance(v.type, RegisterType | RegisterVectorType):
        return None
    op = v.owner if isinstance(v, OpResult) else None
    match op:
        case t.IotaOp():
            return 1 if op.dim.value.data == dim else 0
        case t.FillOp() | t.ZerosOp():
            return 0
        case t.BroadcastOp():
            src = op.input.type  # a "row" vector holds one value per row: it moves along dim 0
            along = 0 if src.orientation.data == "row" else 1
            return step_along(op.input, 0, depth - 1) if along == dim else 0
        case t.ConvertOp() | t.ConvertLayoutOp():  # the same values (another type; held otherwise)
            return step_along(op.input, dim, depth - 1)
        case t.AddOp() | t.SubOp():
            a, b = (step_along(x, dim, depth - 1) for x in (op.lhs, op.rhs))
            return None if a is None or b is None else (a + b if isinstance(op, t.AddOp) else a - b)
        case t.MapOp():
            steps = {arg: step_along(x, dim, depth - 1) for arg, x in zip(op.body.block.args, op.inputs)}
            return _in_body(op.body.block.last_op.operands[0], op.body.block, steps, depth - 1)
    return None


def _constant(v: SSAValue) -> int | None:
    op = v.owner if isinstance(v, OpResult) else None
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _in_body(v: SSAValue, body: Block, steps: dict[SSAValue, int | None], depth: int) -> int | None:
    """The step of a scalar of a map's body: its block arguments step as their tiles do; values from
    outside the body (the kernel's scalars) and constants do not move."""
    if isinstance(v, BlockArgument):
        return steps.get(v) if v.block is body else 0
    op = v.owner
    if op.parent_block() is not body:
        return 0  # computed outside the map: the same for every element
    if depth == 0:
        return None
    if isinstance(op, arith.ConstantOp):
        return 0
    if op.regions:  # an scf.if / scf.for in the body: what it yields is not in its operands
        return None
    inner = [_in_body(x, body, steps, depth - 1) for x in op.operands]
    if isinstance(op, _SAME_STEP):
        return inner[0]
    if isinstance(op, arith.AddiOp | arith.SubiOp):
        a, b = inner
        return None if a is None or b is None else (a + b if isinstance(op, arith.AddiOp) else a - b)
    if isinstance(op, arith.MuliOp):
        a, b = inner
        if a == 0 and b == 0:
            return 0
        for s, other in ((a, op.rhs), (b, op.lhs)):
            c = _constant(other)
            if s is not None and c is not None:
                return s * c
        return None
    if all(s == 0 for s in inner):  # any op of values that do not move does not move
        return 0
    return None


_CONST, _ROW, _COL, _SUM = "const", "row", "col", "sum"
"""How a tile's elements depend on their coordinates (:func:`_parts`): not at all, on the row only, on the
column only, or as a sum of a function of each."""


def separable(v: SSAValue, depth: int = 16) -> bool:
    """Whether the 2-D register tile ``v`` is ``f(row) + g(col)`` (see the module docstring)."""
    return isinstance(v.type, RegisterType) and _parts(v, depth) is not None


def _combined(kind: type, a: str | None, b: str | None) -> str | None:
    """The parts of ``a op b``: a sum or difference adds the parts; a product keeps them where one side is
    constant; any other op of values that depend on one coordinate (or none) depends on that one."""
    if a is None or b is None:
        return None
    if a == _CONST or b == _CONST:
        return b if a == _CONST else a
    if a == b and a != _SUM:
        return a
    return _SUM if kind in (arith.AddiOp, arith.SubiOp, t.AddOp, t.SubOp) else None


def _parts(v: SSAValue, depth: int) -> str | None:
    op = v.owner if isinstance(v, OpResult) else None
    if depth == 0:
        return None
    match op:
        case t.IotaOp():
            return _ROW if op.dim.value.data == 0 else _COL
        case t.FillOp() | t.ZerosOp():
            return _CONST
        case t.BroadcastOp():  # a "row" vector holds one value per row
            return _ROW if op.input.type.orientation.data == "row" else _COL
        case t.ConvertOp() | t.ConvertLayoutOp():
            return _parts(op.input, depth - 1)
        case t.AddOp() | t.SubOp():
            return _combined(type(op), _parts(op.lhs, depth - 1), _parts(op.rhs, depth - 1))
        case t.MapOp() if all(isinstance(x.type, RegisterType) for x in op.inputs):
            parts = {arg: _parts(x, depth - 1) for arg, x in zip(op.body.block.args, op.inputs)}
            return _body_parts(op.body.block.last_op.operands[0], op.body.block, parts, depth - 1)
    return None


def _body_parts(v: SSAValue, body: Block, parts: dict[SSAValue, str | None], depth: int) -> str | None:
    """The parts of a scalar of a map's body (:func:`_in_body`'s reading, for :func:`_parts`)."""
    if isinstance(v, BlockArgument):
        return parts.get(v) if v.block is body else _CONST
    op = v.owner
    if op.parent_block() is not body:
        return _CONST
    if depth == 0 or op.regions:
        return None
    if isinstance(op, arith.ConstantOp):
        return _CONST
    inner = [_body_parts(x, body, parts, depth - 1) for x in op.operands]
    out = inner[0] if inner else _CONST
    for x in inner[1:]:
        out = _combined(type(op), out, x)
    if out == _SUM and not isinstance(op, (*_SAME_STEP, arith.AddiOp, arith.SubiOp, arith.MuliOp)):
        return None  # a sum through anything but adds, casts and constant factors is not one
    return out


_BIG = 1 << 30
"""A divisor standing for "any power of two" (zero, or a product past every run)."""


def _pow2_factor(c: int) -> int:
    return _BIG if c == 0 else min(c & -c, _BIG)


def scalar_divisor(v: SSAValue, depth: int = 16) -> int:
    """A power of two that divides the integer scalar ``v`` (1 where nothing is known): constants, and sums,
    products and casts of them with other scalars (``tl.program_id(0) * BLOCK``: BLOCK's). Index arithmetic
    is taken not to wrap, as Triton's AxisInfo takes it."""
    op = v.owner if isinstance(v, OpResult) else None
    if depth == 0 or op is None:
        return 1
    c = _constant(v)
    if c is not None:
        return _pow2_factor(c)
    if isinstance(op, (*_SAME_STEP, arith.TruncIOp)):
        return scalar_divisor(op.operands[0], depth - 1)
    if isinstance(op, arith.MuliOp):
        return min(scalar_divisor(op.lhs, depth - 1) * scalar_divisor(op.rhs, depth - 1), _BIG)
    if isinstance(op, arith.AddiOp | arith.SubiOp):
        return min(scalar_divisor(op.lhs, depth - 1), scalar_divisor(op.rhs, depth - 1))
    if isinstance(op, arith.ShLIOp) and _constant(op.rhs) is not None:
        return min(scalar_divisor(op.lhs, depth - 1) << _constant(op.rhs), _BIG)
    return 1


def _affine(v: SSAValue, dim: int, depth: int) -> tuple[int, int] | None:
    """``(step, divisor)``: ``v``'s element ``j`` along ``dim`` is ``base + step * j``, every base (one for each
    coordinate along the other dimension) a multiple of ``divisor``; None where not known."""
    op = v.owner if isinstance(v, OpResult) else None
    if depth == 0:
        return None
    match op:
        case t.IotaOp():
            return (1, _BIG) if op.dim.value.data == dim else (0, 1)
        case t.ZerosOp():
            return 0, _BIG
        case t.FillOp():
            return 0, scalar_divisor(op.operands[0], depth - 1)
        case t.ConvertLayoutOp():
            return _affine(op.input, dim, depth - 1)
        case t.MapOp():
            args = {arg: _affine(x, dim, depth - 1) for arg, x in zip(op.body.block.args, op.inputs)}
            return _affine_in_body(op.body.block.last_op.operands[0], op.body.block, args, depth - 1)
    step = step_along(v, dim, depth)
    return (0, 1) if step == 0 else None


def _affine_in_body(v: SSAValue, body: Block, args: dict, depth: int) -> tuple[int, int] | None:
    if isinstance(v, BlockArgument):
        return args.get(v) if v.block is body else (0, 1)
    op = v.owner
    if op.parent_block() is not body:
        return 0, scalar_divisor(v)  # a scalar of the kernel: the same for every element
    if depth == 0 or op.regions:
        return None
    c = _constant(v)
    if c is not None:
        return 0, _pow2_factor(c)
    inner = [_affine_in_body(x, body, args, depth - 1) for x in op.operands]
    if any(x is None for x in inner):
        return None
    if isinstance(op, _SAME_STEP):
        return inner[0]
    if isinstance(op, arith.AddiOp | arith.SubiOp):
        (a, da), (b, db) = inner
        return (a + b if isinstance(op, arith.AddiOp) else a - b), min(da, db)
    if isinstance(op, arith.MuliOp):
        (a, da), (b, db) = inner
        if a == 0 and b == 0:
            return 0, min(da * db, _BIG)
        for (s, d), other in (((a, da), op.rhs), ((b, db), op.lhs)):
            k = _constant(other)
            if k is not None:
                return s * k, min(d * _pow2_factor(k), _BIG)
        return None
    if all(s == 0 for s, _ in inner):
        return 0, 1
    return None


def _nonnegative(v: SSAValue, depth: int) -> bool:
    """Whether the scalar (or the tile's every element) ``v`` is known >= 0: block ids, iotas, constants, and
    sums, products and widenings of them."""
    op = v.owner if isinstance(v, OpResult) else None
    if depth == 0 or op is None:
        return False
    c = _constant(v)
    if c is not None:
        return c >= 0
    if isinstance(op, t.BlockIdOp | t.IotaOp | t.ThreadIdOp | t.WarpIdOp | t.LaneIdOp):
        return True
    if isinstance(op, arith.IndexCastOp | arith.ExtSIOp | arith.ExtUIOp):
        return _nonnegative(op.operands[0], depth - 1)
    if isinstance(op, arith.AddiOp | arith.MuliOp):
        return _nonnegative(op.lhs, depth - 1) and _nonnegative(op.rhs, depth - 1)
    return False


def _nonnegative_in_body(v: SSAValue, body: Block, inputs, depth: int) -> bool:
    if isinstance(v, BlockArgument):
        return v.block is body and _nonnegative(inputs[v.index], depth)
    op = v.owner
    if op.parent_block() is not body:
        return _nonnegative(v, depth)
    if depth == 0 or op.regions:
        return False
    c = _constant(v)
    if c is not None:
        return c >= 0
    if isinstance(op, arith.IndexCastOp | arith.ExtSIOp | arith.ExtUIOp):
        return _nonnegative_in_body(op.operands[0], body, inputs, depth - 1)
    if isinstance(op, arith.AddiOp | arith.MuliOp):
        return all(_nonnegative_in_body(x, body, inputs, depth - 1) for x in op.operands)
    return False


def equal_runs(v: SSAValue, dim: int, depth: int = 16) -> int:
    """The longest run ``c`` (a power of two) such that ``v``'s elements ``j`` and ``j'`` along ``dim`` with ``j // c
    == j' // c`` are equal (1 where nothing is known): Triton's constancy, for a group's index such as
    ``(pid * BLOCK + tl.arange(0, BLOCK)) // GROUP`` (runs of GROUP), so a gather loads each once."""
    extent = v.type.dims[dim] if isinstance(v.type, RegisterType) else v.type.length.data
    if step_along(v, dim, depth) == 0:
        return extent
    op = v.owner if isinstance(v, OpResult) else None
    if not isinstance(op, t.MapOp):
        return 1
    body = op.body.block
    out = body.last_op.operands[0]
    while isinstance(out.owner, (*_SAME_STEP, arith.TruncIOp)) and out.owner.parent_block() is body:
        out = out.owner.operands[0]
    quotient = out.owner if isinstance(out, OpResult) and out.owner.parent_block() is body else None
    if isinstance(quotient, arith.DivUIOp | arith.FloorDivSIOp) or isinstance(quotient, arith.DivSIOp) and \
            _nonnegative_in_body(quotient.lhs, body, op.inputs, depth - 1):
        c = _constant(quotient.rhs)  # (a quotient rounded to zero: runs aligned where the dividend is >= 0)
    elif isinstance(quotient, arith.ShRSIOp | arith.ShRUIOp) and _constant(quotient.rhs) is not None:
        c = 1 << _constant(quotient.rhs) if 0 <= _constant(quotient.rhs) < 31 else None
    else:
        return 1
    if c is None or c <= 0 or c & (c - 1):
        return 1
    args = {arg: _affine(x, dim, depth - 1) for arg, x in zip(body.args, op.inputs)}
    found = _affine_in_body(quotient.lhs, body, args, depth - 1)
    if found is None or found[0] not in (0, 1):
        return 1
    step, divisor = found
    # base + j, base a multiple of divisor: (base + j) // c is constant on aligned runs of min(c, divisor)
    return extent if step == 0 else max(1, min(c, divisor, extent))


__all__ = ["equal_runs", "scalar_divisor", "separable", "step_along"]
