"""Reductions of ``tile-distribute``: rows or columns of a register tile into a register vector.

Derived from the fragment, never per atom. ``coord(lane, v) = lane_part(lane) + value_part(v)``
(:class:`~tilec.passes.fragments.Fragment`), so for a row reduction:

1. the values of one lane whose row is the same are combined in registers;
2. the lanes that differ only in lane bits that move along the row (the bit fields of the lane's
   column part) hold the other parts of the same rows: a butterfly over exactly those bits
   (``shfl.sync.bfly`` with lane mask ``1 << b`` for each such bit ``b``) leaves every one of them
   with the whole row. Lane bits that move nothing (a broadcast fragment) are left alone: those
   lanes hold copies, not parts;
3. a block tile's fragment may also move along the row in thread bits past the lane's (its warps
   hold other parts of the same rows): one thread of each warp writes its partials to shared
   memory, the block synchronises, and every thread combines the warps' partials in warp order;
4. with an accumulator (``tile.row_max %x into %m``) its value is combined last.

The result lives in the vector fragment tile-layout gave it (the projection of the tile's: the
lanes holding a row hold its total). Column reductions are the same with the axes swapped.
16-bit values are combined in f32 and rounded once at the end; integers (signed) in i32.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType, i32, i64
from xdsl.ir import SSAValue

from tilec.dialects import frag_fast
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import element_bits
from tilec.ir import fast
from tilec.ir.walk import in_loop
from tilec.passes.fragments import BitField, Fragment, VectorFragment, tile_fragment
from tilec.passes.tile_distribute.memory import RegallocError
from tilec.passes.tile_distribute.values import Regs, ValueMapper

_KIND = {
    t.RowSumOp: "sum", t.ColSumOp: "sum",
    t.RowMaxOp: "max", t.ColMaxOp: "max",
    t.RowMinOp: "min", t.ColMinOp: "min",
}
_COMBINE = {"sum": arith.AddfOp, "max": arith.MaximumfOp, "min": arith.MinimumfOp, "prod": arith.MulfOp}
_COMBINE_INT = {"sum": arith.AddiOp, "max": arith.MaxSIOp, "min": arith.MinSIOp, "prod": arith.MuliOp}
"""Integer tiles (signed, as the language's int32) are combined in i32: sums wrap as the GPU's adds do."""
REDUCTIONS = (*_KIND, t.ReduceOp)

i16 = IntegerType(16)


LANE_BITS = 5


def cross_warp_bits(tile: Fragment, axis: int) -> list[int]:
    """The thread bits past the lane's 5 that move a block tile's fragment along the reduced axis
    (``1 - axis``): the warps that hold other parts of the same rows (columns)."""
    return [b for f in tile.lane_fields[1 - axis] for b in range(max(f.shift, LANE_BITS), f.shift + f.width)]


def reduction_scratch_bytes(op) -> int:
    """Shared memory a reduction needs to combine the partials of several warps (0 when it needs none):
    ``slots`` partials for each element of the vector."""
    tile = tile_fragment(op.input.type.dims, op.input.type.fragment.layout)
    vec = op.result.type
    bits = cross_warp_bits(tile, 0 if vec.orientation.data == "row" else 1)
    if not bits:
        return 0
    work = 8 if element_bits(vec.element_type) == 64 else 4
    return vec.length.data * (1 << len(bits)) * work


class ReductionLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: lowers ``tile.row_*`` / ``tile.col_*``."""

    def reduce(self, op) -> None:
        kind = op.combine if isinstance(op, t.ReduceOp) else _KIND[type(op)]  # tl.reduce: the op's region
        x = self.get(op.input)
        tile: Fragment = x.frag
        vec: VectorFragment = self.fragment(op.result)
        elem = op.result.type.element_type
        work = (i32 if isinstance(elem, IntegerType) else Float32Type()) if element_bits(elem) < 32 else elem
        if not isinstance(kind, str):
            work = elem  # the user's function takes and gives the element type
        axis = vec.axis  # the coordinate kept: rows for a row reduction
        picks = vec.values_of(tile)  # also checks that the vector lives in the tile's lanes
        scalars = [self._convert(s, work) for s in self.scalars(x)]
        partial: list[SSAValue | None] = [None] * vec.num_values
        for v, i in enumerate(picks):
            partial[i] = scalars[v] if partial[i] is None else self._combine(kind, partial[i], scalars[v])
        if any(p is None for p in partial):
            raise RegallocError(f"vector fragment {vec.layout} holds values no lane of the tile fragment "
                                f"{tile.layout} reduces into")
        kept = {b for f in tile.lane_fields[axis] for b in range(f.shift, f.shift + f.width)}
        for field in tile.lane_fields[1 - axis]:
            for bit in range(field.shift, min(field.shift + field.width, LANE_BITS)):
                if bit in kept:  # the partner lane would hold another row: not a butterfly partner
                    raise RegallocError(f"lane bit {bit} of fragment {tile.layout} moves along both dimensions: "
                                        "its rows cannot be reduced by shuffles")
                partial = [self._combine(kind, p, self._butterfly(p, 1 << bit)) for p in partial]
        warp_bits = cross_warp_bits(tile, axis)
        if warp_bits:
            partial = self._across_warps(op, kind, vec, warp_bits, partial, work)
        if op.acc is not None:
            acc = self.get(op.acc)
            partial = [self._combine(kind, self._convert(a, work), p) for a, p in zip(self.scalars(acc), partial)]
        self.vmap[op.result] = Regs(vec, elem, [self._convert(p, elem) for p in partial])

    def _across_warps(self, op, kind: str, vec: VectorFragment, warp_bits: list[int], partial: list, work) -> list:
        """Combine the partials of the warps that hold other parts of the same rows (``warp_bits``: the
        thread bits past the lane that move along the reduced axis) through shared memory: one thread of
        each such warp writes its partials in slot ``warp_bits(tid)`` of their vector element, the block
        synchronises, and every thread combines the slots of its elements in slot order (so every copy
        is the same value). A reduction that runs again (in a loop) synchronises once more before its
        slots are rewritten."""
        em = self.em
        scratch = self._shared_address(op)
        slots = 1 << len(warp_bits)
        slot = self.lane_value(tuple(BitField(b, 1, 1 << i) for i, b in enumerate(warp_bits)), i32)
        used = sum(((1 << f.width) - 1) << f.shift for f in vec.lane_fields)
        others = (self.threads - 1) & ~used & ~sum(1 << b for b in warp_bits)
        leader = True if others == 0 else self.thread_bits_zero(others)
        first = em.mul(self.lane_value(vec.lane_fields, i32), slots, i32)

        def at(pos: int, k):
            return em.gep(scratch, em.add(em.add(first, pos * slots, i32), k, i32), work, i32)

        for pos, p in zip(vec.positions, partial):
            self._store(p, at(pos, slot), leader)
        em.insert(frag_fast.tile_barrier())
        out = []
        for pos in vec.positions:
            total = em.insert(frag_fast.frag_load(at(pos, 0), work)).results[0]
            for k in range(1, slots):
                total = self._combine(kind, total, em.insert(frag_fast.frag_load(at(pos, k), work)).results[0])
            out.append(total)
        if in_loop(op):
            em.insert(frag_fast.tile_barrier())
        return out

    def _combine(self, kind, a: SSAValue, b: SSAValue) -> SSAValue:
        """``a`` and ``b`` combined: ``kind`` names the operation, or is a region (``tl.reduce``'s function)."""
        if not isinstance(kind, str):
            return self._region(kind, a, b)
        ops = _COMBINE_INT if isinstance(a.type, IntegerType) else _COMBINE
        return self.em.insert(fast.arith_binary_op(ops[kind], a, b)).results[0]

    def _region(self, region, a: SSAValue, b: SSAValue) -> SSAValue:
        """The scan's combining region on ``a`` (earlier) and ``b``, its ops emitted here."""
        block = region.block
        local = ValueMapper(self.lookup)
        local[block.args[0]], local[block.args[1]] = a, b
        for body_op in block.ops:
            if isinstance(body_op, t.YieldOp):
                return local.get(body_op.values[0])
            self.em.insert(body_op.clone(value_mapper=local))
        raise RegallocError("the scan's region has no tile.yield")

    def _butterfly(self, x: SSAValue, mask: int) -> SSAValue:
        """``x`` of the lane whose id differs from this one's in the bits of ``mask`` (a 64-bit value as
        its two 32-bit halves, a shuffle each)."""
        em = self.em
        if x.type == Float32Type() or x.type == i32:
            return em.insert(frag_fast.frag_shfl("bfly", x, em.const(mask, i32))).results[0]
        if x.type == Float64Type():  # its bits as an i64
            bits = em.insert(fast.arith_cast_op(arith.BitcastOp, x, i64)).results[0]
            return em.insert(fast.arith_cast_op(arith.BitcastOp, self._butterfly(bits, mask), x.type)).results[0]
        if element_bits(x.type) == 16:  # f16 / bf16 (a function's reduction or scan in its own type): in 32 bits
            bits = em.insert(fast.arith_cast_op(arith.BitcastOp, x, i16)).results[0]
            moved = self._butterfly(em.insert(fast.arith_cast_op(arith.ExtUIOp, bits, i32)).results[0], mask)
            back = em.insert(fast.arith_cast_op(arith.TruncIOp, moved, i16)).results[0]
            return em.insert(fast.arith_cast_op(arith.BitcastOp, back, x.type)).results[0]
        if x.type == i64:
            halves = [em.cast(x, i32), em.cast(em.shr(x, 32, i64), i32)]
            lo, hi = (em.cast(self._butterfly(h, mask), i64) for h in halves)
            lo = em.and_(lo, 0xFFFFFFFF, i64)  # the low half sign-extended: its upper bits cleared
            high = em.insert(fast.arith_binary_op(arith.ShLIOp, hi, em.const(32, i64))).results[0]
            return em.insert(fast.arith_binary_op(arith.OrIOp, lo, high)).results[0]
        raise RegallocError(f"cannot shuffle a {x.type} between lanes (only 16-bit floats, 32- and 64-bit integers "
                            "and floats)")

