"""Atomic reductions into global memory (``tile.atomic``) for ``tile-distribute``.

A store may write an element from every thread that holds a copy of it; an atomic add may not,
so each element is combined by exactly one of its holders:

- within a fragment, the threads that differ only in thread bits that do not move the element
  (broadcast bits: the lane fields of a tile or vector fragment leave them out) hold copies: the
  one with those bits 0 combines; a value index whose element the thread already combined (a
  fragment that holds one element twice) is skipped;
- a warp's fragment in a block of several warps: every warp holds the tile. If the value and the
  indices are the same in every warp (:func:`~tilec.passes.uniformity.atomic_combiners`) only warp 0
  combines; a value or a place computed from the warp id is each warp's own, and each combines;
- indices computed from the lane (or thread) id make each thread's places its own: every holder
  combines.

Each combine is one ``red.global`` (``frag.red``), predicated on that choice and on the element
lying inside the view, like a store's.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, i32, i64

from tilec.dialects import frag_fast
from tilec.dialects.tile import ops as t
from tilec.ir import fast
from tilec.passes.fragments import WARP, Fragment, VectorFragment
from tilec.passes.tile_distribute.emit import Bool
from tilec.passes.tile_distribute.values import GlobalArg, Regs
from tilec.passes.tile_distribute.vectors import copy_bits
from tilec.passes.uniformity import atomic_combiners, lane_varying, warp_varying


class AtomicLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: lowers ``tile.atomic``."""

    def atomic(self, op: t.AtomicOp) -> None:
        em = self.em
        value: Regs = self.get(op.value)
        dst: GlobalArg = self.get(op.dest)
        origin = [em.cast(self.get(i), i64) for i in op.indices]
        frag = value.frag
        combiner = self._combiner(op, frag)
        kind = op.kind.data
        scalars = self.scalars(value)
        if isinstance(frag, VectorFragment):
            base = em.add(origin[0], self.lane_value(frag.lane_fields, i64), i64)
            places = [(em.add(base, pos, i64),) for pos in frag.positions]
            static = [(pos,) for pos in frag.positions]
        else:
            places = []
            for v in range(frag.num_values):
                m, n = self.value_coord(frag, v, i64)
                places.append((em.add(origin[0], m, i64), em.add(origin[1], n, i64)))
            static = list(frag.value_coords)
        seen = set()
        for x, coords, key in zip(scalars, places, static):
            if key in seen:  # the thread holds this element twice: combined once
                continue
            seen.add(key)
            inside = em.all([self.in_bounds(dst, d, c) for d, c in enumerate(coords)])
            pred = em.land(combiner, inside)
            if pred is False:
                continue
            ptr = self.global_ptr(dst, list(coords))
            if kind != "add" and x.type == Float32Type():
                self._float_extreme(kind, x, ptr, pred)
                continue
            em.insert(frag_fast.frag_red(kind, x, ptr, None if pred is True else pred))

    def _float_extreme(self, kind: str, x, ptr, pred: Bool) -> None:
        """An f32 maximum (minimum) as integer reductions of its bits, which order as the floats do
        where the sign bit is clear (signed) and in reverse where it is set (unsigned): a value of sign
        0 takes the signed max (min) of the bits, one of sign 1 the unsigned min (max). Triton's way."""
        em = self.em
        bits = em.insert(fast.arith_cast_op(arith.BitcastOp, x, i32)).results[0]
        positive = em.cmp("sge", bits, 0, i32)
        for p, op in ((positive, kind), (em.lnot(positive), "umin" if kind == "max" else "umax")):
            q = em.land(pred, p)
            em.insert(frag_fast.frag_red(op, bits, ptr, None if q is True else q))

    def _combiner(self, op: t.AtomicOp, frag: Fragment | VectorFragment) -> Bool:
        """Whether this thread combines the elements it holds (see the module docstring)."""
        em = self.em
        if not hasattr(self, "_varying_ids"):
            self._varying_ids = (lane_varying(self.fn), warp_varying(self.fn))
        mode = atomic_combiners(op, *self._varying_ids)
        if mode == "every thread":  # indices that differ between lanes: each thread's own places
            return True
        bits = copy_bits(frag)
        if mode == "the block" and frag.warps == 1 and self.threads > WARP:
            bits |= (self.threads - 1) & ~(WARP - 1)  # a warp's copy of a block-wide value: warp 0's
        return True if bits == 0 else em.cmp("eq", em.and_(self.thread_index(i32), bits, i32), 0, i32)
