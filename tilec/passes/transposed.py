"""Register tiles made again transposed, from how they are computed.

``transposed(v)`` is a value equal to ``tile.transpose(v)``, built from the transposes of what ``v`` is
built from: an iota along the other dimension, a broadcast of the vector in the other orientation, a
map (or elementwise op, or conversion) of transposed inputs. Each new op goes right after the op it
mirrors, so it sees what that op saw. Nothing moves between lanes, where a ``tile.transpose`` of a tile
spread over the block's warps is a conversion through shared memory (``tile-layout``): tile-stage
gathers a K-major operand transposed this way (:func:`tilec.passes.tile_stage.orient_gathers`), its
offsets being Triton's ``offs_k[:, None] + offs_n[None, :] * stride``.

Anything else (a load, a loop's carried value, a reduction) has no transposed form here: None.
"""

from __future__ import annotations

from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, RegisterVectorType


def transposed(v: SSAValue, made: dict[SSAValue, SSAValue] | None = None, depth: int = 16) -> SSAValue | None:
    """A value equal to ``v`` transposed (a 2-D register tile) or reoriented (a register vector: ``row`` and
    ``col`` exchanged), built beside the ops ``v`` is built from; None where that is not known.
    ``made``: values already made (shared between calls, so common parts are made once)."""
    made = {} if made is None else made
    if v in made:
        return made[v]
    ty = v.type
    op = v.owner if isinstance(v, OpResult) else None
    if depth == 0 or op is None or not (isinstance(ty, RegisterVectorType) or
                                        isinstance(ty, RegisterType) and len(ty.dims) == 2):
        return None
    if ty.fragment is not None:
        return None  # a fragment chosen for the value: its transposed form is tile-layout's to give
    flipped = _flipped_type(ty)

    def inner(x: SSAValue) -> SSAValue | None:
        return transposed(x, made, depth - 1)

    new: Operation | None = None
    match op:
        case t.TransposeOp():
            made[v] = op.input
            return op.input
        case t.IotaOp():
            dim = op.dim.value.data if isinstance(ty, RegisterVectorType) else 1 - op.dim.value.data
            new = t.IotaOp(op.offset, dim, flipped)
        case t.FillOp():
            new = t.FillOp(op.value, flipped)
        case t.BroadcastOp() if isinstance(ty, RegisterType):
            vector = inner(op.input)
            new = None if vector is None else t.BroadcastOp(vector, flipped)
        case t.MapOp():
            inputs = [inner(x) for x in op.inputs]
            if all(x is not None for x in inputs) and len(op.results) == 1:
                new = t.MapOp(inputs, flipped, op.body.clone())
        case t.ConvertOp():
            x = inner(op.input)
            new = None if x is None else t.ConvertOp(x, flipped)
        case t.AddOp() | t.SubOp():
            lhs, rhs = inner(op.lhs), inner(op.rhs)
            new = None if lhs is None or rhs is None else type(op)(lhs, rhs)
    if new is None:
        return None
    new.location = op.location
    new.results[0].name_hint = v.name_hint and f"{v.name_hint}_t"
    Rewriter.insert_op(new, InsertPoint.after(op))
    made[v] = new.results[0]
    return new.results[0]


def _flipped_type(ty: RegisterType | RegisterVectorType) -> RegisterType | RegisterVectorType:
    if isinstance(ty, RegisterVectorType):
        return RegisterVectorType(ty.length.data, ty.element_type, "col" if ty.is_row else "row")
    return RegisterType(tuple(reversed(ty.dims)), ty.element_type)
