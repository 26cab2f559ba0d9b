"""Atomic reductions into global memory (``tile.atomic``, and ``tile.scatter_atomic`` at places held in
index tiles: their addresses as ``tile.scatter``'s) for ``tile-distribute``.

A store may write an element from every thread that holds a copy of it; an atomic add may not,
so each element is combined by exactly one of its holders:

- within a fragment, the threads that differ only in thread bits that do not move the element
  (broadcast bits: the lane fields of a tile or vector fragment leave them out) hold copies: the
  one with those bits 0 combines; a value index whose element the thread already combined (a
  fragment that holds one element twice) is skipped;
- a warp's fragment in a block of several warps: every warp holds the tile. If the value, the
  indices, ``cas``'s compared values and the mask are the same in every warp and every warp runs the
  atomic (:func:`~tilec.passes.uniformity.atomic_combiners`) only warp 0 combines; one computed from
  the warp id, or an atomic under a branch only some warps take, is each warp's own, and each combines;
- indices computed from the lane (or thread) id make each thread's places its own: every holder
  combines.

Each combine is one ``red.global`` (``frag.red``), predicated on that choice, on the element lying
inside the view, like a store's, and on its mask bit (``mask %m``).

With a result (``%old = tile.atomic ... returns``) each combine is one ``atom.global`` (``frag.atom``) and
every holder of an element gets the old value its combining thread read: from that thread's lane by a
shuffle where the holders are lanes of one warp, through shared memory (written, synchronised, read,
synchronised) where they are in several warps. ``xchg`` and ``cas`` are always ``atom``s (``red`` has no
such operation).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, i32, i64
from xdsl.ir import Operation, SSAValue

from tilec.dialects import frag_fast
from tilec.dialects.abi import ROLE_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterVectorType, element_bits
from tilec.ir import fast
from tilec.ir.parser import location_text
from tilec.passes.fragments import WARP, Fragment, VectorFragment, tile_fragment
from tilec.passes.tile_distribute.emit import Bool
from tilec.passes.tile_distribute.memory import RegallocError
from tilec.passes.tile_distribute.values import GlobalArg, Regs
from tilec.passes.tile_distribute.vectors import copy_bits
from tilec.passes.uniformity import _divergent, atomic_combiners, lane_varying, warp_varying


_RED_KINDS = ("add", "max", "min", "umax", "umin", "and", "or", "xor")
"""The kinds ``red.global`` does (no old value needed)."""


def holder_bits(op: t.AtomicOp | t.ScatterOp, frag: Fragment | VectorFragment, threads: int,
                varying: tuple[set, set]) -> int:
    """The thread bits (of the block's thread index) whose holders of an element leave it to the holder
    with those bits 0 (see the module docstring; a scatter's stores too); 0: every thread combines its own
    elements."""
    mode = atomic_combiners(op, *varying)
    if mode == "every thread":  # indices that differ between lanes: each thread's own places
        return 0
    bits = copy_bits(frag)
    if mode == "the block" and frag.warps == 1 and threads > WARP:
        bits |= (threads - 1) & ~(WARP - 1)  # a warp's copy of a block-wide value: warp 0's
    return bits


def returns_old_values(op: t.AtomicOp) -> bool:
    """Whether anything reads the old values ``op`` gives back."""
    return op.old is not None and bool(op.old.uses)


def atomic_scratch_bytes(op: t.AtomicOp, fn, threads: int) -> int:
    """Shared memory an atomic's old values cross warps through (0 where its holders are one warp's
    lanes, or nothing reads them): a 32-bit word per value of each combining thread index
    (:func:`exchange_slots`)."""
    ty = op.value.type
    if not returns_old_values(op) or ty.fragment is None or threads <= WARP:
        return 0
    frag = VectorFragment(ty.fragment, ty.orientation.data) if isinstance(ty, RegisterVectorType) \
        else tile_fragment(ty.dims, ty.fragment.layout)
    bits = holder_bits(op, frag, threads, (lane_varying(fn), warp_varying(fn)))
    if bits < WARP:
        return 0
    return frag.num_values * exchange_slots(bits, threads) * max(4, element_bits(ty.element_type) // 8)


def exchange_slots(bits: int, threads: int) -> int:
    """Slots a value's old elements take in the exchange through shared memory: one per combining thread
    index (the thread index with ``bits`` cleared), up to the largest (all threads' copies of a value
    every thread holds: one slot)."""
    return ((threads - 1) & ~bits) + 1


class AtomicLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: lowers ``tile.atomic``."""

    def holders(self, op: t.AtomicOp | t.ScatterAtomicOp | t.ScatterOp, frag: Fragment | VectorFragment) -> int:
        """:func:`holder_bits` of ``op``'s elements (the function's lane- and warp-varying values found once)."""
        if not hasattr(self, "_varying_ids"):
            self._varying_ids = (lane_varying(self.fn), warp_varying(self.fn))
        return holder_bits(op, frag, self.threads, self._varying_ids)

    def lane_divergent_parent(self, op: Operation) -> Operation | None:
        """The first op around ``op`` whose condition or bounds differ between a warp's lanes, or None."""
        return next((p for p in _ancestors(op) if _divergent(p, self._varying_ids[0])), None)

    def is_holder(self, bits: int) -> Bool:
        """Whether this thread is the holder with ``bits`` of the block's thread index 0."""
        return True if bits == 0 else self.em.cmp("eq", self.em.and_(self.thread_index(i32), bits, i32), 0, i32)

    def atomic(self, op: t.AtomicOp | t.ScatterAtomicOp) -> None:
        em = self.em
        value: Regs = self.get(op.value)
        dst: GlobalArg = self.get(op.dest)
        at_indices = isinstance(op, t.ScatterAtomicOp)  # each element's place from index tiles
        origin = [] if at_indices else [em.cast(self.get(i), i64) for i in op.indices]
        frag = value.frag
        bits = self.holders(op, frag)
        parent = self.lane_divergent_parent(op) if bits & (WARP - 1) else None
        if parent is not None:  # one lane combines for the others: all must be there
            raise RegallocError(f"combines each element in one lane for the lanes that hold copies, but it is "
                                f"inside '{parent.name}'{_where(parent)}, whose condition differs between the "
                                "lanes of a warp: the combining lane may not be there. Give the atomic a "
                                "place computed from the lane id, or branch on a value every lane has alike")
        combiner = self.is_holder(bits)
        kind = op.kind.data
        fetch = returns_old_values(op)
        scalars = self.scalars(value)
        compared = self.scalars(self.get(op.cmp)) if op.cmp is not None else [None] * len(scalars)
        masked = self.scalars(self.get(op.mask)) if op.mask is not None else [True] * len(scalars)
        if at_indices:  # (address, inside) of each value's element, as tile.scatter computes them
            addressed = [place() for place in self._element_places(dst, op)]
            static = [(pos,) for pos in frag.positions] if isinstance(frag, VectorFragment) else list(frag.value_coords)
        elif isinstance(frag, VectorFragment):
            base = em.add(origin[0], self.lane_value(frag.lane_fields, i64), i64)
            places = [(em.add(base, pos, i64),) for pos in frag.positions]
            static = [(pos,) for pos in frag.positions]
        else:
            places = []
            for v in range(frag.num_values):
                m, n = self.value_coord(frag, v, i64)
                places.append((em.add(origin[0], m, i64), em.add(origin[1], n, i64)))
            static = list(frag.value_coords)
        zero = em.const(0, scalars[0].type) if fetch else None
        olds: list[SSAValue] = []
        first: dict = {}
        if not at_indices:
            addressed = [(self.global_ptr(dst, list(coords)),
                          em.all([self.in_bounds(dst, d, c) for d, c in enumerate(coords)])) for coords in places]
        for x, c, bit, (ptr, inside), key in zip(scalars, compared, masked, addressed, static):
            if key in first:  # the thread holds this element twice: combined once, its old value shared
                olds.append(olds[first[key]])
                continue
            first[key] = len(olds)
            pred = em.all([combiner, inside, bit])
            if pred is False:
                olds.append(zero)
                continue
            if fetch or kind not in _RED_KINDS or op.ordered is not None:
                olds.append(self._atom(kind, x, c, ptr, pred))
            elif kind in ("max", "min") and x.type == Float32Type():
                self._float_extreme(kind, x, ptr, pred)
            else:
                em.insert(frag_fast.frag_red(kind, x, ptr, None if pred is True else pred))
        if fetch:
            self.set_scalars(op.old, self._to_holders(op, olds, bits))

    def _atom(self, kind: str, x: SSAValue, cmp: SSAValue | None, ptr: SSAValue, pred: Bool) -> SSAValue:
        """One ``atom.global`` of ``x`` (an f32 maximum or minimum as integer atoms of its bits, chosen by
        its sign, as :meth:`_float_extreme`); the element's value from before."""
        em = self.em
        atom_kind = "exch" if kind == "xchg" else kind
        if kind in ("max", "min") and x.type == Float32Type():
            bits = em.insert(fast.arith_cast_op(arith.BitcastOp, x, i32)).results[0]
            positive = em.cmp("sge", bits, 0, i32)
            reverse = "umin" if kind == "max" else "umax"
            got = [self._atom_op(k, bits, None, ptr, em.land(pred, p))
                   for k, p in ((kind, positive), (reverse, em.lnot(positive)))]
            old = em.select(positive, got[0], got[1], i32)
            return em.insert(fast.arith_cast_op(arith.BitcastOp, old, Float32Type())).results[0]
        return self._atom_op(atom_kind, x, cmp, ptr, pred)

    def _atom_op(self, kind: str, x: SSAValue, cmp: SSAValue | None, ptr: SSAValue, pred: Bool) -> SSAValue:
        if pred is False:
            return self.em.const(0, x.type)
        return self.em.insert(frag_fast.frag_atom(kind, x, ptr, cmp, None if pred is True else pred)).results[0]

    def _to_holders(self, op: t.AtomicOp, olds: list[SSAValue], bits: int) -> list[SSAValue]:
        """Each value's old element from the thread that combined it (this thread's index with ``bits``
        cleared): shuffled within a warp, through shared memory across warps."""
        em = self.em
        if bits == 0:
            return olds
        if bits < WARP:
            source = em.and_(self.lane(i32), ~bits & (WARP - 1), i32)
            return [self._from_lane(x, source) for x in olds]
        for parent in _ancestors(op):
            if ROLE_ATTR in parent.attributes:
                raise RegallocError("tile.atomic gives its old values to the warps "
                                    "that hold copies through shared memory and a block barrier: not inside "
                                    "a warp role's region")
        scratch = self._shared_address(op)
        me = self.thread_index(i32)
        source = em.and_(me, ~bits & (self.threads - 1), i32)
        combines = em.cmp("eq", em.and_(me, bits, i32), 0, i32)
        unique = list(dict.fromkeys(olds))
        slots = exchange_slots(bits, self.threads)  # a combining thread's index is its own slot
        for v, x in enumerate(unique):
            em.insert(frag_fast.frag_store(x, em.gep(scratch, em.add(me, v * slots, i32), x.type, i32),
                                           combines))
        em.insert(frag_fast.tile_barrier())
        got = {x: em.insert(frag_fast.frag_load(em.gep(scratch, em.add(source, v * slots, i32), x.type, i32),
                                                x.type)).results[0] for v, x in enumerate(unique)}
        em.insert(frag_fast.tile_barrier())
        return [got[x] for x in olds]

    def _from_lane(self, x: SSAValue, source: SSAValue) -> SSAValue:
        """``x`` of lane ``source`` (a 64-bit value as its two 32-bit halves, a shuffle each)."""
        em = self.em
        if x.type in (i32, Float32Type()):
            return em.insert(frag_fast.frag_shfl("idx", x, source)).results[0]
        bits = x if x.type == i64 else em.insert(fast.arith_cast_op(arith.BitcastOp, x, i64)).results[0]
        lo, hi = (em.insert(frag_fast.frag_shfl("idx", h, source)).results[0]
                  for h in (em.cast(bits, i32), em.cast(em.shr(bits, 32, i64), i32)))
        lo = em.and_(em.cast(lo, i64), 0xFFFFFFFF, i64)  # sign-extended: its upper bits cleared
        high = em.insert(fast.arith_binary_op(arith.ShLIOp, em.cast(hi, i64), em.const(32, i64))).results[0]
        moved = em.insert(fast.arith_binary_op(arith.OrIOp, lo, high)).results[0]
        return moved if x.type == i64 else em.insert(fast.arith_cast_op(arith.BitcastOp, moved, x.type)).results[0]

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


def _where(op) -> str:
    loc = location_text(op)
    return f" at {loc}" if loc else ""


def _ancestors(op):
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()
