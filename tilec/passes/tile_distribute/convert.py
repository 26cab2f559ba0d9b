"""Layout conversions of ``tile-distribute``: ``tile.convert_layout`` between two fragments of one tile.

The layout algebra decides the path, cheapest first:

1. **the same function** (two spellings of one fragment): the registers are reused;
2. **a permutation within each lane**: every lane already holds the values it needs, at value
   indices that are the same in every lane: the registers are renumbered;
3. **shuffles within a warp** (``shfl.sync.idx``): every thread finds each value it needs in a
   thread of its own warp, and the source lane of each value is a bit-linear function of the
   thread (so is the source value's index where it differs between threads: one shuffle per
   distinct index, then a select) — at most :data:`MAX_SHUFFLES_PER_VALUE` shuffles a value;
4. **through shared memory** (Triton's general path): each lane stores its values at their
   coordinates in a scratch tile of its warp (of the block, for a tile spread over the block's
   warps), the block synchronises, each lane loads the values
   of the new fragment, and the block synchronises again before the scratch is reused.

Paths 1 and 2 cost nothing at run time; path 3 no barrier. A shuffle moves one register a lane,
so a conversion where a lane reads many different values of one other lane (a transpose within the
warp) has no cheap shuffle plan: shared memory moves it with one store and one load a value. 16-bit values travel as f32 (exact),
masks and narrower integers as i32; 64-bit ones take path 4.

Path 4 is also the one of the moves that read a tile's elements in another shape (``tile.reshape``,
``tile.join``, ``tile.split``: :mod:`~tilec.passes.tile_distribute.moves`) where their fragments do not
hold them in the same registers: :meth:`ConvertLowering._through_shared` places each value at its
element's row-major index in the whole tile. Every move of a kernel shares one scratch region.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, i32
from xdsl.ir import Operation

from tilec.dialects import frag_fast
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.ops import register_elements
from tilec.dialects.tile.types import RegisterType, element_bits
from tilec.ir import fast
from tilec.passes.fragments import BitField, Fragment, VectorFragment, join_plan, linear_fields
from tilec.passes.tile_distribute.moves import (join_fragments, moves_as_i32, pass_fragment, reshape_permutation,
                                                split_plan, take_shuffles, whole_value)
from tilec.passes.tile_distribute.values import Regs


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
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
    return tuple(perm)


MAX_SHUFFLES_PER_VALUE = 4
"""Shuffles a conversion may spend on each value before shared memory is the cheaper path."""


@dataclass(frozen=True)
class Shuffle:
    """How a thread gets its value ``v`` of the new fragment: from lane ``base + fields(thread)`` of
    its warp. The value the source lane holds it in is ``index_base + index_fields(t)`` (one of
    ``indices``): of the reader's thread ``t`` (it shuffles each candidate and selects), or, with
    ``sender_selects``, of the source's own thread (each source lane has one reader: it selects the
    value to send, and one shuffle carries it)."""

    base: int
    fields: tuple[BitField, ...]
    index_base: int
    index_fields: tuple[BitField, ...]
    indices: tuple[int, ...]
    sender_selects: bool = False

    @property
    def shuffles(self) -> int:
        return 1 if self.sender_selects else len(self.indices)


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
def shuffle_plan(src: Fragment | VectorFragment, dst: Fragment | VectorFragment) -> list[Shuffle] | None:
    """One :class:`Shuffle` per value of ``dst``, or None when some value lives in another warp, a
    source lane or index is not bit-linear in the thread, or it would take more than
    :data:`MAX_SHUFFLES_PER_VALUE` shuffles a value. Of an element several lanes hold (a broadcast
    source), a thread takes its own copy, or else (when that is not bit-linear) the lowest lane's."""
    threads = dst.tv.num_threads
    if src.tv.num_threads != threads:
        return None
    owners: dict[int, list[tuple[int, int]]] = {}
    for t in range(threads):
        for u in range(src.num_values):
            owners.setdefault(src.tv.offset(t, u), []).append((t, u))
    plan = []
    for v in range(dst.num_values):
        for prefer_own in (True, False):  # a thread's own copy, else the lowest lane: whichever is bit-linear
            sources, indices = [], []
            for t in range(threads):
                mine = [(s, u) for s, u in owners[dst.tv.offset(t, v)] if s >> 5 == t >> 5]
                if not mine:
                    return None
                s, u = min(mine, key=lambda su: (prefer_own and su[0] != t, su[1], su[0]))
                sources.append(s)
                indices.append(u)
            lane_fn = linear_fields([s & 31 for s in sources])
            if lane_fn is not None:
                break
        if lane_fn is None:
            return None
        distinct = tuple(sorted(set(indices)))
        step = None
        if len(distinct) > 1 and len(set(sources)) == threads:  # one reader a source: the sender selects
            sent = [0] * threads
            for t, (s, u) in enumerate(zip(sources, indices)):
                sent[s] = u
            sent_fn = linear_fields(sent)
            if sent_fn is not None:
                step = Shuffle(lane_fn[0], lane_fn[1], sent_fn[0], sent_fn[1], distinct, True)
        if step is None:
            index_fn = linear_fields(indices)
            if index_fn is None:
                return None
            step = Shuffle(lane_fn[0], lane_fn[1], index_fn[0], index_fn[1], distinct)
        plan.append(step)
    total = sum(step.shuffles for step in plan)
    return tuple(plan) if total <= MAX_SHUFFLES_PER_VALUE * dst.num_values else None


def _wrapped(op: Operation):
    """The input's and result's fragments of a ``tile.convert_layout`` as pass-level fragments."""
    ty = op.input.type
    if isinstance(ty, RegisterType):
        return Fragment(ty.dims, ty.fragment), Fragment(ty.dims, op.result.type.fragment)
    orientation = ty.orientation.data
    return VectorFragment(ty.fragment, orientation), VectorFragment(op.result.type.fragment, orientation)


def needs_scratch(op: Operation) -> bool:
    """Whether a ``tile.convert_layout`` (a ``tile.reshape``, ``tile.join``, ``tile.split``) goes through
    shared memory (no cheaper path applies); a ``tile.take`` unless every warp holds its source whole."""
    if isinstance(op, t.TakeOp):  # the elements an index names are known at run time only: shuffles where every
        # warp holds the source whole (a small table), else shared memory
        src = op.source.type
        carried = shuffles_carry(src.element_type) or element_bits(src.element_type) == 64  # as two halves
        return src.fragment is None or not carried or take_shuffles(pass_fragment(src)) is None
    if isinstance(op, t.JoinOp | t.SplitOp):
        if any(v.type.fragment is None for v in (*op.operands, *op.results)):
            return False
        parts, whole = join_fragments(op)
        plan = join_plan if isinstance(op, t.JoinOp) else split_plan
        return plan(parts, whole, op.dim_value, op.interleaved is not None) is None
    src, dst = op.input.type.fragment, op.result.type.fragment
    if isinstance(op, t.ReshapeOp):
        return src is not None and dst is not None and \
            reshape_permutation(pass_fragment(op.input.type), pass_fragment(op.result.type)) is None
    if src is None or dst is None or src.same_function(dst):
        return False
    a, b = _wrapped(op)
    if lane_permutation(a, b) is not None:
        return False
    return not shuffles_carry(op.input.type.element_type) or shuffle_plan(a, b) is None


def shuffles_carry(elem) -> bool:
    """Whether a shuffle moves values of ``elem``: f32 and i32 as they are, f16/bf16 through f32, masks and
    narrower integers through i32 (as :meth:`ConvertLowering.convert_layout` widens them)."""
    return str(elem) in ("f32", "i32", "f16", "bf16") or moves_as_i32(elem)


def per_warp_scratch(op: Operation) -> bool:
    """Whether a conversion's scratch is one tile per warp (its inputs are a warp's tiles: every warp
    holds whole ones) rather than one for the block (an input spans the block's warps: each warp stores
    its part, and the copies of a warp's tile store the same values)."""
    sources = (op.lhs, op.rhs) if isinstance(op, t.JoinOp) else (op.source,) if isinstance(op, t.TakeOp) else (op.input,)
    return all(v.type.fragment.num_threads == 32 for v in sources)


def scratch_bytes(op: Operation, warps: int) -> int:
    """Shared memory a converting op needs: one tile (or vector) per warp, or one for a block's tile."""
    ty = whole_value(op).type
    return (warps if per_warp_scratch(op) else 1) * register_elements(ty) * max(4, element_bits(ty.element_type) // 8)


class ConvertLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: lowers ``tile.convert_layout``, and
    moves values through shared memory for it and for :class:`~tilec.passes.tile_distribute.moves.MoveLowering`."""

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
        # masks (i1) travel as i32: shuffles and shared memory move 32-bit values
        narrow = moves_as_i32(elem)
        if narrow:
            scalars = [self.em.insert(fast.arith_cast_op(arith.ExtUIOp, x, i32)).results[0] for x in scalars]
        work = i32 if narrow else elem
        if scratch is None:
            plan = shuffle_plan(src, dst)
            assert plan is not None, "needs_scratch() said a shuffle plan exists"
            out = self._by_shuffles(plan, scalars, work)
        else:
            out, = self._through_shared(op, [(src, scalars, self._row_major(op.input.type))],
                                        [(dst, self._row_major(op.result.type))], scratch, work)
        if narrow:
            out = [self.em.insert(fast.arith_cast_op(arith.TruncIOp, x, elem)).results[0] for x in out]
        self.set_scalars(op.result, out)

    def _row_major(self, ty):
        """A fragment value's element's row-major index in a tile (vector) of type ``ty``, as an i32."""
        def index(fr, v):
            coords = self._scratch_coords(fr, v)
            return coords[0] if len(coords) == 1 else self.em.add(self.em.mul(coords[0], ty.dims[1], i32), coords[1], i32)
        return index

    def _by_shuffles(self, plan: list[Shuffle], scalars: list, elem) -> list:
        em = self.em
        f32 = Float32Type()
        wide = [x if x.type == f32 or x.type == i32 else
                em.insert(fast.arith_cast_op(arith.ExtFOp, x, f32)).results[0] for x in scalars]
        out = []
        for step in plan:
            lane = em.value(em.add(self.lane_value(step.fields, i32), step.base, i32), i32)
            index = em.add(self.lane_value(step.index_fields, i32), step.index_base, i32)

            def pick(candidates):
                got = None
                for u, x in candidates:
                    got = x if got is None else em.select(em.cmp("eq", index, u, i32), x, got, x.type)
                return got

            if step.sender_selects:
                got = em.insert(frag_fast.frag_shfl("idx", pick((u, wide[u]) for u in step.indices), lane)).results[0]
            else:
                got = pick((u, em.insert(frag_fast.frag_shfl("idx", wide[u], lane)).results[0]) for u in step.indices)
            if got.type != elem:
                got = em.insert(fast.arith_cast_op(arith.TruncFOp, got, elem)).results[0]
            out.append(got)
        return out

    def _through_shared(self, op, sources: list, results: list, scratch, elem) -> list[list]:
        """Each source's values stored at their elements' indices in the scratch tile (its warp's, for a
        warp's tile), a barrier, each result's values loaded from their elements' indices, a barrier
        before the scratch is reused. ``sources``: (fragment, values, index function) each; ``results``:
        (fragment, index function) each; an index function gives a fragment value's element's place in the
        scratch tile's row-major order (a reshape reads the same elements in another shape, a join places
        each part's, a split reads each part's)."""
        em = self.em
        base = scratch
        if per_warp_scratch(op):
            base = em.gep(scratch, em.mul(self.warp(), register_elements(whole_value(op).type), i32), elem, i32)  # warp-uniform
        for fr, scalars, index in sources:
            for v, value in enumerate(scalars):
                em.insert(frag_fast.frag_store(value, em.gep(base, index(fr, v), elem, i32)))
        em.insert(frag_fast.tile_barrier())
        outs = [[em.insert(frag_fast.frag_load(em.gep(base, index(fr, v), elem, i32), elem)).results[0]
                 for v in range(fr.num_values)] for fr, index in results]
        em.insert(frag_fast.tile_barrier())
        return outs

    def _scratch_coords(self, fr, v) -> tuple:
        if isinstance(fr, VectorFragment):
            return (self.em.add(self.lane_value(fr.lane_fields, i32), fr.positions[v], i32),)
        return self.value_coord(fr, v, i32)


__all__ = ["ConvertLowering", "Shuffle", "lane_permutation", "needs_scratch", "scratch_bytes", "shuffle_plan"]
