"""Layout conversions of ``tile-distribute``: ``tile.convert_layout`` between two fragments of one tile.

The layout algebra decides the path, cheapest first:

1. **the same function** (two spellings of one fragment): the registers are reused;
2. **a permutation within each lane**: every lane already holds the values it needs, at value
   indices that are the same in every lane: the registers are renumbered;
3. **through shared memory** (Triton's general path): each lane stores its values at their
   coordinates in a scratch tile of its warp (of the block, for a tile spread over the block's
   warps), the block synchronises, each lane loads the values
   of the new fragment, and the block synchronises again before the scratch is reused.

Paths 1 and 2 cost nothing at run time. Shuffles between lanes (``shfl.sync.idx``) for
conversions that stay within a warp are not derived yet: they take path 3.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i32
from xdsl.ir import Operation

from tilec.dialects import frag_fast
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, element_bits
from tilec.passes.fragments import Fragment, VectorFragment
from tilec.passes.tile_distribute.values import Regs


def lane_permutation(src: Fragment | VectorFragment, dst: Fragment | VectorFragment) -> list[int] | None:
    """``perm`` with ``dst(lane, v) == src(lane, perm[v])`` for every lane and value, or None."""
    if src.tv.num_threads != dst.tv.num_threads:
        return None
    where = {src.tv.offset(0, u): u for u in range(src.num_values)}
    perm = []
    for v in range(dst.num_values):
        u = where.get(dst.tv.offset(0, v))
        if u is None:
            return None
        perm.append(u)
    for lane in range(1, dst.tv.num_threads):
        if any(src.tv.offset(lane, u) != dst.tv.offset(lane, v) for v, u in enumerate(perm)):
            return None
    return perm


def needs_scratch(op: Operation) -> bool:
    """Whether a ``tile.convert_layout`` goes through shared memory (neither a renumbering nor a no-op)."""
    src, dst = op.input.type.fragment, op.result.type.fragment
    if src is None or dst is None or src.same_function(dst):
        return False
    wrap = (lambda tv: Fragment(op.input.type.dims, tv)) if isinstance(op.input.type, RegisterType) else \
        (lambda tv: VectorFragment(tv, op.input.type.orientation.data))
    return lane_permutation(wrap(src), wrap(dst)) is None


def per_warp_scratch(op: Operation) -> bool:
    """Whether a conversion's scratch is one tile per warp (its input is a warp's tile: every warp
    holds a whole one) rather than one for the block (its input spans the block's warps)."""
    return op.input.type.fragment.num_threads == 32


def scratch_bytes(op: Operation, warps: int) -> int:
    """Shared memory a converting op needs: one tile (or vector) per warp, or one for a block's tile."""
    ty = op.input.type
    n = ty.num_elements if isinstance(ty, RegisterType) else ty.length.data
    return (warps if per_warp_scratch(op) else 1) * n * max(4, element_bits(ty.element_type) // 8)


class ConvertLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: lowers ``tile.convert_layout``."""

    def convert_layout(self, op: t.ConvertLayoutOp, scratch) -> None:
        x = self.get(op.input)
        src, dst = x.frag, self.fragment(op.result)
        elem = op.result.type.element_type
        if src.tv.same_function(dst.tv):
            self.vmap[op.result] = self.in_form(Regs(dst.with_packing(x.packing), elem, x.values), dst)
            return
        scalars = self.scalars(x)
        perm = lane_permutation(src, dst)
        if perm is not None:
            self.set_scalars(op.result, [scalars[u] for u in perm])
            return
        self.set_scalars(op.result, self._through_shared(op, src, dst, scalars, scratch))

    def _through_shared(self, op, src, dst, scalars, scratch) -> list:
        em = self.em
        ty = op.input.type
        dims = ty.dims if isinstance(ty, RegisterType) else (ty.length.data,)
        elem = ty.element_type
        per_warp = 1
        for d in dims:
            per_warp *= d
        base = scratch
        if per_warp_scratch(op):
            warp = em.shr(self.tid(), 5, i32)
            base = em.gep(scratch, em.mul(warp, per_warp, i32), elem, i32)

        def address(fr, v):
            coords = self._scratch_coords(fr, v)
            index = coords[0] if len(coords) == 1 else em.add(em.mul(coords[0], dims[1], i32), coords[1], i32)
            return em.gep(base, index, elem, i32)

        for v, value in enumerate(scalars):
            em.insert(frag_fast.frag_store(value, address(src, v)))
        em.insert(frag_fast.tile_barrier())
        out = [em.insert(frag_fast.frag_load(address(dst, v), elem)).results[0] for v in range(dst.num_values)]
        em.insert(frag_fast.tile_barrier())
        return out

    def _scratch_coords(self, fr, v) -> tuple:
        if isinstance(fr, VectorFragment):
            return (self.em.add(self.lane_value(fr.lane_fields, i32), fr.positions[v], i32),)
        return self.value_coord(fr, v, i32)


__all__ = ["ConvertLowering", "lane_permutation", "needs_scratch", "scratch_bytes"]
